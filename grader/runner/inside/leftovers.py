"""Ending whatever a run leaves running or lying around, before the zygote answers for it.

A run's child can leave processes behind in sessions of their own (setsid), each re-parented to
the zygote (a subreaper) when its parent dies, and each forking again as fast as it can: a chain
deeper than any number of sweeps of the zygote's children. Such a process could serve the next
run what this one saw (a luong.py left a UDP store in which the student's tests kept the
reference's outputs), so nothing of a run may outlive its answer. Nor may its files: a folder it
made unreadable would stay in the scratch, where the next run could measure it (statvfs).
"""

from __future__ import annotations

import os
import signal
import stat
import time
from collections.abc import Collection
from pathlib import Path

LEFTOVER_SECONDS = 5.0  # for what a finished run left running to die once killed


def end(running: Collection[int]) -> None:
    """Kill and reap every process of the sandbox that descends from no pid in ``running``.

    When no run is in flight (always, in the clean sandbox: one child at a time), every process
    but the zygote and pid 1 is a leftover, and kill(-1) ends them all at once: the kernel signals
    them under the task-list lock that fork takes too, so no fork gets past it. With runs in
    flight (the fast sandbox, which the student's conftest can subvert anyway), leftovers are
    killed by pid, the whole tree each round, until a round finds none.
    """
    deadline = time.monotonic() + LEFTOVER_SECONDS
    while True:
        if not running:
            _kill_all_but_init()
        found = _leftovers(running)
        if not found:
            return
        if time.monotonic() > deadline:
            if running:
                return  # the next kill(-1), when no run is in flight, ends them
            # The clean sandbox must not run anything beside a survivor: end the grade instead.
            raise RuntimeError(f"processes left by a run would not end: {sorted(found)}")
        if running:
            for pid in found:
                kill_group(pid)
        for pid in (pid for pid, parent in found.items() if parent == os.getpid()):
            _reap_if_dead(pid)
        time.sleep(0.0005)


def _leftovers(running: Collection[int]) -> dict[int, int]:
    """Parent pid by pid of every process, zombies included, but the zygote, pid 1 and what
    descends from a run in flight. One whose parent was reaped during the scan counts: it has
    been re-parented to the zygote meanwhile."""
    parents: dict[int, int] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                parents[int(entry)] = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    spared = {os.getpid(), os.getppid()}
    return {pid: parent for pid, parent in parents.items()
            if pid not in spared and not _in_flight(pid, parents, running)}


def _in_flight(pid: int, parents: dict[int, int], running: Collection[int]) -> bool:
    """Whether ``pid`` descends from a run in flight, by ``parents``. The scan is no snapshot:
    with pids reused during it, a walk up could loop, so it takes one step per process at most."""
    for _ in range(len(parents)):
        if pid in running or pid not in parents:
            break
        pid = parents[pid]
    return pid in running


def remove_files(path: Path) -> None:
    """Remove ``path`` and everything below it, whatever permissions the run gave them (the
    zygote is their owner, so it can give them back); RuntimeError if anything remains.

    It walks by relative names from inside each folder, never by a path from the top: a run that
    chained folders deeper than PATH_MAX (mkdir with dir_fd) made every path-based call fail
    (ENAMETOOLONG), and the clean zygote died quoting a path whose names the run had written
    (red team, round 29). No recursion either, for the same depth."""
    if path.is_dir() and not path.is_symlink():
        home = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        try:
            _remove_tree(path)
        finally:
            os.fchdir(home)
            os.close(home)
    else:
        path.unlink(missing_ok=True)
    if os.path.lexists(path):
        raise RuntimeError(f"what a run left in {path} would not go")


def _remove_tree(top: Path) -> None:
    """Empty and remove ``top``, changing into each folder (made searchable first) to empty it.

    The run that made the tree is over and its processes ended, so nothing moves a folder
    while this walks it; ".." is the folder it came from."""
    os.chmod(top, stat.S_IRWXU)
    os.chdir(top)
    below: list[str] = []  # the names of the folders entered, from top
    while True:
        folder = _first_folder_emptying_the_rest()
        if folder is not None:
            os.chmod(folder, stat.S_IRWXU)
            os.chdir(folder)
            below.append(folder)
        elif below:
            os.chdir("..")
            os.rmdir(below.pop())
        else:
            break
    os.chdir("..")
    os.rmdir(top.name)


def _first_folder_emptying_the_rest() -> str | None:
    """Unlink what the working folder holds up to its first folder, and return that folder's name."""
    with os.scandir(".") as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                return entry.name
            os.unlink(entry.name)
    return None


def kill_group(pid: int) -> None:
    """SIGKILL to ``pid``'s process group, and to ``pid`` itself should it have left the group."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _kill_all_but_init() -> None:
    """kill(-1, SIGKILL): every process of the zygote's pid namespace but pid 1 and the zygote
    (see check_alone_with_init)."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass  # there was none


def _reap_if_dead(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass  # reaped already


def check_alone_with_init() -> None:
    """Refuse to serve unless kill(-1) reaches only this sandbox's processes (see end).

    kill(-1) spares the caller and its pid namespace's pid 1 only, so the zygote must have no other
    ancestor there. bwrap's pid 1 and docker-init are the zygote's parent, and run as the sandbox's
    user; a host's init (were the zygote ever run outside a pid namespace of its own) runs as root.
    """
    if os.getppid() != 1 or os.stat("/proc/1").st_uid != os.getuid():
        raise RuntimeError("the zygote must be the child of its own pid namespace's pid 1")
