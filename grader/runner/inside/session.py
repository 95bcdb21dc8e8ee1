"""A fresh ``pytest.main`` in a child, with the run's module already installed.

Two kinds of run use it. Course runs (the course tests on the student's module) are few, so a
full session costs little, and every course test runs: each start and end is recorded as it
happens, so if one test hangs or crashes the child, the driver knows which one and can rerun the
rest without it. Runs *alone* (the student's suite on a trusted module, in a zygote that never
imported the student's code) collect the suite in the child itself: slower than the pre-collected
session of suite.py, but the process that forks them has run no student code, so nothing a test
did in one run can reach another (see driver.WarmRunner's ``collect``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from .records import Recorder, clip
from .suite import ordered, summarize

COLLECTION_NODE = "<collection>"


class SessionRecorder:
    """A pytest plugin that streams per-test events, drops the tests the driver skips and puts
    the ones it names first; a collection error or an empty collection is recorded as an error."""

    def __init__(self, recorder: Recorder, *, skip: set[str], order: Sequence[str], import_error: str | None) -> None:
        self._recorder = recorder
        self._skip = skip
        self._order = order
        self._import_error = import_error
        self._reports: dict[str, list[pytest.TestReport]] = {}

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._recorder.emit("end", node=report.nodeid or COLLECTION_NODE, outcome="error",
                                message=clip(report.longreprtext), seconds=0.0)

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if not items:
            self._recorder.emit("end", node=COLLECTION_NODE, outcome="error", message="no tests were collected",
                                seconds=0.0)
        items[:] = ordered([item for item in items if item.nodeid not in self._skip], self._order)
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
        # A zygote that collected the student's suite imported its modules; a same-named course
        # module (test_luong) must not be mistaken for one of them.
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and Path(file).is_relative_to(student_tests):
                del sys.modules[name]
    plugin = SessionRecorder(recorder, skip=skip, order=(), import_error=import_error)
    pytest.main([str(tests), "-q", "-s", "-p", "no:cacheprovider", "--rootdir", str(tests)], plugins=[plugin])


def run_alone(tests: Path, *, order: Sequence[str], stop_early: bool, recorder: Recorder) -> None:
    """Collect and run the student's suite under ``tests`` in this child, ``order`` first."""
    plugin = SessionRecorder(recorder, skip=set(), order=order, import_error=None)
    args = [str(tests), "-q", "-s", "--tb=line", "-p", "no:cacheprovider", "--rootdir", str(tests)]
    pytest.main([*args, "-x"] if stop_early else args, plugins=[plugin])
