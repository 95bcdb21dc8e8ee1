#!/usr/bin/env bash
# Set up the grader on this machine, idempotently: system packages (when root), the Python venv
# (.venv, pinned requirements), and the bwrap sandbox runtime (a numpy+pytest environment for
# untrusted code). `--dev` adds what the test suite needs: Redis, Docker, mutmut,
# torch for the fixture oracle.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

dev=0
for arg in "$@"; do
    case "$arg" in
        --dev) dev=1 ;;
        -h|--help) echo "usage: scripts/setup.sh [--dev]"; exit 0 ;;
        *) echo "setup.sh: unknown argument $arg (usage: scripts/setup.sh [--dev])" >&2; exit 2 ;;
    esac
done

packages=(bubblewrap python3 python3-venv)
[[ $dev == 1 ]] && packages+=(redis-server docker.io debootstrap patch chromium)
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if (( ${#missing[@]} )); then
    if [[ $(id -u) != 0 ]]; then
        echo "setup.sh: please install these Debian packages first: ${missing[*]}" >&2
        exit 1
    fi
    echo "setup.sh: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[[ -x .venv/bin/python ]] || python3 -m venv .venv
requirements=requirements.txt
[[ $dev == 1 ]] && requirements=requirements-dev.txt
.venv/bin/python -m pip install -q --disable-pip-version-check -r "$requirements"
[[ $dev == 1 ]] && .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-oracle.txt
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e .
.venv/bin/python -m grader.sandbox.runtime
# This installation's grade key (var/grade-key, unless GRADER_KEY is set), made once here so that an
# image built by this script (Gradescope's, a service's) grades every submission with one key.
.venv/bin/python -c 'from grader.grade_key import grade_key; grade_key()'
