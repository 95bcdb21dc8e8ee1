"""The lifecycle both backends share: reaper thread, wall-clock watchdog, capped stderr, ExitInfo.

A backend subclass starts its process tree, then calls ``_watch()``; it supplies how to block
until the tree has ended (``_reap``), how to kill it, and how to clean up after it.
"""

from __future__ import annotations

import abc
import threading
import time

from grader.sandbox import ExitInfo, Limits, SandboxedProcess
from grader.sandbox._outcome import CappedOutput, RawExit, classify

CLOSE_GRACE_SECONDS = 10.0  # how long close() waits for a killed tree before it escalates


class WatchedProcess(SandboxedProcess):
    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._stderr = CappedOutput(limits.output_bytes)
        self._started = time.monotonic()
        self._seconds = 0.0
        self._raw: RawExit | None = None
        self._info: ExitInfo | None = None
        self._exited = threading.Event()
        self._wall_timeout = threading.Event()
        self._closed = False
        self._watchdog = threading.Timer(limits.wall_seconds, self._on_wall_timeout)
        self._watchdog.daemon = True
        self._reaper = threading.Thread(target=self._reap_and_record, daemon=True)

    def _watch(self) -> None:
        """Start the watchdog and the reaper; call once the process tree is running."""
        self._watchdog.start()
        self._reaper.start()

    @abc.abstractmethod
    def _reap(self) -> tuple[int, bool, float | None]:
        """Block until the tree has ended; return (exit code 0-255, oom killed, CPU seconds)."""

    @abc.abstractmethod
    def _join_output(self) -> None:
        """Wait until all stderr has been collected (the tree has ended)."""

    @abc.abstractmethod
    def _cleanup(self) -> None:
        """Release what the sandbox held, after its tree has ended; must leave nothing running."""

    @abc.abstractmethod
    def _force_kill(self) -> None:
        """Last resort when kill() did not end the tree within the grace period."""

    def _reap_and_record(self) -> None:
        exit_code, oom_killed, cpu_seconds = self._reap()
        self._seconds = time.monotonic() - self._started
        self._watchdog.cancel()
        self._raw = RawExit(exit_code, self._wall_timeout.is_set(), oom_killed, cpu_seconds)
        self._exited.set()

    def _on_wall_timeout(self) -> None:
        self._wall_timeout.set()
        self.kill()

    def wait(self, timeout: float | None = None) -> ExitInfo:
        if not self._exited.wait(timeout):
            raise TimeoutError(f"the sandbox is still running after {timeout} s")
        if self._info is None:
            self._join_output()
            assert self._raw is not None  # set before _exited
            termination, returncode = classify(self._raw, self._limits, self._stderr.tail)
            self._info = ExitInfo(
                termination=termination,
                returncode=returncode,
                stderr=self._stderr.text(),
                stderr_truncated=self._stderr.truncated,
                seconds=self._seconds,
            )
        return self._info

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._watchdog.cancel()
        self.kill()
        if not self._exited.wait(CLOSE_GRACE_SECONDS):
            self._force_kill()
            self._exited.wait()
        self._cleanup()
