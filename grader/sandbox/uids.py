"""A host uid of its own for each sandbox, leased from a range for the sandbox's lifetime.

The kernel keeps some counts per user whatever the namespaces: the pages of every pipe the user
holds (``pipe-user-pages-soft``), inotify instances, POSIX message-queue bytes, the processes
RLIMIT_NPROC counts. Sandboxes of one uid share them, so a process in one can signal to another
by how much of a count it holds (a digest of the reference once crossed from the fast sandbox to
the runs alone that way), and one can use up what another needs: between the two sandboxes of a
grade, and between grades of different students running at the same time. So every sandbox runs
as a uid no live sandbox has and no account owns, which also owns no file on the host.

A lease is a lock (flock) on a file named after the uid, held as long as the sandbox lives; the
kernel drops it if the grader dies, so nothing is leaked by a crash. So a sandbox whose uid can be
leased again has nobody left to end it (the Docker backend removes such containers), as far as
the graders that share the lock folder know: the folder's realm names them.
"""

from __future__ import annotations

import fcntl
import os
import random
import uuid
from pathlib import Path

from grader.sandbox import SandboxUnavailable
from grader.sandbox.runtime import REPO_ROOT

FIRST_UID = 1_600_000_000  # far above accounts (1000+) and the usual subordinate ranges (100000+)
UIDS = 4096  # lock files stay (see release), so at most this many; far more than sandboxes at once
ROOT_LOCKS = Path("/run/grader-sandbox-uids")
ATTEMPTS = 64
REALM_FILE = "realm"


class UidLease:
    """One leased uid; ``release()`` once nothing of the sandbox runs any more."""

    def __init__(self, uid: int, lock: int) -> None:
        self.uid = uid
        self._lock: int | None = lock

    def release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # the file stays: removing it would race with the next leaser
            self._lock = None


def lease_uid(locks: Path | None = None) -> UidLease:
    """A uid of the range that no other live sandbox holds, drawn at random."""
    folder = _lock_folder(locks)
    draw = random.SystemRandom()
    for _ in range(ATTEMPTS):
        lease = _lease(folder, FIRST_UID + draw.randrange(UIDS))
        if lease is not None:
            return lease
    raise SandboxUnavailable(f"no free sandbox uid after {ATTEMPTS} draws: too many sandboxes at once")


def try_lease(uid: int, locks: Path | None = None) -> UidLease | None:
    """``uid``'s lease, or None while a live sandbox holds it (or the uid is not of the range)."""
    if not FIRST_UID <= uid < FIRST_UID + UIDS:
        return None
    return _lease(_lock_folder(locks), uid)


def lease_realm(locks: Path | None = None) -> str:
    """The lock folder's name for its leases, made by its first user: graders that share the folder
    (and only they) can tell from a lease whether a sandbox of the realm still has a grader."""
    folder = _lock_folder(locks)
    path = folder / REALM_FILE
    if not path.exists():
        name = uuid.uuid4().hex
        draft = folder / f".{REALM_FILE}-{name}"
        draft.write_text(name)
        try:
            os.link(draft, path)  # all or nothing: a concurrent first user's name wins, whole
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text()


def _lease(folder: Path, uid: int) -> UidLease | None:
    lock = os.open(folder / str(uid), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        return None
    return UidLease(uid, lock)


def _lock_folder(locks: Path | None) -> Path:
    """``locks``, made if need be; by default /run's when root (shared by every grader process of
    the machine), else this checkout's."""
    folder = locks or (ROOT_LOCKS if os.geteuid() == 0 else REPO_ROOT / "var" / "sandbox-uids")
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise SandboxUnavailable(f"cannot keep sandbox uid leases in {folder}: {exc}") from None
    return folder
