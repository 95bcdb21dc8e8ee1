"""The sandbox interface: one long-lived untrusted process with limits and a byte pipe to it.

Untrusted code (the runner's zygote and everything it forks) runs only behind this interface.
A backend starts one process tree, shows it read-only mounts and a private writable /scratch,
and gives the trusted side the child's stdin and stdout as the protocol pipe; stderr is kept,
capped, for diagnostics. Both backends (``bwrap`` locally, ``docker`` in production) enforce
the same limits and pass the same test suite (tests/sandbox/), so callers never branch on the
backend.

Inside every sandbox: working directory /scratch (private, writable, size-capped tmpfs),
HOME=/scratch, TMPDIR=/scratch, no network at all (not even the host's loopback), a non-root
uid, nothing else writable, and an environment of only what ``env`` gives plus PATH, HOME,
TMPDIR, LANG, PYTHONDONTWRITEBYTECODE=1 and PYTHONHASHSEED=0.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import BinaryIO, Protocol, Self

BACKEND_NAMES = ("bwrap", "docker")

# Targets a caller may not mount over: the sandbox's own runtime and scratch live there.
RESERVED_TARGETS = ("/", "/scratch", "/proc", "/dev", "/tmp", "/usr", "/opt/sandbox-env")
OPEN_FILES = 256  # RLIMIT_NOFILE of a sandbox, and of every run in one
# ... of a sandbox that keeps its runs apart (spawn's ``apart``), whose zygote holds the pipes of
# every run after the fast pass from before that pass (runner/inside/pipes.py), four fds a run;
# each of its runs lowers its own limit to OPEN_FILES before anything of the student's runs.
# Room for a recheck of every mutant of the pool (some 230 runs).
OPEN_FILES_APART = 2048


def open_files(*, apart: bool) -> int:
    """RLIMIT_NOFILE of a sandbox started with spawn(apart=...)."""
    return OPEN_FILES_APART if apart else OPEN_FILES


@dataclass(frozen=True)
class Limits:
    """What one sandbox may use. Defaults suit one submission's whole grade."""

    memory_bytes: int = 1 << 30  # address-space/memory cap for the whole sandbox
    cpu_seconds: int = 120  # CPU-time cap (rlimit inside; per process)
    wall_seconds: float = 300.0  # wall-clock cap for the whole sandbox, enforced outside
    processes: int = 32  # process/thread count cap
    output_bytes: int = 1 << 20  # cap on what is kept of stderr (stdout is the protocol pipe)
    scratch_bytes: int = 64 << 20  # size of the private writable /scratch tmpfs

    def __post_init__(self) -> None:
        for name in ("memory_bytes", "cpu_seconds", "processes", "output_bytes", "scratch_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive int, got {value!r}")
        if not self.wall_seconds > 0:
            raise ValueError(f"Limits.wall_seconds must be positive, got {self.wall_seconds!r}")


@dataclass(frozen=True)
class Mount:
    """A host file or folder shown read-only inside the sandbox at ``target``.

    The sandbox runs as an unprivileged user, so the source must be readable by others
    (files o+r, folders o+rx); backends refuse a source they could not show.
    """

    source: Path  # host file or folder
    target: str  # absolute path inside the sandbox; always read-only inside

    def __post_init__(self) -> None:
        target = PurePosixPath(self.target)
        if not target.is_absolute() or ".." in target.parts or str(target) != self.target:
            raise ValueError(f"Mount target must be a normalised absolute path, got {self.target!r}")
        for reserved in RESERVED_TARGETS:
            if self.target == reserved or (reserved != "/" and target.is_relative_to(reserved)):
                raise ValueError(f"Mount target {self.target!r} is reserved by the sandbox")


class SandboxUnavailable(Exception):
    """The backend cannot run here (no bwrap binary, no docker engine, no image, no runtime).

    The message says what to install, build or start.
    """


class Termination(enum.Enum):
    """How a sandbox ended. Raw exit codes and signals map to these in one table per backend."""

    EXITED = "exited"  # exited on its own, returncode says how
    WALL_TIMEOUT = "wall_timeout"  # killed by the outside watchdog
    CPU_LIMIT = "cpu_limit"  # SIGXCPU / SIGKILL after the CPU rlimit
    MEMORY_LIMIT = "memory_limit"  # OOM kill or MemoryError exit
    SIGNALLED = "signalled"  # killed by another signal (segfault...)


@dataclass(frozen=True)
class ExitInfo:
    """The outcome of one sandbox, decided by the trusted side from the exit status."""

    termination: Termination
    returncode: int | None  # the exit code, or minus the signal number; None if unknown
    stderr: str  # capped at limits.output_bytes, with a "[... truncated N bytes]" marker
    stderr_truncated: bool
    seconds: float  # wall-clock time from spawn to exit


class SandboxedProcess(abc.ABC):
    """One running sandbox. A context manager: leaving it calls close().

    ``stdout`` carries only what the process writes to its fd 1, so it can be the protocol pipe;
    stderr is collected separately and returned, capped, in ExitInfo.
    """

    stdin: BinaryIO  # trusted side writes the protocol here
    stdout: BinaryIO  # trusted side reads the protocol here (the child's fd 1)

    @abc.abstractmethod
    def wait(self, timeout: float | None = None) -> ExitInfo:
        """Wait for the sandbox to end; raise TimeoutError if ``timeout`` passes first.

        The wall-clock limit is enforced regardless of ``timeout``: once it passes, the
        watchdog kills the sandbox and wait returns WALL_TIMEOUT.
        """

    @abc.abstractmethod
    def kill(self) -> None:
        """Kill every process of the sandbox now (the result still comes from wait())."""

    @abc.abstractmethod
    def close(self) -> None:
        """Kill and clean up; idempotent. Afterwards no process of this sandbox is left."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class SandboxBackend(Protocol):
    """A way to start sandboxes. Get one with get_backend()."""

    name: str  # "bwrap" or "docker"
    python: str  # the python interpreter path inside the sandbox
    keeps_runs_apart: bool  # whether spawn(apart=True) is supported

    def check(self) -> None:
        """Raise SandboxUnavailable with a message saying what to install, build or start."""

    def spawn(
        self,
        argv: Sequence[str],
        *,
        mounts: Sequence[Mount],
        limits: Limits,
        env: Mapping[str, str] | None = None,
        private: bool = False,
        apart: bool = False,
    ) -> SandboxedProcess:
        """Start ``argv`` inside a new sandbox; raise SandboxUnavailable if it cannot run.

        A ``private`` sandbox reads no file another sandbox reads: its Python, libraries and
        mounts are copies of its own, not the host's files. Sandboxes sharing a file share what
        the kernel caches of it (pages read, names looked up), which the other can tell by timing.

        A sandbox that keeps its runs ``apart`` lets its processes make user namespaces, so that
        each run gets a user, pid and mount namespace of its own (grader/runner/inside/apart.py).
        Only for a process that runs no untrusted code but under the runs' filter, which refuses
        them; a backend that cannot (keeps_runs_apart False) raises ValueError."""


def get_backend(name: str) -> SandboxBackend:
    """Return the backend called ``name`` ("bwrap" or "docker"), configured from defaults.

    Backends import lazily so that using one never needs the other's dependencies.
    """
    if name == "bwrap":
        from grader.sandbox.bwrap import BwrapBackend

        return BwrapBackend()
    if name == "docker":
        from grader.sandbox.docker import DockerBackend

        return DockerBackend()
    raise ValueError(f"unknown sandbox backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}")
