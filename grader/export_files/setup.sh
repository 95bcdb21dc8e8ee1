#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu 22.04), with the
# zip extracted to /autograder/source. The grader needs Python 3.11 (Debian's /usr/bin/python3.11
# also runs the sandboxed tests) and bubblewrap; scripts/setup.sh does the rest: the pinned venv
# and the sandbox's own numpy+pytest environment.
set -euo pipefail
cd /autograder/source
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11 python3.11-venv bubblewrap >/dev/null
[[ -x .venv/bin/python ]] || python3.11 -m venv .venv
bash scripts/setup.sh
