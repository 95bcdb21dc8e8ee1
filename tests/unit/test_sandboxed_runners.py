"""What each of a submission's two sandboxes is given (grading.sandboxed_runners)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from grader import grading
from grader.intake import Submission
from grader.settings import Settings


class RecordingRunner:
    """Stands in for WarmRunner: records the tests folder it was given, starts nothing."""

    def __init__(self, *, student_tests: Path | None, collect: bool, **_options) -> None:
        self.student_tests, self.collect = student_tests, collect
        self.files = {p.relative_to(student_tests): p.read_bytes() for p in student_tests.rglob("*") if p.is_file()}
        self.waiting = self.ready = False

    def launch(self, *, wait_to_collect: bool = False) -> None:
        self.waiting = wait_to_collect

    def await_ready(self) -> None:
        self.ready = True

    def close(self) -> None: ...


def test_each_sandbox_gets_its_own_copy_of_the_tests(monkeypatch, chapter):
    """A lock or a notice on a file both sandboxes read could carry what the fast zygote saw (every
    module, the reference first) to the runs alone."""
    monkeypatch.setattr(grading, "WarmRunner", RecordingRunner)
    monkeypatch.setattr(grading, "get_backend", lambda name: SimpleNamespace(check=lambda: None))
    submission = Submission(impl=b"x = 1\n", tests=(("test_a.py", b"def test_a():\n    pass\n"),))
    with grading.sandboxed_runners(chapter, submission, "bwrap", Settings()) as runners:
        clean, fast = runners.clean.student_tests, runners.fast.student_tests
        assert clean != fast and not clean.samefile(fast)
        assert runners.clean.files == runners.fast.files == {Path("test_a.py"): b"def test_a():\n    pass\n"}


def test_the_fast_sandbox_starts_at_once_but_collects_only_when_asked(monkeypatch, chapter):
    """Collecting runs the student's code; the grade asks the fast runner for it (await_ready)
    only after the runs alone (grading._grade)."""
    monkeypatch.setattr(grading, "WarmRunner", RecordingRunner)
    monkeypatch.setattr(grading, "get_backend", lambda name: SimpleNamespace(check=lambda: None))
    submission = Submission(impl=b"x = 1\n", tests=(("test_a.py", b"def test_a():\n    pass\n"),))
    with grading.sandboxed_runners(chapter, submission, "bwrap", Settings()) as runners:
        assert runners.fast.collect and runners.fast.waiting and not runners.fast.ready
        assert runners.clean.ready
