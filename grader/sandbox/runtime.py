"""Setup for the bwrap backend: the sandbox-only Python environment.

Run once per machine (idempotent, quick when done): ``python -m grader.sandbox.runtime``.

Why a separate environment: untrusted code must see Python with numpy and pytest only
(requirements-sandbox.txt), not the grader's venv. It is a venv over Debian's /usr/bin/python3.11,
because /usr is bound into every sandbox anyway and this is the interpreter the Docker image
uses too; the grader's own pyenv interpreter lives under /root, which the sandbox must not see,
and links a libpython from there. The venv is bound read-only at /opt/sandbox-env inside.

When the grader runs as root, each sandbox runs as a host uid of its own that owns nothing
(grader/sandbox/uids.py), so a sandbox escape lands on an unprivileged user; no account is needed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = REPO_ROOT / "requirements-sandbox.txt"
SYSTEM_PYTHON = Path("/usr/bin/python3.11")
ENV_DIR_VARIABLE = "GRADER_SANDBOX_ENV"
STAMP_NAME = ".requirements.sha256"  # records which requirements the venv was built from


def default_env_dir() -> Path:
    """Where the sandbox venv lives on the host: $GRADER_SANDBOX_ENV or <repo>/var/sandbox-env."""
    return Path(os.environ.get(ENV_DIR_VARIABLE, REPO_ROOT / "var" / "sandbox-env"))


def requirements_digest() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()


def env_is_current(env_dir: Path) -> bool:
    stamp = env_dir / STAMP_NAME
    return (env_dir / "bin" / "python").exists() and stamp.exists() and stamp.read_text() == requirements_digest()


def build_env(env_dir: Path) -> None:
    """(Re)build the sandbox venv from requirements-sandbox.txt unless it is already current."""
    if env_is_current(env_dir):
        return
    if not SYSTEM_PYTHON.exists():
        raise FileNotFoundError(f"{SYSTEM_PYTHON} is missing: apt-get install -y python3.11")
    subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", "--clear", str(env_dir)], check=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet",
         "--python", str(env_dir / "bin" / "python"), "install", "-r", str(REQUIREMENTS)],
        check=True,
    )
    make_world_readable(env_dir)
    (env_dir / STAMP_NAME).write_text(requirements_digest())


def make_world_readable(root: Path) -> None:
    """The sandbox's uid reads the venv through a bind mount, so others need r (and x on folders)."""
    for folder, _, files in os.walk(root):
        os.chmod(folder, os.stat(folder).st_mode | 0o555)
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o444)


def main() -> None:
    env_dir = default_env_dir()
    build_env(env_dir)
    print(f"sandbox environment: {env_dir}")


if __name__ == "__main__":
    main()
