"""Outcomes of runs, and the one table that turns how a child ended into an outcome.

IMPORTANT: imported both by the trusted driver (the result types use ``Outcome``) and inside the
sandbox by the zygote, so standard library only and no sibling imports.
"""

from __future__ import annotations

import enum
import os
import signal


class Outcome(str, enum.Enum):
    """What one test, one suite run or one call came to."""

    PASSED = "passed"  # the tests ran and passed (or the call returned), AND the child exited 0 after saying so
    FAILED = "failed"  # a test's body failed: an assertion or an exception in the test itself
    ERROR = "error"  # a test errored in setup/teardown, collection failed, or the call raised
    SKIPPED = "skipped"  # a course test skipped itself (per-test outcomes only)
    TIMEOUT = "timeout"  # the wall deadline passed or the CPU limit hit: the zygote killed the run
    CRASHED = "crashed"  # the child ended without a valid "done" record: os._exit, a signal, a segfault, garbage


class ChildExit(enum.Enum):
    """How a forked child ended, as the zygote saw it (before looking at the record)."""

    CLEAN = "clean"  # exit status 0: the record decides
    NONZERO = "nonzero"  # exited with a non-zero status (sys.exit(3), MemoryError at exit...)
    WALL_KILLED = "wall_killed"  # the zygote killed its process group at the wall deadline
    CPU_LIMIT = "cpu_limit"  # SIGXCPU, or SIGKILL after the RLIMIT_CPU hard limit
    SIGNALLED = "signalled"  # any other signal: SIGSEGV, SIGABRT, a test killing itself


# One table, mutmut's status_by_exit_code in spirit: None means "the child's record decides".
OUTCOME_BY_EXIT: dict[ChildExit, Outcome | None] = {
    ChildExit.CLEAN: None,
    ChildExit.NONZERO: Outcome.CRASHED,
    ChildExit.WALL_KILLED: Outcome.TIMEOUT,
    ChildExit.CPU_LIMIT: Outcome.TIMEOUT,
    ChildExit.SIGNALLED: Outcome.CRASHED,
}


def classify_status(status: int, *, wall_killed: bool) -> tuple[ChildExit, str]:
    """Map a raw ``waitpid`` status to a ChildExit and a short human description."""
    if wall_killed:
        return ChildExit.WALL_KILLED, "killed at the wall-clock deadline"
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
        return (ChildExit.CLEAN, "exited 0") if code == 0 else (ChildExit.NONZERO, f"exited with status {code}")
    number = os.WTERMSIG(status)
    name = signal.Signals(number).name if number in signal.valid_signals() else f"signal {number}"
    if number == signal.SIGXCPU:
        return ChildExit.CPU_LIMIT, "hit the CPU-time limit (SIGXCPU)"
    return ChildExit.SIGNALLED, f"killed by {name}"


def decide(child_exit: ChildExit, recorded: Outcome | None) -> Outcome:
    """The run's outcome: the exit table first; the record counts only after a clean exit.

    A record without a clean exit, or a clean exit without a record, is a crash: "passed" must
    be earned by both.
    """
    by_exit = OUTCOME_BY_EXIT[child_exit]
    if by_exit is not None:
        return by_exit
    return recorded if recorded is not None else Outcome.CRASHED
