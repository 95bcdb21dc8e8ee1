"""What a report says stopped the student's tests: a limit of the sandbox in plain words, any
other failure of the runner as it was raised."""

from __future__ import annotations

import pytest

from grader.grading import TestsNotCollected, why_not_graded
from grader.mutants import load_catalogue
from grader.report.model import ValidityRun
from grader.runner.results import RunnerError
from grader.sandbox import Termination
from grader.settings import Settings


@pytest.fixture(scope="module")
def catalogue(chapter):
    return load_catalogue(chapter)


@pytest.mark.parametrize(("termination", "said"), [
    (Termination.WALL_TIMEOUT, "they did not finish within the 300 s a grade may take"),
    (Termination.MEMORY_LIMIT, "the sandbox ran out of memory (1.0 GiB for every run of the grade)"),
    (Termination.CPU_LIMIT, "a process of the sandbox used up its 120 s of CPU time"),
])
def test_a_limit_the_sandbox_ran_into_is_named_without_the_runner_s_words(catalogue, termination, said):
    exc = RunnerError("the zygote closed its output; the sandbox wall_timeout (returncode -9)", termination)
    message = why_not_graded(exc, Settings(), {"yours": 4.25}, catalogue)
    assert message.startswith(said) and "zygote" not in message, message


def test_the_time_a_slow_suite_took_on_the_student_s_own_module_is_given_when_known(catalogue):
    exc = RunnerError("...", Termination.WALL_TIMEOUT)
    assert "on your own luong.py they took 4.2 s" in why_not_graded(exc, Settings(), {"yours": 4.25}, catalogue)
    assert f"each of {len(catalogue.mutants)} mutants" in why_not_graded(exc, Settings(), {}, catalogue)
    assert "they took" not in why_not_graded(exc, Settings(), {}, catalogue)


def test_a_test_that_never_ended_on_the_student_s_own_module_is_named(catalogue):
    exc = RunnerError("...", Termination.WALL_TIMEOUT)
    hung = ValidityRun("your luong.py", "timeout", "test_spin.py::test_never_ends", "the run timed out")
    message = why_not_graded(exc, Settings(), {"yours": 25.02}, catalogue, hung)
    assert "on your own luong.py, test_spin.py::test_never_ends had not ended after 25 s" in message, message
    assert "they took" not in message
    finished = ValidityRun("your luong.py", "failed", "test_spin.py::test_wrong", "assert 1 == 2")
    assert "on your own luong.py they took 4.2 s" in why_not_graded(exc, Settings(), {"yours": 4.25}, catalogue, finished)


@pytest.mark.parametrize("exc", [
    RunnerError("the zygote sent an invalid frame; the sandbox exited (returncode 0)", Termination.EXITED),
    RunnerError("the runner failed its own check"),
    TestsNotCollected("collecting them failed:\ntest_x.py: E   RuntimeError: no GPU"),
])
def test_any_other_failure_is_said_as_it_was_raised(catalogue, exc):
    assert why_not_graded(exc, Settings(), {"yours": 1.0}, catalogue) == str(exc)
