"""What both backends share about how a sandbox ended: the exit table and the stderr cap.

IMPORTANT: bwrap and Docker both report a process killed by signal N as exit code 128 + N, so
a process that calls ``exit(128 + N)`` looks killed by N. The table below treats such codes as
signals, as shells do; it only ever makes an untrusted run look worse, never better.
"""

from __future__ import annotations

import io
import signal
import threading
from dataclasses import dataclass

from grader.sandbox import Limits, Termination

# Signals whose meaning is a limit; any other signal is Termination.SIGNALLED.
SIGNAL_TERMINATIONS = {
    signal.SIGXCPU: Termination.CPU_LIMIT,  # the soft RLIMIT_CPU
}
SIGNAL_EXIT_BASE = 128  # exit code = 128 + signal number, for a signalled process
MEMORY_ERROR_LINE = b"MemoryError"  # how CPython's last stderr line starts on an uncaught MemoryError


@dataclass(frozen=True)
class RawExit:
    """What the trusted side observed when a sandbox ended, before classification."""

    exit_code: int  # as reported by the backend: 0-255, signals as 128 + N
    wall_timeout: bool  # the watchdog killed it
    oom_killed: bool  # the kernel's OOM killer acted inside its memory cap
    cpu_seconds: float | None  # CPU time used by the sandbox's processes, when the backend knows


def signal_of(exit_code: int) -> signal.Signals | None:
    """The signal an exit code stands for, or None for an ordinary exit."""
    number = exit_code - SIGNAL_EXIT_BASE
    if 0 < number < signal.NSIG:
        try:
            return signal.Signals(number)
        except ValueError:
            return None
    return None


def classify(raw: RawExit, limits: Limits, stderr_tail: bytes) -> tuple[Termination, int]:
    """Map a raw exit to (termination, returncode); returncode is -N for signal N.

    A MemoryError exit is read from the last stderr line: that is text the untrusted process
    controls, so faking it can only turn its own run into a MEMORY_LIMIT failure.
    """
    sig = signal_of(raw.exit_code)
    returncode = -int(sig) if sig is not None else raw.exit_code
    if raw.wall_timeout:
        return Termination.WALL_TIMEOUT, returncode
    if raw.oom_killed:
        return Termination.MEMORY_LIMIT, returncode
    if sig is not None:
        if sig in SIGNAL_TERMINATIONS:
            return SIGNAL_TERMINATIONS[sig], returncode
        if sig == signal.SIGKILL and raw.cpu_seconds is not None and raw.cpu_seconds >= limits.cpu_seconds:
            return Termination.CPU_LIMIT, returncode  # the hard RLIMIT_CPU, after SIGXCPU was ignored
        return Termination.SIGNALLED, returncode
    last_line = stderr_tail.rstrip().rsplit(b"\n", 1)[-1]
    if raw.exit_code == 1 and last_line.startswith(MEMORY_ERROR_LINE):
        return Termination.MEMORY_LIMIT, returncode
    return Termination.EXITED, returncode


class CappedOutput:
    """Keeps the first ``cap`` bytes written and counts the rest, thread-safely.

    The head is kept rather than the tail because the first error usually explains the rest.
    """

    TAIL_BYTES = 4096  # the end is also kept, separately, for classify()

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._head = bytearray()
        self._tail = b""
        self._dropped = 0
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            room = self._cap - len(self._head)
            self._head += data[:room]
            self._dropped += max(0, len(data) - max(room, 0))
            self._tail = (self._tail + data)[-self.TAIL_BYTES :]

    def drain(self, stream: io.BufferedReader) -> None:
        """Copy ``stream`` in until EOF; meant as a thread's target."""
        while chunk := stream.read1(65536):
            self.write(chunk)

    @property
    def truncated(self) -> bool:
        return self._dropped > 0

    @property
    def tail(self) -> bytes:
        return self._tail

    def text(self) -> str:
        """The kept head as text, with a marker saying how much was dropped."""
        with self._lock:
            text = self._head.decode("utf-8", errors="replace")
            if self._dropped:
                text += f"\n[... truncated {self._dropped} bytes]"
            return text
