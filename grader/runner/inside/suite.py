"""The student's suite: collected once in the zygote, executed item by item in each child.

``pytest.main`` per child costs tens of milliseconds (configuration, plugin loading, collection),
more than most mutants' tests. So the zygote runs one pytest session whose run-test loop *is*
the zygote's serve loop: collection happens once, and each forked child executes the
pre-collected items with pytest's own runtest protocol (fixtures, setup and teardown included),
in the order the driver asks for, stopping at the first failure.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from _pytest.runner import runtestprotocol

from .outcomes import Outcome
from .records import MAX_MESSAGE_CHARS, Recorder, clip

MAX_WHERE_CHARS = 256  # of the node id that heads a collection error
# pytest prints why to the sandbox's stderr, which no report quotes (the student's code writes there too)
USAGE_ERROR_HINT = (": a usage error, as when a conftest.py raises while it is imported; run pytest on your "
                    "tests folder to see why")


# The failed subtests of the test running in this process (ServeFromSession, run_items).
FAILED_SUBTESTS: list[pytest.TestReport] = []


class ServeFromSession:
    """A pytest plugin: let pytest configure (and, if ``collect``, collect), then hand the live
    session to the serve loop, which never returns control to pytest's own loop."""

    def __init__(self, serve: Callable[[pytest.Session | None, list[str]], None], *, collect: bool) -> None:
        self._serve = serve
        self._collect = collect
        self.errors: list[str] = []
        self.served = False

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            where = f"{report.nodeid or 'collection'}: "[:MAX_WHERE_CHARS]  # whole: the report names the file
            self.errors.append(where + clip(report.longreprtext, MAX_MESSAGE_CHARS - len(where)))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Tests run here without logging (run_items), so the only reports that come through this
        hook are a subtest's (unittest's subTest, pytest's subtests fixture), which pytest sends
        nowhere else: the test itself passes when only its subtests failed."""
        if report.failed:
            FAILED_SUBTESTS.append(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if self._collect:
            return None  # pytest collects; pytest_runtestloop serves
        _rewrite_in_advance(session.config, Path(session.config.rootpath))
        return self._hand_over(session)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        return self._hand_over(session)

    def _hand_over(self, session: pytest.Session) -> bool:
        self.served = True
        self._serve(session, self.errors)
        return True


def _rewrite_in_advance(config: pytest.Config, tests: Path) -> None:
    """Rewrite the asserts of every module under ``tests`` once, here, for every child to reuse.

    Rewriting parses and compiles the student's source without running it, so the zygote stays
    clean; pytest would otherwise redo it in each child (the read-only mount keeps it from caching
    the result on disk).
    """
    from _pytest.assertion import rewrite

    if config.getoption("assertmode") != "rewrite":
        return
    done: dict[Path, tuple[bytes, object]] = {}
    for path in sorted(tests.rglob("*.py")):
        try:
            done[path] = rewrite._rewrite_test(path, config)  # the rewrite hook's own step
        except (SyntaxError, ValueError, OSError):
            continue  # the child's import reports it, as pytest would
    original = rewrite._rewrite_test

    def rewritten(fn: Path, config: pytest.Config):
        return done.get(Path(fn)) or original(fn, config)

    rewrite._rewrite_test = rewritten


def serve_from_session(tests: Path, serve: Callable[[pytest.Session | None, list[str]], None], *,
                       collect: bool) -> None:
    """Configure pytest for the tests under ``tests`` and serve with its session; serve anyway if
    pytest fails. With ``collect``, the session holds the collected tests (the student's conftest
    and test modules have run in this process). Without, no conftest is loaded and nothing is
    collected, so no student code runs here: each child collects for itself (session.run_alone)."""
    plugin = ServeFromSession(serve, collect=collect)
    # --tb=line: a failure's one-line message is all the grade needs, and pytest's long
    # tracebacks cost a killed run several times the test itself.
    args = [str(tests), "-q", "-s", "--tb=line", "-p", "no:cacheprovider", "--rootdir", str(tests)]
    code = pytest.main(args if collect else [*args, "--noconftest"], plugins=[plugin])
    if not plugin.served:
        serve(None, [*plugin.errors, f"pytest stopped before collecting the tests (exit code {int(code)})"
                     + (USAGE_ERROR_HINT if code == pytest.ExitCode.USAGE_ERROR else "")])


def ordered(items: Sequence[pytest.Item], order: Sequence[str]) -> list[pytest.Item]:
    """``items`` with the ids in ``order`` first (in that order), the rest in collection order."""
    rank = {node: index for index, node in enumerate(order)}
    return sorted(items, key=lambda item: rank.get(item.nodeid, len(rank)))


def summarize(reports: Sequence[pytest.TestReport], graded_file: str | None = None) -> tuple[Outcome, str]:
    """One test's outcome from its setup/call/teardown reports; failures outside "call" are errors.
    With ``graded_file``, a failure's place is the deepest one in that file it passed through."""
    for report in reports:
        if report.failed:
            return (Outcome.FAILED if report.when == "call" else Outcome.ERROR), clip(_message(report, graded_file))
    if any(report.skipped for report in reports):
        return Outcome.SKIPPED, ""
    return Outcome.PASSED, ""


MAX_PLACES = 3  # of the graded file's lines a failure's place names


def _message(report: pytest.TestReport, graded_file: str | None) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        lines = _lines_in(graded_file, report.longrepr)
        where = f"{Path(graded_file).name}:{'→'.join(lines)}" if lines else f"{Path(crash.path).name}:{crash.lineno}"
        return f"{where}: {crash.message}"
    return report.longreprtext


def _lines_in(graded_file: str | None, longrepr) -> list[str]:
    """The lines of ``graded_file`` that ``longrepr``'s traceback passed through, outermost first,
    the last MAX_PLACES of them: an error numpy or the substrate raised is the student's to fix
    where their module made the call (numpy's own file gave them nothing to look at), and the
    deepest such line can be a helper of theirs, called from the line that is wrong (red team,
    rounds 14 and 15). pytest writes a frame's path relative to the working directory when that
    is shorter."""
    entries = getattr(getattr(longrepr, "reprtraceback", None), "reprentries", ())
    places = [getattr(entry, "reprfileloc", None) for entry in (entries if graded_file is not None else ())]
    return [str(place.lineno) for place in places
            if place is not None and os.path.normpath(os.path.join(os.getcwd(), place.path)) == graded_file
            ][-MAX_PLACES:]


def run_items(items: Sequence[pytest.Item], *, stop_early: bool, recorder: Recorder) -> None:
    """Run ``items`` in order, one start/end event each; stop after the first failure if asked."""
    for index, item in enumerate(items):
        recorder.emit("start", node=item.nodeid)
        begun, begun_cpu = time.perf_counter(), time.process_time()
        nextitem = items[index + 1] if index + 1 < len(items) else None
        FAILED_SUBTESTS.clear()
        reports = runtestprotocol(item, log=False, nextitem=nextitem)
        outcome, message = summarize([*FAILED_SUBTESTS, *reports])
        last = nextitem is None or (stop_early and outcome in (Outcome.FAILED, Outcome.ERROR))
        # the last end waits for the caller's "done"; any other goes with the next start
        recorder.emit("end", node=item.nodeid, outcome=outcome.value, message=message,
                      seconds=time.perf_counter() - begun, cpu_seconds=time.process_time() - begun_cpu, hold=True)
        if last:
            return
