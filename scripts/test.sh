#!/usr/bin/env bash
# Set up everything the tests use and run them: the dev setup, a Docker engine and the sandbox
# image (so both sandbox backends are tested), then pytest over tests/. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh --dev

if ! docker info >/dev/null 2>&1; then
    if [[ $(id -u) == 0 ]] && command -v dockerd >/dev/null; then
        echo "test.sh: starting dockerd"
        mkdir -p var
        nohup dockerd >var/dockerd.log 2>&1 &
        for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    fi
fi
if docker info >/dev/null 2>&1; then
    bash docker/sandbox/build.sh
else
    echo "test.sh: no Docker engine; the docker-marked tests will be skipped" >&2
fi

exec .venv/bin/python -m pytest tests "$@"
