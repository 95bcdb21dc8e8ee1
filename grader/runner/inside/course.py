"""The course tests in a child: a fresh ``pytest.main`` with the run's module already installed.

Course runs are few (one per implementation graded), so they use a full pytest session rather
than the zygote's pre-collected one; the course conftest sees the module in ``sys.modules`` and
uses it. Every test runs; each start and end is recorded as it happens, so if one test hangs or
crashes the child, the driver knows which one and can rerun the rest without it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .records import Recorder
from .suite import summarize


class CourseRecorder:
    """A pytest plugin that streams per-test events and drops the tests the driver skips."""

    def __init__(self, recorder: Recorder, skip: set[str], import_error: str | None) -> None:
        self._recorder = recorder
        self._skip = skip
        self._import_error = import_error
        self._reports: dict[str, list[pytest.TestReport]] = {}

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        items[:] = [item for item in items if item.nodeid not in self._skip]
        self._recorder.emit("collected", nodes=[item.nodeid for item in items])
        if self._import_error is not None:
            for item in items:  # nothing can pass on a module that does not import
                self._recorder.emit("end", node=item.nodeid, outcome="error", message=self._import_error, seconds=0.0)
            items.clear()

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self._recorder.emit("start", node=nodeid)
        self._reports[nodeid] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._reports[report.nodeid].append(report)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        reports = self._reports.pop(nodeid)
        outcome, message = summarize(reports)
        self._recorder.emit("end", node=nodeid, outcome=outcome.value, message=message,
                            seconds=sum(report.duration for report in reports))


def run_course(tests: Path, student_tests: Path | None, *, skip: set[str], import_error: str | None,
               recorder: Recorder) -> None:
    """Run the course tests under ``tests``, all of them, except the node ids in ``skip``."""
    if student_tests is not None:
        # The zygote's session imported the student's modules; a same-named course module
        # (test_luong) must not be mistaken for one of them.
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and Path(file).is_relative_to(student_tests):
                del sys.modules[name]
    plugin = CourseRecorder(recorder, skip, import_error)
    pytest.main([str(tests), "-q", "-s", "-p", "no:cacheprovider", "--rootdir", str(tests)], plugins=[plugin])
