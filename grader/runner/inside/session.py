"""pytest sessions in a child beyond the zygote's pre-collected one (suite.py).

Course runs (the course tests on the student's module) are few, so each is a full fresh
``pytest.main``, and every course test runs: each start and end is recorded as it happens, so if
one test hangs or crashes the child, the driver knows which one and can rerun the rest without it.

Runs *alone* (the student's suite on a trusted module, in a zygote that never ran the student's
code) collect the suite in the child itself, from a session the zygote configured without
loading any conftest: slower than the fast zygote's pre-collected session, but the process that
forks them has run no student code, so nothing a test did in one run can reach another (see
driver.WarmRunner's ``collect``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from .draws import seed as seed_draws
from .records import Recorder, clip
from .suite import ordered, run_items, summarize

COLLECTION_NODE = "<collection>"


class SessionRecorder:
    """A pytest plugin that streams per-test events, drops the tests the driver skips and puts
    the ones it names first; a collection error or an empty collection is recorded as an error."""

    def __init__(self, recorder: Recorder, *, skip: set[str], order: Sequence[str], import_error: str | None,
                 graded_file: str | None = None) -> None:
        self._recorder = recorder
        self._graded_file = graded_file
        self._skip = skip
        self._order = order
        self._import_error = import_error
        self._reports: dict[str, list[pytest.TestReport]] = {}
        self._cpu_at_start: dict[str, float] = {}
        self.collection_failed = False

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_failed = True
            self._error(report.nodeid or COLLECTION_NODE, clip(report.longreprtext))

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if not items:
            self.collection_failed = True
            self._error(COLLECTION_NODE, "no tests were collected")
        items[:] = ordered([item for item in items if item.nodeid not in self._skip], self._order)
        self._recorder.emit("collected", nodes=[item.nodeid for item in items])
        if self._import_error is not None:
            for item in items:  # nothing can pass on a module that does not import
                self._error(item.nodeid, self._import_error)
            items.clear()

    def _error(self, node: str, message: str) -> None:
        """An error outcome for ``node`` that no test run produced (so it took no time)."""
        self._recorder.emit("end", node=node, outcome="error", message=message, seconds=0.0, cpu_seconds=0.0)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self._recorder.emit("start", node=nodeid)
        self._reports[nodeid] = []
        self._cpu_at_start[nodeid] = time.process_time()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # a subtest's report, in a run alone, comes for a test pytest did not log (run_items)
        if report.nodeid in self._reports:
            self._reports[report.nodeid].append(report)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        reports = self._reports.pop(nodeid)
        outcome, message = summarize(reports, self._graded_file)
        self._recorder.emit("end", node=nodeid, outcome=outcome.value, message=message,
                            seconds=sum(report.duration for report in reports),
                            cpu_seconds=time.process_time() - self._cpu_at_start.pop(nodeid))


def run_course(tests: Path, student_tests: Path | None, *, skip: set[str], import_error: str | None,
               graded_file: str, recorder: Recorder) -> None:
    """Run the course tests under ``tests``, all of them, except the node ids in ``skip``; a
    failure is placed in ``graded_file``, the student's module, where it passed through it."""
    if student_tests is not None:
        # A zygote that collected the student's suite imported its modules; a same-named course
        # module (test_luong) must not be mistaken for one of them.
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and Path(file).is_relative_to(student_tests):
                del sys.modules[name]
    plugin = SessionRecorder(recorder, skip=skip, order=(), import_error=import_error, graded_file=graded_file)
    pytest.main([str(tests), "-q", "-s", "-p", "no:cacheprovider", "--rootdir", str(tests)], plugins=[plugin])


def run_alone(session: pytest.Session, *, order: Sequence[str], stop_early: bool, recorder: Recorder,
              collection_seed: int, tests_seed: int) -> None:
    """Collect the student's suite in this child, from the zygote's configured but uncollected
    session, and run it, ``order`` first. Conftests load here, during collection (the zygote ran
    pytest with --noconftest); a conftest's pytest_addoption still runs, its options at their
    defaults. The collection draws from ``collection_seed``, as the fast zygote's did, so both
    collect the same tests; the tests from ``tests_seed``, this run's own (see draws.py)."""
    plugin = SessionRecorder(recorder, skip=set(), order=order, import_error=None)
    session.config.pluginmanager.register(plugin)
    seed_draws(collection_seed)
    _start_as_pytest_would(session)
    session.perform_collect()
    if not plugin.collection_failed:
        seed_draws(tests_seed)
        run_items(session.items, stop_early=stop_early, recorder=recorder)


def _start_as_pytest_would(session: pytest.Session) -> None:
    """Load the suite's top-level conftests and start the session for them, as a plain pytest run
    (and the fast zygote) does before collecting: pytest accepts ``pytest_plugins`` only from a
    conftest loaded before it is configured, and a conftest's ``pytest_sessionstart`` runs once
    the conftest is in. The zygote ran with --noconftest, so none of this has happened yet.
    pytest has no public API for either step; these are the calls its own start-up makes."""
    config = session.config
    manager = config.pluginmanager
    before = set(manager.get_plugins())
    manager._configured = False
    try:
        manager._set_initial_conftests(
            args=config.args, pyargs=False, noconftest=False, rootpath=config.rootpath,
            confcutdir=config.known_args_namespace.confcutdir, invocation_dir=config.invocation_params.dir,
            importmode=config.known_args_namespace.importmode,
            consider_namespace_packages=config.getini("consider_namespace_packages"))
    finally:
        manager._configured = True
    manager.subset_hook_caller("pytest_sessionstart", remove_plugins=before)(session=session)
