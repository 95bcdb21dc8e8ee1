"""Per-sandbox cgroups (v1 ``pids`` and ``memory``) for the bwrap backend, when the host allows.

Rlimits are per process (RLIMIT_AS) or per host uid (RLIMIT_NPROC), so they cannot cap a whole
sandbox, and concurrent sandboxes run as the same host user would share one process budget. A
cgroup caps the sandbox's process tree as a whole and lets the trusted side see OOM kills and
kill every member. The cgroups are made under the grader's own cgroup, so the sandbox stays
inside whatever limits the grader itself runs under.
"""

from __future__ import annotations

import os
import signal
import uuid
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("pids", "memory")


def own_cgroup(controller: str) -> Path | None:
    """The grader process's own cgroup folder for a v1 controller, or None if not mounted."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            folder = CGROUP_ROOT / controller / path.lstrip("/")
            return folder if (folder / "cgroup.procs").exists() else None
    return None


def available() -> bool:
    """True when both v1 controllers are mounted and we may create child cgroups (root)."""
    if os.geteuid() != 0:
        return False
    return all(
        folder is not None and os.access(folder, os.W_OK)
        for folder in (own_cgroup(controller) for controller in CONTROLLERS)
    )


@dataclass(frozen=True)
class SandboxCgroup:
    """One sandbox's pair of cgroups; processes join by writing their pid to ``procs_files``."""

    folders: tuple[Path, ...]  # one per controller, in CONTROLLERS order

    @classmethod
    def create(cls, *, memory_bytes: int, processes: int) -> SandboxCgroup:
        name = f"grader-sandbox-{uuid.uuid4().hex[:12]}"
        folders = []
        for controller in CONTROLLERS:
            parent = own_cgroup(controller)
            if parent is None:
                raise OSError(f"cgroup controller {controller!r} is not mounted")
            folder = parent / name
            folder.mkdir()
            folders.append(folder)
        cgroup = cls(tuple(folders))
        pids, memory = cgroup.folders
        (pids / "pids.max").write_text(str(processes))
        (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
        memsw = memory / "memory.memsw.limit_in_bytes"  # only present with swap accounting
        if memsw.exists():
            memsw.write_text(str(memory_bytes))
        return cgroup

    @property
    def procs_files(self) -> tuple[Path, ...]:
        return tuple(folder / "cgroup.procs" for folder in self.folders)

    def members(self) -> set[int]:
        """Pids of every process still in the sandbox's cgroups."""
        pids: set[int] = set()
        for procs in self.procs_files:
            if procs.exists():
                pids.update(int(pid) for pid in procs.read_text().split())
        return pids

    def oom_killed(self) -> bool:
        """True once the kernel OOM-killed a process for exceeding this sandbox's memory cap."""
        control = self.folders[CONTROLLERS.index("memory")] / "memory.oom_control"
        for line in control.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value) > 0
        return False

    def kill_members(self) -> None:
        for pid in self.members():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def remove(self) -> bool:
        """Remove the cgroups once empty; False (and nothing removed yet) while members remain."""
        if self.members():
            return False
        for folder in self.folders:
            if folder.exists():
                folder.rmdir()
        return True
