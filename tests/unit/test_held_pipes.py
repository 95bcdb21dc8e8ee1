"""The pipes of the runs after the fast pass, held from before it (grader/runner/inside/pipes.py)."""

from __future__ import annotations

import os
import resource

import pytest

from grader.grading import GradeRequest, grade
from grader.runner.driver import MAX_HELD_RUNS
from grader.runner.inside.pipes import PipeSource
from grader.runner.inside.protocol import ProtocolError
from grader.settings import Settings


def _close(pipes) -> None:
    for fd in pipes:
        os.close(fd)


def test_once_held_the_runs_get_the_held_pipes_in_order_and_no_others() -> None:
    source = PipeSource()
    before = source.take()  # made for the run that asks
    source.hold(2)
    held = [source.take(), source.take()]
    assert len({fd for pipes in [before, *held] for fd in pipes}) == 12
    assert [os.fstat(pipes.record_r).st_ino for pipes in held] == sorted(os.fstat(p.record_r).st_ino for p in held)
    with pytest.raises(ProtocolError, match="held too few"):
        source.take()
    with pytest.raises(ProtocolError, match="held already"):
        source.hold(1)
    for pipes in [before, *held]:
        _close(pipes)


def test_pipes_beyond_the_limit_of_open_files_say_so() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowest_free = os.dup(0)
    os.close(lowest_free)
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowest_free + 20, hard))  # room for 20 fds at most
    try:
        with pytest.raises(ProtocolError, match=r"the pipes of 50 runs \(200 fds\) do not fit .* limit of"):
            PipeSource().hold(50)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_more_runs_after_the_pass_than_the_sandbox_can_hold_is_an_error_before_anything_runs(chapter) -> None:
    settings = Settings(recheck_limit=MAX_HELD_RUNS)
    report = grade(GradeRequest(chapter=chapter.id, impl=chapter.reference_impl, tests=chapter.oracle_suite,
                                settings=settings))
    assert report.verdict.value == "error" and report.implementation is None
    assert "GRADER_SETTLE_LIMIT + GRADER_RECHECK_LIMIT" in report.error
