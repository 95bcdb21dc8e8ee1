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
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = REPO_ROOT / "requirements-sandbox.txt"
SYSTEM_PYTHON = Path("/usr/bin/python3.11")
ENV_DIR_VARIABLE = "GRADER_SANDBOX_ENV"
SYSTEM_ROOTS = ("usr", "lib", "lib64")  # where the system's libraries are (merged /usr: all under /usr)
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


def private_copy_dir(env_dir: Path) -> Path:
    """Where the private copy (see build_private_copy) of ``env_dir`` and of Python lives."""
    return env_dir.with_name(env_dir.name + "-private")


def private_copy_is_current(env_dir: Path) -> bool:
    copy = private_copy_dir(env_dir)
    return env_is_current(copy / "env") and (copy / "usr" / "bin" / SYSTEM_PYTHON.name).exists()


def build_private_copy(env_dir: Path) -> None:
    """A copy, not a bind, of the sandbox venv and of what its Python needs from /usr (the
    interpreter, the standard library, the shared libraries they and the venv's extensions load),
    for the sandbox that runs the student's suite warm.

    Files both sandboxes of a grade read through binds share the kernel's caches: a name one
    looks up, a page one reads, the other can tell by timing (about 5 µs against 2, 100 µs against
    1). With its own copies, what the runs alone leave in those caches is nowhere the other
    sandbox can look. Rebuilt with the venv."""
    if private_copy_is_current(env_dir):
        return
    copy = private_copy_dir(env_dir)
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(env_dir, copy / "env", symlinks=True)
    stdlib = SYSTEM_PYTHON.parent.parent / "lib" / SYSTEM_PYTHON.name
    binaries = [SYSTEM_PYTHON, *stdlib.rglob("*.so"), *env_dir.rglob("*.so")]
    for source in [SYSTEM_PYTHON, *_libraries_loaded_by(binaries)]:
        _copy_under_usr(source, copy / "usr")
    shutil.copytree(stdlib, copy / "usr" / "lib" / stdlib.name, symlinks=True)
    make_world_readable(copy)


def _libraries_loaded_by(binaries: list[Path]) -> set[Path]:
    """The system's shared libraries the binaries load (ldd), each as named and as resolved."""
    found: set[Path] = set()
    for binary in binaries:
        listed = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=False).stdout
        found |= {path for match in re.finditer(r"(/\S+) \(0x", listed)
                  for path in (Path(match.group(1)), Path(match.group(1)).resolve())}
    return {path for path in found if path.parts[1] in SYSTEM_ROOTS}


def _copy_under_usr(source: Path, usr: Path) -> None:
    """``source`` at its place under a /usr whose /lib and /lib64 are links into it (merged /usr)."""
    parts = source.parts[1:]
    target = usr.joinpath(*(parts[1:] if parts[0] == "usr" else parts))
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_symlink():
        target.unlink(missing_ok=True)
        target.symlink_to(os.readlink(source))
    elif not target.exists():
        shutil.copy2(source, target)


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
    build_private_copy(env_dir)
    print(f"sandbox environment: {env_dir} (and a private copy with Python's own: {private_copy_dir(env_dir)})")


if __name__ == "__main__":
    main()
