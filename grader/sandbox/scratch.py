"""Temporary folders of a grade on the host (the copies of a submission's tests, a private
sandbox's copies of its mounts), held with a lease so that the folders of a grader killed
outright are not left behind.

A grader removes its folders as it unwinds, SIGTERM and Ctrl-C included. A SIGKILL (the OOM
killer, a supervisor's last resort) gives it no chance, and the folders, world-readable because
a sandbox's uid reads them, would stay in the temporary folder for good. So each holds a lock
(flock) on a file of its own for as long as its grader lives, and the kernel drops that lock with
its holder: the next grade removes every folder whose lock it can take.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "grader-"  # every held folder's name starts so (then its kind, as mkdtemp's prefix)
LEASE_FILE = ".grader-lease"  # in the folder, beside what the sandboxes mount (never the folder itself)
GRACE_SECONDS = 60.0  # a lease younger than this may be between its creation and its lock: left alone


class HeldFolder:
    """A temporary folder and the lease that says its grader lives; ``remove()`` ends both."""

    def __init__(self, kind: str, parent: Path | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-", dir=parent))  # the temporary folder by default
        self.path.chmod(0o755)
        self._lease: int | None = os.open(self.path / LEASE_FILE, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC,
                                          0o600)
        fcntl.flock(self._lease, fcntl.LOCK_EX)  # a new file: nobody else can hold it yet

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)  # the lease last, so a sweep never sees it free
        if self._lease is not None:
            os.close(self._lease)
            self._lease = None


@contextmanager
def held_folder(kind: str, parent: Path | None = None) -> Iterator[Path]:
    folder = HeldFolder(kind, parent)
    try:
        yield folder.path
    finally:
        folder.remove()


def sweep_orphans(parent: Path | None = None, *, grace: float = GRACE_SECONDS) -> list[Path]:
    """Remove the held folders in ``parent`` (the temporary folder by default) whose grader died,
    and say which. A folder without a lease file, of another owner, or whose lease is held or
    younger than ``grace`` is not touched."""
    try:
        candidates = list(Path(parent or tempfile.gettempdir()).glob(f"{PREFIX}*"))
    except OSError:
        return []
    return [folder for folder in candidates if _removed_if_orphaned(folder, grace)]


def _removed_if_orphaned(folder: Path, grace: float) -> bool:
    try:
        lease = os.open(folder / LEASE_FILE, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False  # not a held folder, or not ours to open
    try:
        status = os.fstat(lease)
        if status.st_uid != os.geteuid() or time.time() - status.st_mtime < grace:
            return False
        fcntl.flock(lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
        shutil.rmtree(folder, ignore_errors=True)  # with the lease held: another sweep finds it taken
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(lease)
