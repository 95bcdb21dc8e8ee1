#!/usr/bin/env bash
# Build the sandbox image that grader/sandbox/docker.py runs untrusted code in.
#
# Idempotent and quick when nothing changed: the image carries a label with a hash of its inputs
# (Dockerfile, requirements-sandbox.txt, base image name, pip version) and is rebuilt only when
# that hash changes. No registry can be pulled from on the build machine, so:
#   1. the base image (Debian bookworm, whose python3 is 3.11) is debootstrapped from the Debian
#      mirror apt uses and `docker import`ed, unless BASE_IMAGE names another image
#      (production: BASE_IMAGE=python:3.11-slim);
#   2. numpy, pytest (and pip, to install them) are downloaded on the host as binary wheels;
#   3. the Dockerfile installs from that wheelhouse with no network.
# Also builds <image>-private, the same files in a layer of their own (build_private_copy).
# Environment: SANDBOX_IMAGE (default l43-grader-sandbox:latest), BASE_IMAGE, DEBIAN_MIRROR.
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$REPO_ROOT/docker/sandbox"
IMAGE=${SANDBOX_IMAGE:-l43-grader-sandbox:latest}
# IMPORTANT: keep this naming in sync with grader/sandbox/docker.py (private_image).
PRIVATE_IMAGE=${IMAGE%:*}-private:${IMAGE##*:}
LOCAL_BASE=l43-grader-base:bookworm
BASE_IMAGE=${BASE_IMAGE:-$LOCAL_BASE}
WHEELHOUSE="$REPO_ROOT/.wheelhouse"
PIP_VERSION=26.3
# IMPORTANT: keep this label key in sync with grader/sandbox/docker.py (INPUTS_LABEL).
INPUTS_LABEL=org.l43-grader.sandbox.inputs
PYTHON=${PYTHON:-python3}

die() { echo "build-sandbox-image: $*" >&2; exit 1; }

inputs_hash() {
    { cat "$HERE/Dockerfile" "$REPO_ROOT/requirements-sandbox.txt"; echo "$BASE_IMAGE $PIP_VERSION"; } \
        | sha256sum | cut -c1-16
}

debian_mirror() {
    if [[ -n ${DEBIAN_MIRROR:-} ]]; then echo "$DEBIAN_MIRROR"; return; fi
    local uri
    uri=$(grep -hE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
        | grep -v security | head -n1 | awk '{print $2}') || true
    echo "${uri:-http://deb.debian.org/debian}"
}

build_local_base() {
    command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install -y debootstrap"
    local rootfs
    rootfs=$(mktemp -d /var/tmp/l43-base.XXXXXX)
    # The path expanded now, and on EXIT (a failed debootstrap ends the script under set -e): a
    # RETURN trap stayed set after this function and fired at the next function's return, where
    # $rootfs was unbound, failing a fresh machine's first build under set -u.
    # shellcheck disable=SC2064
    trap "rm -rf '$rootfs'" EXIT
    echo "build-sandbox-image: debootstrapping Debian bookworm from $(debian_mirror) ..."
    debootstrap --variant=minbase --include=python3 bookworm "$rootfs" "$(debian_mirror)" >/dev/null
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import --change 'CMD ["/usr/bin/python3"]' - "$LOCAL_BASE" >/dev/null
    rm -rf "$rootfs"
    trap - EXIT
}

download_wheelhouse() {
    mkdir -p "$WHEELHOUSE"
    "$PYTHON" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
        --python-version 3.11 --implementation cp --abi cp311 \
        --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
        -d "$WHEELHOUSE" -r "$REPO_ROOT/requirements-sandbox.txt" "pip==$PIP_VERSION"
}

label_of() {
    docker image inspect --format "{{ index .Config.Labels \"$INPUTS_LABEL\" }}" "$1" 2>/dev/null || true
}

# The same files as a single layer of their own, for the sandbox that runs the student's suite
# warm: containers of one image share its layers' files, and with them what the kernel caches of
# them (pages read, names looked up), which one container can tell from another by timing.
build_private_copy() {
    local want=$1 container
    container=$(docker create "$IMAGE")
    docker export "$container" | docker import --change "USER 10001:10001" --change "WORKDIR /scratch" \
        --change "LABEL $INPUTS_LABEL=$want" - "$PRIVATE_IMAGE" >/dev/null
    docker rm "$container" >/dev/null
    echo "build-sandbox-image: built $PRIVATE_IMAGE, a copy of $IMAGE in a layer of its own"
}

main() {
    docker info >/dev/null 2>&1 || die "the Docker engine is not reachable: start dockerd (or the docker service)"
    local want
    want=$(inputs_hash)
    if [[ $(label_of "$IMAGE") == "$want" ]]; then
        echo "build-sandbox-image: $IMAGE is up to date ($want)"
        [[ $(label_of "$PRIVATE_IMAGE") == "$want" ]] || build_private_copy "$want"
        return
    fi
    if [[ $BASE_IMAGE == "$LOCAL_BASE" ]] && ! docker image inspect "$LOCAL_BASE" >/dev/null 2>&1; then
        build_local_base
    fi
    download_wheelhouse
    BUILD_CONTEXT=$(mktemp -d)
    trap 'rm -rf "$BUILD_CONTEXT"' EXIT
    cp "$HERE/Dockerfile" "$REPO_ROOT/requirements-sandbox.txt" "$BUILD_CONTEXT/"
    cp -r "$WHEELHOUSE" "$BUILD_CONTEXT/wheelhouse"
    docker build --quiet --build-arg "BASE_IMAGE=$BASE_IMAGE" --label "$INPUTS_LABEL=$want" \
        -t "$IMAGE" "$BUILD_CONTEXT" >/dev/null
    echo "build-sandbox-image: built $IMAGE ($want)"
    build_private_copy "$want"
}

main "$@"
