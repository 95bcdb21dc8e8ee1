"""The runner's result types: frozen, plain data, one Outcome enum for all of them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from grader.runner.inside.outcomes import Outcome
from grader.sandbox import Termination

__all__ = [
    "REFERENCE",
    "REFERENCE_AGAIN",
    "CallResult",
    "Outcome",
    "RunnerError",
    "SuitePass",
    "SuiteRun",
    "TestOutcome",
]

REFERENCE = "reference"  # the first run of the validity pass; its time sets the per-run timeout
REFERENCE_AGAIN = "reference#2"  # the reference once more after every other run (order dependence)


class RunnerError(Exception):
    """The zygote or its sandbox failed (died, hung, spoke garbage): no result can be trusted.
    ``termination`` is how the sandbox ended, when it has: a limit it ran into is the student's
    to hear of in plain words (grading.why_not_graded)."""

    def __init__(self, message: str, termination: Termination | None = None) -> None:
        super().__init__(message)
        self.termination = termination


@dataclass(frozen=True)
class TestOutcome:
    """One course test on one implementation."""

    node: str  # pytest node id, relative to the course tests folder
    outcome: Outcome  # passed, failed, error, skipped or timeout
    message: str  # at most 2 KB; written by untrusted code, show it as text only
    seconds: float


@dataclass(frozen=True)
class SuiteRun:
    """The student's suite on one implementation."""

    id: str  # the caller's name for the module (never sent into the sandbox)
    outcome: Outcome  # passed, failed, error, timeout or crashed
    node: str | None  # the first failing test, or the one running when the run was killed
    message: str  # at most 2 KB, untrusted text
    output: str  # the tests' captured stdout+stderr, at most 2 KB, untrusted text
    seconds: float  # wall time of the child, fork to reap
    test_seconds: float  # in-process time of the tests themselves
    install_seconds: float | None  # compiling the module and swapping it into the tests
    test_cpu_seconds: float = 0.0  # the CPU time of the tests themselves (not stretched by waits for a core)
    cpu_seconds: float = 0.0  # the child's CPU time, user and system, tests and all
    page_faults: int = 0  # the child's page faults: mostly copy-on-write of the zygote's heap
    skipped: int = 0  # tests that skipped themselves in this run
    skipped_named: tuple[str, ...] = ()  # the first few of them, untrusted text

    @property
    def killed(self) -> bool:
        """A mutant is killed when any test fails or errors, or the run times out or crashes."""
        return self.outcome is not Outcome.PASSED


@dataclass(frozen=True)
class CallResult:
    """What ``run(module, payload)`` of an entry under /runner returned, or why it did not."""

    outcome: Outcome  # passed (returned bytes), error (raised), timeout or crashed
    output: bytes  # the returned bytes; empty unless passed
    message: str
    seconds: float


@dataclass(frozen=True)
class SuitePass:
    """The validity and mutation pass: reference, variants and mutants, then the reference again."""

    timeout: float  # the per-run timeout derived from the first reference run
    runs: Mapping[str, SuiteRun]  # every run by id, REFERENCE and REFERENCE_AGAIN included
    variants: tuple[str, ...]
    mutants: tuple[str, ...]

    @property
    def flaky(self) -> bool:
        """Passed on the reference once and not the second time: flaky or run-order dependent."""
        again = self.runs.get(REFERENCE_AGAIN)
        return self.runs[REFERENCE].outcome is Outcome.PASSED and again is not None and again.killed

    @property
    def valid(self) -> bool:
        """The suite passes on the reference (both times) and on every correct variant."""
        return not any(run.killed for run in self.validity_runs().values())

    def validity_runs(self) -> dict[str, SuiteRun]:
        """The runs on correct implementations; after a failed first reference run, only that one."""
        return {run_id: self.runs[run_id] for run_id in (REFERENCE, *self.variants, REFERENCE_AGAIN)
                if run_id in self.runs}

    @property
    def killed(self) -> frozenset[str]:
        return frozenset(run_id for run_id in self.mutants if self.runs[run_id].killed)
