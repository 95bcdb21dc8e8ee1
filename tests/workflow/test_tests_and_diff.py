"""`grader tests` runs the course tests in the sandbox; `grader diff` shows the reference only after a pass of
the implementation and the tests."""

from __future__ import annotations

import shutil

import pytest

from grader.patches import apply_patch
from grader.workflow import stub_source
from tests.cli import run_grader as grader

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def s01_source(chapter) -> bytes:
    patch = (chapter.pitfalls.parent / "pitfalls" / "s01.patch").read_text(encoding="utf-8")
    return apply_patch(chapter.reference_impl.read_text(encoding="utf-8"), patch).encode()


def test_tests_on_the_stub_fail_with_not_implemented(sandbox_ready, chapter, course_repo):
    stub = stub_source((chapter.contracts / "tinyllm/seq2seq/luong.pyi").read_text(), contract_name="luong.pyi")
    result = grader("tests", str(course_repo(stub.encode())))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "0/11 course tests passed: FAIL" in result.stdout
    assert "NotImplementedError" in result.stdout


def test_tests_on_a_correct_implementation_pass(sandbox_ready, chapter, course_repo):
    result = grader("tests", str(course_repo(chapter.variants[0].read_bytes())))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "11/11 course tests passed: PASS" in result.stdout
    assert "`grader check` also runs the trusted probes" in result.stdout  # which this pass does not stand for


def test_tests_without_a_luong_py_is_an_error(course_repo):
    result = grader("tests", str(course_repo(None)))
    assert result.returncode == 2
    assert "luong.py: not found" in result.stdout


def test_diff_refuses_before_the_implementation_passes_and_says_which_tests_fail(sandbox_ready, course_repo,
                                                                                  s01_source):
    result = grader("diff", str(course_repo(s01_source)))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "shown only once your implementation passes" in result.stdout
    assert "test_hand_example_attentional_order (failed)" in result.stdout
    assert "F.cat([context, query]" not in result.stdout  # not a line of the reference leaks


def test_diff_refuses_while_the_tests_are_missing_though_the_implementation_passes(sandbox_ready, chapter,
                                                                                  course_repo):
    """With the reference, a suite can fail what the mutants' code is instead of what it does: one
    built from the Stryker report of a passing implementation, with no tests yet, passed at 1.00
    (red team, round 29). So the reference waits for the tests as well."""
    result = grader("diff", str(course_repo(chapter.variants[0].read_bytes())))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "once your implementation passes and your tests pass the bar" in result.stdout
    assert "your tests: none were submitted" in result.stdout
    assert "F.cat([context, query]" not in result.stdout


def test_diff_shows_the_reference_once_the_implementation_and_the_tests_pass(sandbox_ready, chapter, course_repo):
    repo = course_repo(chapter.variants[0].read_bytes())
    shutil.copytree(chapter.oracle_suite, repo / chapter.student.tests)
    result = grader("diff", str(repo))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("--- reference python/tinyllm/seq2seq/luong.py\n+++ your python/")
    assert "-        return F.tanh(self.combine(F.cat([context, query], axis=-1)))" in result.stdout


@pytest.mark.parametrize("command", ["tests", "diff", "check"])
def test_an_empty_luong_py_is_an_error_that_says_so(course_repo, command):
    """An empty file, as committed before any work, crashed every command with a traceback (red
    team, round 17)."""
    result = grader(command, str(course_repo(b"")))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "luong.py: holds no code yet" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
