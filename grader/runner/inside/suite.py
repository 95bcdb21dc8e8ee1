"""The student's suite: collected once in the zygote, executed item by item in each child.

``pytest.main`` per child costs tens of milliseconds (configuration, plugin loading, collection),
more than most mutants' tests. So the zygote runs one pytest session whose run-test loop *is*
the zygote's serve loop: collection happens once, and each forked child executes the
pre-collected items with pytest's own runtest protocol (fixtures, setup and teardown included),
in the order the driver asks for, stopping at the first failure.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from _pytest.runner import runtestprotocol

from .outcomes import Outcome
from .records import Recorder, clip


class CollectThenServe:
    """A pytest plugin: let pytest collect, then hand the live session to the serve loop."""

    def __init__(self, serve: Callable[[pytest.Session | None, list[str]], None]) -> None:
        self._serve = serve
        self.errors: list[str] = []
        self.served = False

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.errors.append(clip(f"{report.nodeid or 'collection'}: {report.longreprtext}"))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        self.served = True
        self._serve(session, self.errors)
        return True


def collect_and_serve(tests: Path, serve: Callable[[pytest.Session | None, list[str]], None]) -> None:
    """Collect the tests under ``tests`` and serve with the session; serve anyway if pytest fails."""
    plugin = CollectThenServe(serve)
    # --tb=line: a failure's one-line message is all the grade needs, and pytest's long
    # tracebacks cost a killed run several times the test itself.
    args = [str(tests), "-q", "-s", "--tb=line", "-p", "no:cacheprovider", "--rootdir", str(tests)]
    code = pytest.main(args, plugins=[plugin])
    if not plugin.served:
        serve(None, [*plugin.errors, f"pytest stopped before collecting the tests (exit code {int(code)})"])


def test_namespaces(session: pytest.Session, tests: Path) -> list[dict]:
    """Where the tests keep names taken from the graded module: their modules and parameters."""
    namespaces = [
        vars(module)
        for module in list(sys.modules.values())
        if _is_under(getattr(module, "__file__", None), tests)
    ]
    namespaces.extend(item.callspec.params for item in session.items if hasattr(item, "callspec"))
    return namespaces


def _is_under(file: str | None, folder: Path) -> bool:
    return isinstance(file, str) and Path(file).is_relative_to(folder)


def ordered(items: Sequence[pytest.Item], order: Sequence[str]) -> list[pytest.Item]:
    """``items`` with the ids in ``order`` first (in that order), the rest in collection order."""
    rank = {node: index for index, node in enumerate(order)}
    return sorted(items, key=lambda item: rank.get(item.nodeid, len(rank)))


def summarize(reports: Sequence[pytest.TestReport]) -> tuple[Outcome, str]:
    """One test's outcome from its setup/call/teardown reports; failures outside "call" are errors."""
    for report in reports:
        if report.failed:
            return (Outcome.FAILED if report.when == "call" else Outcome.ERROR), clip(_message(report))
    if any(report.skipped for report in reports):
        return Outcome.SKIPPED, ""
    return Outcome.PASSED, ""


def _message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return f"{Path(crash.path).name}:{crash.lineno}: {crash.message}"
    return report.longreprtext


def run_items(items: Sequence[pytest.Item], *, stop_early: bool, recorder: Recorder) -> None:
    """Run ``items`` in order, one start/end event each; stop after the first failure if asked."""
    for index, item in enumerate(items):
        recorder.emit("start", node=item.nodeid)
        begun = time.perf_counter()
        nextitem = items[index + 1] if index + 1 < len(items) else None
        outcome, message = summarize(runtestprotocol(item, log=False, nextitem=nextitem))
        recorder.emit("end", node=item.nodeid, outcome=outcome.value, message=message,
                      seconds=time.perf_counter() - begun)
        if stop_early and outcome in (Outcome.FAILED, Outcome.ERROR):
            return
