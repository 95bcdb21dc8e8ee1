"""One grade, start to finish: intake → sandbox → runner → probes → scoring → report.

This is the only module that knows the order of the phases; each phase lives in its own module.
Every expected failure (bad input, no sandbox, broken chapter material) becomes a report with
verdict "error" and a message, never a traceback, so the CLI, the API and CI see one shape.
"""

from __future__ import annotations

import ast
import importlib.util
import random
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TypeVar

from grader import probes, scoring
from grader.chapter import Chapter, ManifestError, load_chapter
from grader.disguise import disguise_catalogue
from grader.grade_key import grade_key, keyed_seed
from grader.intake import IntakeError, Submission, read_course_repo, read_submission
from grader.mutants import Catalogue, CatalogueError, load_catalogue
from grader.report.model import (
    CourseTest,
    Implementation,
    MutantOutcome,
    MutantResult,
    Report,
    Tests,
    ValidityRun,
    Verdict,
    clipped,
)
from grader.runner.compiled import compile_modules
from grader.runner.driver import MAX_HELD_RUNS, WarmRunner, module_file
from grader.runner.inside.loader import UNDEFINED, UNSWAPPABLE
from grader.runner.inside.records import IMPORT_FAILED
from grader.runner.results import (
    REFERENCE,
    REFERENCE_AGAIN,
    CallResult,
    Outcome,
    RunnerError,
    SuitePass,
    SuiteRun,
    TestOutcome,
)
from grader.sandbox import SandboxUnavailable, Termination, get_backend
from grader.sandbox.scratch import held_folder, sweep_orphans
from grader.settings import Settings, SettingsError

# The failures a grade reports as verdict "error" with a message; anything else is a bug.
GRADING_ERRORS = (ManifestError, IntakeError, CatalogueError, SandboxUnavailable, RunnerError, SettingsError)
MAX_MESSAGE_CHARS = 500
MAX_COLLECTION_CHARS = 2000  # of the collection errors a report quotes
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+(?=>)")  # in an object's repr: "<function all at 0x7f...>"
NUMPY_BOOL = re.compile(r"\bnp\.(True|False)_\b")
SANDBOX_HOLDS = " in the sandbox, which has Python, numpy, pytest and the tinyllm substrate only"
ALONE = " (run alone)"  # how the validity runs of the clean runner are labelled
YOURS = "your luong.py"  # the run of the student's tests on their own implementation
AGAIN = ", again"  # the correct implementations' runs alone after the mutation pass
T = TypeVar("T")
ReferenceProbes = tuple[bytes, dict, Callable[[Sequence[str]], probes.Slack]]  # cases, the reference's answers, its rounding
ReferenceAnswers = tuple[dict, Callable[[Sequence[str]], probes.Slack]]
# The machinery checks itself on every grade (mutmut's forced-fail run): a module that cannot be
# imported must come out killed, or no outcome of the pass means anything.
FORCED_FAILURE = "forced-failure"
FORCED_FAILURE_SOURCE = b'raise ImportError("forced failure: the grader checks that a broken module is detected")\n'
NO_RESULT = "no result came back for this test: the run ended without reporting it"
NOT_COLLECTED = "not run: the course tests could not be collected with this luong.py (the rows above say why)"
PYTEST_NAMES_HINT = "Hint: make sure your test modules/packages have valid Python names."
# What inspect raises for a module with no source file, as every luong.py is run here
NO_SOURCE = ("source code not available", "could not get source code", "could not find class definition")
NO_SOURCE_HINT = (": every luong.py is run here from memory, with no source to read; test what it computes, not "
                  "how it is written")
HIDDEN_PART = "id not shown"
HIDDEN_NODE = "a test whose id was not fixed at collection: not shown"
NOT_SHOWN = "messages from runs on the grader's implementations are not shown"
MORE_THAN_ASKED = (
    "a correct implementation to more than the chapter asks: floats that are equal only to the last bit (compare "
    "them with a tolerance, as np.testing.assert_allclose does; float32 keeps about 7 digits, so no tighter "
    "than rtol=1e-5 with a small atol), or a name or behaviour the contract does not define"
)
TRUSTED_RUN_HINT = (
    f"{NOT_SHOWN}, but the run on your own luong.py is, on the line \"on your luong.py\". If this test passes on "
    f"a correct luong.py of yours, it may hold {MORE_THAN_ASKED}"
)
STRICTER_THAN_ASKED_HINT = (
    f"{NOT_SHOWN}. This test passes on your own luong.py, which passes the chapter's checks, and fails on a "
    f"correct implementation written differently: it holds {MORE_THAN_ASKED}"
)
SHARED_MISTAKE_HINT = (
    f"{NOT_SHOWN}. This test passes on your own luong.py, which fails the chapter's checks (see Implementation "
    "above), and fails on a correct implementation: it most likely shares your luong.py's mistake, in a formula "
    "or in a convention of the contract (what an argument marks, the order of a concatenation). Take its "
    "expected values from the chapter's worked example or the golden values, never from your own code's output, "
    "and its conventions from the contract"
)
ORDER_HINT = (
    "the reference passed the first run, which ran the tests in the files' order, and failed when run again last; "
    "every run after the first puts the tests that killed most first. A test that fails here depends on another "
    "running before it (state a test or a module- or session-scoped fixture leaves behind, such as a module that "
    "one test changes with load_state_dict and another reads), on random numbers drawn without a seed (each run "
    "here draws its own: seed them, as the course tests do), or on what an earlier run did; "
    "run your tests in another order (the files or the tests in them reversed) to see it"
)
CHANCE_HINT = (
    "the same implementation, run the same way, failed once and passed once: the test's outcome changes from "
    "run to run, as it does when a test draws random numbers without a seed (np.random.rand with no "
    "np.random.seed, np.random.default_rng() with none; each run draws its own: give it one, as the course "
    "tests do) or reads the clock"
)
FAST_ONLY_HINT = (
    "the same implementation passed when the test ran alone, collected afresh in a run of its own; here the "
    "tests are collected once and every run starts from that collection, so something made at import time "
    "does not carry into the runs (a directory made or a file opened for writing at module level: a run may "
    "write only in its own working directory), or the test depends on what another test left behind, or on "
    "random numbers drawn without a seed. Make such things inside tests or fixtures (tmp_path)"
)
UNDEFINED_HINT = (
    "the test uses a name of the graded module that this correct implementation does not define; the "
    "grader's implementations need define only what the chapter's contract names, so test only those (a "
    "helper of your own can be tested where it is defined, or looked up with hasattr inside the test)"
)
UNSWAPPABLE_HINT = (
    "the runner collects the tests once, before any implementation is loaded, and swaps each run's module "
    "in wherever the tests hold its names (globals, attributes, parametrize values, containers, closures, "
    "defaults). This test used a name of the graded module at import time (a subclass, an instance or another "
    "value computed from it) or held it inside an object the runner cannot rewrite; use it inside tests or "
    "fixtures"
)
# How a mutant's run outcome counts in the grade (a failed or erroring test is a kill).
MUTANT_OUTCOMES = {
    Outcome.PASSED: MutantOutcome.SURVIVED,
    Outcome.FAILED: MutantOutcome.KILLED,
    Outcome.ERROR: MutantOutcome.KILLED,
    Outcome.TIMEOUT: MutantOutcome.TIMEOUT,
    Outcome.CRASHED: MutantOutcome.CRASHED,
}


@dataclass(frozen=True)
class GradeRequest:
    """What to grade: a course repo, or an implementation file with an optional tests folder."""

    chapter: str
    repo: Path | None = None
    impl: Path | None = None
    tests: Path | None = None
    backend: str = "bwrap"
    settings: Settings | None = None  # None: Settings.from_env()


def grade(request: GradeRequest) -> Report:
    """Grade one submission; expected failures come back as a report with verdict "error"."""
    started = time.monotonic()
    try:
        settings = request.settings or Settings.from_env()
        chapter = load_chapter(request.chapter)
        submission = _read(chapter, request)
        catalogue = load_catalogue(chapter)
        seed = keyed_seed(grade_key(), submission.digest)
        return _grade(chapter, catalogue, submission, seed, request.backend, settings, started)
    except GRADING_ERRORS as exc:
        return _error_report(request, exc, started)


@dataclass(frozen=True)
class Runners:
    """A submission's two sandboxes. ``clean``'s zygote never runs the student's code: it runs the
    course tests, the probes and the suite on a few implementations *alone* (each child collects
    the suite itself). ``fast`` collects the suite once and forks every mutant's run from there: the
    mutation pass. Everything in ``fast``'s sandbox is the student's to tamper with once their
    conftest has run, so its kills count only if the runs alone agree (see _grade_tests). And it
    sees every module sent there, the reference first. The two sandboxes share a kernel, and what
    one does can show in the other (a per-user count of pipe pages carried a digest of the
    reference from the fast one to the runs alone; the page cache of a library both read told the
    fast one which mutants were run alone). So ``fast`` reads no file ``clean`` reads (private
    copies of Python and of every mount, so no cache of a file or a name is shared), starts at
    once but collects the suite, which runs the student's code there, only once ``clean`` has
    run everything it reports on; and ``clean`` settles the timeouts only once ``fast`` is
    closed."""

    clean: WarmRunner
    fast: WarmRunner | None  # None when no tests were submitted


@contextmanager
def sandboxed_runners(chapter: Chapter, submission: Submission, backend_name: str,
                      settings: Settings, *, seed: int = 0) -> Iterator[Runners]:
    """The submission's runners, started at once, its tests mounted read-only in both; the fast
    one imports everything but waits to collect the tests until its await_ready(), and orders its
    runs by ``seed`` (the grade's: there is no fast one without tests).

    The clean runner runs one child at a time. Its runs alone are the trusted check of the fast
    pass, and runs in flight together in one sandbox can still reach each other (UDP on loopback;
    on kernels before Landlock ABI 6 also signals and abstract sockets, before ABI 4 TCP), so two
    of them overlapping could compare what they see."""
    backend = get_backend(backend_name)
    backend.check()
    sweep_orphans()  # the folders of graders killed outright (held_folder)
    with held_folder("submission") as scratch, ExitStack() as stack:
        # A copy of the tests for each sandbox: what one does to a file it shares with the other
        # (a lock, a notice) could carry what the fast zygote saw to the runs alone.
        collecting = (False, True) if submission.tests is not None else (False,)
        runners = [WarmRunner(chapter=chapter, backend=backend, limits=settings.limits(),
                              student_tests=_materialise_tests(submission, scratch / f"collect-{collect}"),
                              workers=settings.workers if collect else 1, seed=seed, collect=collect,
                              private=collect)
                   for collect in collecting]
        for runner in runners:
            stack.callback(runner.close)
            runner.launch(wait_to_collect=True)  # the fast one collects on its first await_ready()
        runners[0].await_ready()
        yield Runners(clean=runners[0], fast=runners[1] if len(runners) > 1 else None)


def _read(chapter: Chapter, request: GradeRequest) -> Submission:
    if request.repo is not None:
        return read_course_repo(chapter, request.repo)
    if request.impl is None:
        raise IntakeError("nothing to grade: give a course repo or an implementation file")
    return read_submission(chapter, request.impl, request.tests)


def _grade(chapter: Chapter, catalogue: Catalogue, submission: Submission, seed: int, backend_name: str,
           settings: Settings, started: float) -> Report:
    timing: dict[str, float] = {}
    if submission.tests is not None:
        _check_held_runs(catalogue, settings)
    with ExitStack() as stack:
        background = stack.enter_context(ThreadPoolExecutor(max_workers=1, thread_name_prefix="trusted"))
        expected = _reference_probes_in(background, chapter, catalogue, seed)
        runners = stack.enter_context(sandboxed_runners(chapter, submission, backend_name, settings, seed=seed))
        timing["startup"] = _since(started)
        # Everything the clean sandbox reports on runs before the fast one collects the suite (the
        # student's code's first run there), and the timeouts are settled once it is closed: see
        # Runners for what the two sandboxes would otherwise share.
        judged = _grade_implementation(runners.clean, catalogue, submission, settings, expected, timing, background)
        tests, error, yours = None, None, None
        if runners.fast is not None:
            try:
                yours = _timed(timing, "yours", _run_on_your_implementation, runners.clean, submission.impl, settings)
                tests = _grade_suite(runners, chapter, catalogue, submission, settings, background, timing, judged,
                                     yours)
            except (RunnerError, TestsNotCollected) as exc:  # the implementation's grade, made before, stands
                tests = replace(scoring.tests_not_graded(chapter.threshold, chapter.required_pitfalls),
                                on_your_implementation=yours)
                error = f"the tests could not be graded: {why_not_graded(exc, settings, timing, catalogue, yours)}"
        elif submission.tests_refused is not None:
            tests = scoring.tests_not_graded(chapter.threshold, chapter.required_pitfalls)
            error = f"the tests were refused, so only the implementation was graded: {submission.tests_refused}"
        implementation = judged.result()
    timing["total"] = _since(started)
    return Report(
        chapter=chapter.id,
        verdict=scoring.overall_verdict(implementation, tests),
        implementation=implementation,
        tests=tests,
        pool_version=catalogue.pool.version,
        pitfalls=catalogue.pitfalls,
        backend=backend_name,
        submission=submission.digest,
        error=error,
        timing={k: round(v, 3) for k, v in timing.items()},
    )


def _grade_suite(runners: Runners, chapter: Chapter, catalogue: Catalogue, submission: Submission,
                 settings: Settings, background: ThreadPoolExecutor, timing: dict[str, float],
                 implementation: Future[Implementation], yours: ValidityRun) -> Tests:
    """The student's tests after ``yours``, their run on the student's own luong.py: runs alone,
    the mutation pass, the runs alone after it, the score (whose words for a test that fails a
    correct implementation depend on how the student's ``implementation`` fared)."""
    fast = runners.fast
    sent = _timed(timing, "disguise", disguise_catalogue, catalogue)  # what the sandboxes get
    sample, decoys = alone_sample(sent, settings), drawn_decoys(sent, settings)
    alone_decoys = decoys_run_alone(decoys, settings)
    compiled, rest = _compiled(sent, sample, decoys, alone_decoys, module_file(chapter), background)
    alone = _timed(timing, "alone", _alone_pass, runners.clean, sent, {**_correct(sent), **alone_decoys}, sample,
                   compiled, settings.alone_timeout)
    compiled = {**compiled, **rest.result()}
    runners.clean.hold_pipes(runs_after_the_pass_at_most(catalogue, settings))
    _timed(timing, "collection", fast.await_ready)  # the student's code runs there from now on
    _check_collected(fast)
    suite = _timed(timing, "mutation", _mutation_pass, fast, sent, decoys, compiled)
    fast.close()  # and nothing of it is alive during the runs alone after it
    alone = _timed(timing, "after_the_pass", _after_the_pass, runners.clean, sent, suite, alone, compiled, settings,
                   _margin(suite, sent, chapter))
    hint = trusted_run_hint(yours, implementation.result().verdict)
    return replace(_grade_tests(suite, alone, chapter, sent, frozenset(fast.collected), hint),
                   on_your_implementation=yours)


def runs_after_the_pass_at_most(catalogue: Catalogue, settings: Settings) -> int:
    """_after_the_pass's runs at most: the correct implementations again, and the mutants it may
    settle and recheck. The clean zygote holds their pipes from before the fast pass."""
    return len(_correct(catalogue)) + min(settings.settle_limit + settings.recheck_limit, len(catalogue.mutants))


def _check_held_runs(catalogue: Catalogue, settings: Settings) -> None:
    if runs_after_the_pass_at_most(catalogue, settings) > MAX_HELD_RUNS:
        most = MAX_HELD_RUNS - len(_correct(catalogue))
        raise SettingsError(f"GRADER_SETTLE_LIMIT + GRADER_RECHECK_LIMIT is {settings.settle_limit + settings.recheck_limit}"
                            f", over the {most} runs alone after the mutation pass whose pipes the sandbox can hold "
                            "from before it")


def trusted_run_hint(yours: ValidityRun, implementation: Verdict) -> str:
    """What a report says of a test that failed a correct implementation, for want of its message.
    Where the test passed on the student's own luong.py, that line has nothing to show: a student
    whose tests computed the same wrong formula as their luong.py was pointed to it and told of
    tolerances (red team, round 27)."""
    if yours.outcome != Outcome.PASSED.value:
        return TRUSTED_RUN_HINT
    return STRICTER_THAN_ASKED_HINT if implementation is Verdict.PASS else SHARED_MISTAKE_HINT


def why_not_graded(exc: Exception, settings: Settings, timing: Mapping[str, float], catalogue: Catalogue,
                   yours: ValidityRun | None = None) -> str:
    """What stopped the student's tests, in the student's words where a limit of the sandbox did:
    a slow suite that ran out of a grade's time was told "the zygote closed its output; the
    sandbox wall_timeout" (red team, round 26). Where a test never ended on the student's own
    luong.py, it is named: a suite with an endless loop was told only that it took 25.0 s there."""
    termination = exc.termination if isinstance(exc, RunnerError) else None
    if termination is Termination.WALL_TIMEOUT:
        took = timing.get("yours")
        if yours is not None and yours.outcome == Outcome.TIMEOUT.value:
            measured = (f" (on your own luong.py, {yours.failed_test or 'a test'} had not ended after "
                        f"{settings.alone_timeout:g} s: a test that never ends, or waits for what never comes, "
                        "stops every run this way)")
        else:
            measured = f" (on your own luong.py they took {took:.1f} s)" if took is not None else ""
        return (f"they did not finish within the {settings.wall_seconds:.0f} s a grade may take. They run once for "
                f"each of {len(catalogue.mutants)} mutants and again on correct implementations, so they must take "
                f"a few seconds at most on a correct luong.py{measured}: make the slow tests smaller (fewer sizes, repetitions or sleeps, "
                "smaller inputs)")
    if termination is Termination.MEMORY_LIMIT:
        return (f"the sandbox ran out of memory ({settings.memory_bytes / 2**30:.1f} GiB for every run of the "
                "grade): a test that builds very large arrays, or keeps what it makes from run to run (a list at "
                "module level, a session-scoped fixture), can do that")
    if termination is Termination.CPU_LIMIT:
        return (f"a process of the sandbox used up its {settings.cpu_seconds} s of CPU time (collecting your tests "
                "runs their conftest and module-level code once for the whole grade)")
    return str(exc)


def _run_on_your_implementation(runner: WarmRunner, impl: bytes, settings: Settings) -> ValidityRun:
    """The student's tests on their own ``luong.py``, run alone in the clean sandbox before any
    module of the grader's has entered it: so this run's message is the student's code's alone,
    and is shown whole, as no trusted run's is. A test that fails a correct implementation of the
    grader's is then explained where it fails here too, and where it passes here, the student
    knows the two modules differ in what it checks. It counts for nothing in the grade."""
    run = runner.suite_runs([(YOURS, impl)], timeout=settings.alone_timeout)[YOURS]
    return ValidityRun(implementation=YOURS, outcome=run.outcome.value, failed_test=run.node if run.killed else None,
                       message=yours_message(run))


def yours_message(run: SuiteRun) -> str:
    """The line "on your luong.py": the failure as the student's code wrote it, or the skips of a
    pass. A test reading the module's source failed on every implementation, the student's own
    too, with inspect's OSError, and was told of float tolerances (honest students, round 30)."""
    if not run.killed:
        return _as_shown(_skips(run))
    shown = _as_shown(run.message)
    return shown + NO_SOURCE_HINT if any(text in run.message for text in NO_SOURCE) else shown


def _skips(run: SuiteRun) -> str:
    """What a passing run says of the tests that skipped themselves: a suite whose unfinished
    tests skipped heard nothing of them, and a skipped test catches no mutant (red team, round 26)."""
    if not run.skipped:
        return ""
    more = f" and {run.skipped - len(run.skipped_named)} more" if run.skipped > len(run.skipped_named) else ""
    tests = "1 test" if run.skipped == 1 else f"{run.skipped} tests"
    return f"{tests} skipped ({', '.join(run.skipped_named)}{more}): a skipped test catches no mutant"


class TestsNotCollected(Exception):
    """The student's suite collected nothing to run, in the sandbox: there is nothing to grade."""

    __test__ = False  # a name pytest would otherwise try to collect


def _check_collected(fast: WarmRunner) -> None:
    """Raise TestsNotCollected, saying why, when the fast zygote collected no test. Its collection
    errors can be shown as they are: they were written before any implementation entered that
    sandbox, like the test ids a report shows (every run would only repeat them, and the runs
    alone, collecting with an implementation installed, may not be quoted)."""
    if fast.collection_errors:  # pytest's hint on names, beside a missing package, misled (round 30)
        errors = "\n".join(_without_names_hint("\n".join(fast.collection_errors).splitlines()))
        rule = f"\n{UNSWAPPABLE_HINT}" if UNSWAPPABLE in errors else ""
        # what the sandbox holds explains a missing package only: beside a conftest's own
        # RuntimeError it read as the cause (round 26)
        where = SANDBOX_HOLDS if "ModuleNotFoundError" in errors else ""
        raise TestsNotCollected(f"collecting them failed{where}:\n{_as_shown(errors, MAX_COLLECTION_CHARS)}{rule}")
    if not fast.collected:
        raise TestsNotCollected(f"no test was collected from them{SANDBOX_HOLDS} (a file that skips itself at "
                                "import, as pytest.importorskip of a package the sandbox lacks does, collects none)")


def _materialise_tests(submission: Submission, folder: Path) -> Path | None:
    """Write the student's tests where a sandbox can mount them read-only (world-readable)."""
    if submission.tests is None:
        return None
    root = folder / "tests"
    for name, data in submission.tests:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        path.write_bytes(data)
        path.chmod(0o644)
    for directory in [folder, root, *(p for p in root.rglob("*") if p.is_dir())]:
        directory.chmod(0o755)
    return root


def _grade_implementation(runner: WarmRunner, catalogue: Catalogue, submission: Submission, settings: Settings,
                          expected: ProbeWork, timing: dict[str, float],
                          background: ThreadPoolExecutor) -> Future[Implementation]:
    """The course tests and the probes' run, in the clean sandbox; the probes' answer is read and
    judged in ``background``, which needs no sandbox, while the clean sandbox goes on to the
    student's tests one child at a time, a core being idle then (it took a grade some 0.3 s before)."""
    phase = time.monotonic()
    tests = run_course_tests(runner, submission.impl, settings)
    timing["course_tests"] = _since(phase)
    call = _timed(timing, "probes", runner.call, submission.impl, "probe", expected.cases.result()[1],
                  settings.probe_timeout)
    return background.submit(_timed, timing, "judge", _implementation, tests, runner.chapter, catalogue, call,
                             settings, expected)


def _implementation(tests: tuple[CourseTest, ...], chapter: Chapter, catalogue: Catalogue, call: CallResult,
                    settings: Settings, expected: ProbeWork) -> Implementation:
    verdict = _probe_verdict(chapter, catalogue, call, settings, expected)
    return Implementation(
        verdict=scoring.implementation_verdict([t.outcome for t in tests], verdict.agree),
        tests=tests,
        probes_agree=verdict.agree,
        probe_disagreements=verdict.disagreements,
        behaves_like=verdict.behaves_like,
    )


def run_course_tests(runner: WarmRunner, impl: bytes, settings: Settings) -> tuple[CourseTest, ...]:
    """The course tests on ``impl``, as the report shows them (`grader tests` runs only this).

    Which tests ran, and how, is what the child reports, and the child is the student's process:
    every course test the files define must be there, or it counts as an error (a ``luong.py``
    that ended its run reporting no test at all had an empty table, which ``all`` passed)."""
    expected = course_test_names(runner.chapter)
    reported = [_course_test(test, expected)
                for test in runner.course_tests(impl, timeout=settings.course_timeout, budget=settings.course_budget)]
    names = {test.name.partition("[")[0] for test in reported}
    uncollected = any(name not in expected for name in names)  # a file that failed to import, or no test at all
    missing = NOT_COLLECTED if uncollected else NO_RESULT
    return tuple(reported) + tuple(CourseTest(name=name, outcome=Outcome.ERROR.value, message=missing)
                                   for name in expected if name not in names)


def _course_test(test: TestOutcome, expected: list[str]) -> CourseTest:
    """A reported course test's row; one that is no course test (a file that failed to import, or
    <collection>) leads with its exception."""
    name = test.node.rpartition("::")[2]
    message = test.message if name.partition("[")[0] in expected else _exception_first(test.message)
    return CourseTest(name=name, outcome=test.outcome.value, message=_as_shown(message) + _missing_package(message))


def _missing_package(message: str) -> str:
    """What the sandbox holds, after a luong.py's failed import of a package it lacks: 'No module
    named torch' eleven times said nothing of why (honest students, round 30)."""
    return SANDBOX_HOLDS if message.startswith(f"{IMPORT_FAILED}: ModuleNotFoundError") else ""


def _exception_first(message: str) -> str:
    """A collection error as pytest words it, with the exception itself (its ``E`` lines) first and
    pytest's hint about test modules' names dropped: what a student must read is that their
    luong.py lacks a name or fails to import, and a cut message lost it after the traceback."""
    lines = message.splitlines()
    raised = [line.removeprefix("E").strip() for line in lines if line.startswith("E ")]
    return "\n".join([*raised, *_without_names_hint(lines)]) if raised else message


def _without_names_hint(lines: Sequence[str]) -> list[str]:
    """``lines`` without pytest's hint that test modules need valid Python names, which beside a
    module that fails to import (a missing package, a name luong.py lacks) points the wrong way."""
    return [line for line in lines if not line.startswith(PYTEST_NAMES_HINT)]


def course_test_names(chapter: Chapter) -> list[str]:
    """The course tests' names, read here from the files that define them."""
    return [node.name for path in sorted(chapter.course_tests.glob("test_*.py"))
            for node in ast.parse(path.read_bytes()).body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]


def reference_probes(chapter: Chapter, catalogue: Catalogue, seed: int) -> ReferenceProbes:
    """The grade's probe cases and the reference's answers to them; and how to measure how much
    of those answers is the reference's float32 rounding, should the student's disagree."""
    reference, payload = _drawn_cases(chapter, catalogue, seed)
    return payload, *_reference_answers(reference, payload)


@dataclass(frozen=True)
class ProbeWork:
    """reference_probes as trusted work in the background, which needs no sandbox: the cases
    first, drawn while the sandboxes start, then the reference's answers, computed while the
    student's module runs the same cases (they are needed only to judge its answer)."""

    cases: Future[tuple[ModuleType, bytes]]  # the reference module, and the cases' payload
    answers: Future[ReferenceAnswers]


def _reference_probes_in(background: ThreadPoolExecutor, chapter: Chapter, catalogue: Catalogue,
                         seed: int) -> ProbeWork:
    cases = background.submit(_drawn_cases, chapter, catalogue, seed)
    return ProbeWork(cases, background.submit(lambda: _reference_answers(*cases.result())))  # one thread: in order


def _drawn_cases(chapter: Chapter, catalogue: Catalogue, seed: int) -> tuple[ModuleType, bytes]:
    reference = load_trusted_module(chapter, "reference", catalogue.reference)
    return reference, probes.draw_cases(seed, reference)


def _reference_answers(reference: ModuleType, payload: bytes) -> ReferenceAnswers:
    answers = probes.outputs_of(reference, payload)
    return answers, partial(_rounding_slack, reference, payload, answers)


def _rounding_slack(reference: ModuleType, payload: bytes, answers: dict, cases: Sequence[str]) -> probes.Slack:
    single = probes.single_precision(cases, answers)  # the others' slack is 0: nothing to run
    if not single:
        return {}
    exact = probes.outputs_of(reference, probes.in_float64(probes.only_cases(payload, single)))
    return probes.rounding_slack(answers, exact)


def _probe_verdict(chapter: Chapter, catalogue: Catalogue, call: CallResult, settings: Settings,
                   expected: ProbeWork) -> probes.ProbeVerdict:
    payload = expected.cases.result()[1]
    if call.outcome is Outcome.TIMEOUT:
        reason = (f"{probes.PROBE_RUN}did not finish within {settings.probe_timeout:g} s (GRADER_PROBE_TIMEOUT): the "
                  f"probes read {probes.workload()}; a module that loops in Python over tokens or widths can take "
                  "that long (numpy's array operations over whole batches do not)")
        return probes.ProbeVerdict(agree=False, disagreements=(reason,), behaves_like=())
    if call.outcome is not Outcome.PASSED:
        reason = f"{probes.PROBE_RUN}{call.outcome.value}: {_as_shown(call.message)}"
        return probes.ProbeVerdict(agree=False, disagreements=(reason,), behaves_like=())
    try:
        student = probes.read_answer(call.output)
    except ValueError as exc:
        return probes.ProbeVerdict(agree=False, disagreements=(f"{probes.UNREADABLE}: {exc}",), behaves_like=())
    reference_outputs, slack = expected.answers.result()

    def pitfalls(cases: Sequence[str]) -> dict[str, list[dict]]:
        differing = probes.only_cases(payload, cases)
        return {
            pitfall: [probes.outputs_of(load_trusted_module(chapter, f"{pitfall}_{i}", source), differing)
                      for i, source in enumerate(sources)]
            for pitfall, sources in catalogue.recognisers.items()
        }

    return probes.judge(student, reference_outputs, pitfalls, slack)


def load_trusted_module(chapter: Chapter, name: str, source: bytes) -> ModuleType:
    """Load the reference or a pitfall mutant in this (trusted) process under a private name."""
    substrate_root = str(chapter.substrate.parent)
    if substrate_root not in sys.path:
        sys.path.insert(0, substrate_root)
    module_name = f"_grader_trusted_{chapter.id.replace('.', '_')}_{name}"
    spec = importlib.util.spec_from_loader(module_name, loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 - the course's own modules, never a student's
    return module


def _compiled(sent: Catalogue, sample: set[str], decoys: dict[str, bytes], alone_decoys: dict[str, bytes],
              filename: str, background: ThreadPoolExecutor) -> tuple[dict[bytes, bytes], Future[dict[bytes, bytes]]]:
    """Every module either pass may send, compiled once for both (this grade's disguise is new):
    what the runs alone need now, the rest in ``background`` while they run, one at a time, a
    core being idle then."""
    first = [*_correct(sent).values(), *alone_decoys.values(), *(m.source for m in sent.mutants if m.id in sample)]
    rest = [FORCED_FAILURE_SOURCE, *(d for label, d in decoys.items() if label not in alone_decoys),
            *(m.source for m in sent.mutants if m.id not in sample)]
    return compile_modules(first, filename), background.submit(compile_modules, rest, filename)


def _mutation_pass(runner: WarmRunner, catalogue: Catalogue, decoys: dict[str, bytes],
                   compiled: dict[bytes, bytes]) -> SuitePass:
    """Every mutant through the fast runner, among the variants and ``decoys``, with the forced
    failure that checks the machinery."""
    suite = runner.mutation_pass(
        reference=catalogue.reference,
        variants={**_variants(catalogue), **decoys},
        mutants={FORCED_FAILURE: FORCED_FAILURE_SOURCE, **{m.id: m.source for m in catalogue.mutants}},
        compiled=compiled,
    )
    forced = suite.runs.get(FORCED_FAILURE)
    if forced is not None and not forced.killed:
        raise RunnerError("the runner failed its own check: a module that cannot even be imported survived "
                          "the student's tests, so no outcome of this grade can be trusted")
    return suite


def alone_sample(catalogue: Catalogue, settings: Settings) -> set[str]:
    """Every pitfall mutant and a sample of the pool, drawn afresh for each grade.

    Not from the submission's seed: the pool's ids are in every report and the seed is a hash of
    the files, so a student could vary a comment until the sample held only mutants their tests
    really kill, and let a conftest kill the rest in the fast pass alone."""
    pool = [m.id for m in catalogue.mutants if not m.pitfall]
    sample = random.SystemRandom().sample(pool, min(settings.alone_sample, len(pool)))
    return {m.id for m in catalogue.mutants if m.pitfall} | set(sample)


def drawn_decoys(catalogue: Catalogue, settings: Settings) -> dict[str, bytes]:
    """Every one of the chapter's decoys (correct, each one edit from the reference, as a mutant
    is), labelled as variants after the real ones in an order drawn afresh for each grade: to the
    student, correct implementations like any other. The first ``settings.decoys`` of them also
    run alone before the fast pass (decoys_run_alone), and all of them run in it among the mutants.

    Alone, a suite that fails what differs from the reference's code, whatever it does, fails them
    too: a fingerprint of the reference leaked through one grade's report (which test killed which
    mutant) buys nothing in the next without those of the decoys as well. One of those run alone
    changes the code's shape: every other decoy edits a number or an operator, and a suite that
    recognised the reference by its calls and names, blind to those, passed (red team, round 16).
    Among the mutants, a suite that fails runs of the fast pass at random, beyond its honest kills,
    hits a decoy there as likely as a mutant: the runs alone check only a sample of those kills,
    and such a gamble passed 3 grades of 10 (red team, round 22)."""
    draw = random.SystemRandom()
    shaped = draw.sample(catalogue.shape_decoys, min(settings.decoys, len(catalogue.shape_decoys), 1))
    others = [decoy for decoy in (*catalogue.decoys, *catalogue.shape_decoys) if decoy not in shaped]
    draw.shuffle(others)
    alone = [*shaped, *others[:max(settings.decoys - len(shaped), 0)]]
    draw.shuffle(alone)  # the shape decoy's place drawn too
    chosen = [*alone, *others[len(alone) - len(shaped):]]
    first = len(catalogue.variants) + 1
    return {f"variant {first + index}": source for index, source in enumerate(chosen)}


def decoys_run_alone(decoys: dict[str, bytes], settings: Settings) -> dict[str, bytes]:
    """The decoys of drawn_decoys that also run alone."""
    return dict(list(decoys.items())[:settings.decoys])


def _alone_pass(runner: WarmRunner, catalogue: Catalogue, correct: dict[str, bytes], mutant_ids: set[str],
                compiled: dict[bytes, bytes], timeout: float) -> SuitePass:
    """The ``correct`` implementations and the mutants ``mutant_ids``, each run alone, all in one
    unforeseeable order: a kill the fast pass reports must happen here too."""
    mutants = {m.id: m.source for m in catalogue.mutants if m.id in mutant_ids}
    runs = runner.suite_runs([*correct.items(), *mutants.items()], timeout=timeout, compiled=compiled)
    return SuitePass(timeout=timeout, runs=runs, variants=tuple(run_id for run_id in correct if run_id != REFERENCE),
                     mutants=tuple(mutants))


def _margin(suite: SuitePass, catalogue: Catalogue, chapter: Chapter) -> int:
    """How many of the fast pass's kills (timeouts not counted: they count only as settled alone)
    the suite could lose and still pass the bar; 0 when it does not pass it anyway."""
    kills = {m.id for m in catalogue.mutants if m.id in suite.runs and suite.runs[m.id].killed
             and suite.runs[m.id].outcome is not Outcome.TIMEOUT}
    if not set(chapter.required_pitfalls) <= kills:
        return 0
    return max(len(kills) - scoring.kills_needed(chapter.threshold, len(catalogue.mutants)) + 1, 0)


def _after_the_pass(runner: WarmRunner, catalogue: Catalogue, suite: SuitePass, alone: SuitePass,
                    compiled: dict[bytes, bytes], settings: Settings, margin: int = 0) -> SuitePass:
    """``alone`` with more runs alone, made once the fast sandbox is closed and drawn afresh then:
    up to ``settle_limit`` of the mutants that timed out in the fast pass (such a timeout counts
    only as that run comes out, the others as survivors: scoring.settle_timeouts), and
    ``recheck_sample`` of the ones it killed, or more when the suite is only ``margin`` kills above
    the bar (scoring.kills_to_recheck). The correct implementations run again among them:
    a run that could tell it came after the first runs alone (by the pid counter, by the clock)
    would otherwise know it holds a mutant.

    Why a recheck: the sample run alone before the fast pass is only a check if the fast zygote
    cannot learn it, and the two sandboxes share a kernel whose machine-wide counters (the inode
    numbers of pipes, for one) a run can move and another read; a suite that learnt the sample
    could be honest on it alone. A sample drawn after the pass cannot have been learnt.

    Why a limit on the timeouts: these runs come after the fast sandbox has seen the reference,
    and what it did to state the host keeps for everyone can outlive it; a suite that stalled
    every mutant there and read such state here would buy a kill per settled mutant. An honest
    suite's genuine timeouts are rare (the budget is ten times the reference's run)."""
    draw = random.SystemRandom()
    fresh = sorted(m for m in suite.mutants if m not in alone.runs and m != FORCED_FAILURE)
    timed_out = [m for m in fresh if suite.runs[m].outcome is Outcome.TIMEOUT]
    killed = [m for m in fresh if suite.runs[m].killed and suite.runs[m].outcome is not Outcome.TIMEOUT]
    pool = [m.id for m in catalogue.mutants if not m.pitfall]
    rechecked = scoring.kills_to_recheck(margin, len(killed), len(pool), sum(m in alone.runs for m in pool),
                                         least=settings.recheck_sample, most=settings.recheck_limit,
                                         miss_odds=settings.recheck_miss_odds)
    chosen = {*draw.sample(timed_out, min(settings.settle_limit, len(timed_out))), *draw.sample(killed, rechecked)}
    if not chosen:
        return alone
    more = _alone_pass(runner, catalogue, _correct(catalogue, AGAIN), chosen, compiled, alone.timeout)
    return replace(alone, runs={**alone.runs, **more.runs}, variants=alone.variants + more.variants,
                   mutants=alone.mutants + more.mutants)


def _correct(catalogue: Catalogue, suffix: str = "") -> dict[str, bytes]:
    """The reference and every variant, by run id."""
    return {f"{run_id}{suffix}": source for run_id, source in {REFERENCE: catalogue.reference,
                                                                **_variants(catalogue)}.items()}


def _variants(catalogue: Catalogue) -> dict[str, bytes]:
    return {f"variant {i + 1}": source for i, source in enumerate(catalogue.variants)}


def _grade_tests(suite: SuitePass, alone: SuitePass, chapter: Chapter, catalogue: Catalogue,
                 collected: frozenset[str], hint: str) -> Tests:
    places = {m.id: chapter.mutant_places.get(m.function) for m in catalogue.pool.mutants}
    tests = scoring.grade_tests(
        validity=validity_rows(suite, collected, passed_alone=frozenset(
            run_id for run_id, run in alone.validity_runs().items() if not run.killed), hint=hint)
        + validity_rows(alone, collected, ALONE, hint=hint),
        mutants=tuple(_mutant_result(suite, m.id, m.pitfall, collected, places.get(m.id)) for m in catalogue.mutants
                      if m.id in suite.runs),
        threshold=chapter.threshold,
        required_pitfalls=chapter.required_pitfalls,
        alone={run_id: scoring.AloneRun(MUTANT_OUTCOMES[alone.runs[run_id].outcome], alone.runs[run_id].seconds)
               for run_id in alone.mutants},
        timeout=suite.timeout,
    )
    return replace(tests, place_hints=dict(chapter.place_hints))


def validity_rows(suite: SuitePass, collected: frozenset[str], how: str = "",
                  passed_alone: frozenset[str] = frozenset(), hint: str = TRUSTED_RUN_HINT) -> tuple[ValidityRun, ...]:
    """The report's rows for the runs on correct implementations. When the reference passed the
    first run (the files' order) and failed when run again last (the tests that killed most
    first), that row and every other failed one of the pass, whose runs all came after the first,
    say so: only the order, chance or an earlier run can make the difference.
    When an implementation failed here and passed alone (``passed_alone``: its run ids), the row
    says that: only what the runs share, the one collection, can make it. When one implementation
    run the same way twice (alone, before and after the mutation pass) failed once and passed once,
    only chance can (a flaky test was blamed on import-time state: red team, round 17)."""
    labels = {REFERENCE: "reference", REFERENCE_AGAIN: "reference (run again last)"}
    runs = suite.validity_runs()
    first, last = runs.get(REFERENCE), runs.get(REFERENCE_AGAIN)
    same_module_other_order = first is not None and not first.killed and last is not None and last.killed

    def otherwise(run_id: str, run: SuiteRun) -> str:
        twin = runs.get(run_id.removesuffix(AGAIN) if run_id.endswith(AGAIN) else run_id + AGAIN)
        if twin is not None and twin.killed != run.killed:
            return CHANCE_HINT
        if same_module_other_order:  # the order is shown to matter: say so of every run in another one
            return ORDER_HINT       # (a shared fixture was blamed on import-time state: red team, round 28)
        return FAST_ONLY_HINT if (REFERENCE if run_id == REFERENCE_AGAIN else run_id) in passed_alone else hint

    return tuple(
        ValidityRun(
            implementation=labels.get(run_id, run_id) + how,
            outcome=run.outcome.value,
            failed_test=shown_node(run.node, collected) if run.killed else None,
            message=trusted_run_message(run, otherwise(run_id, run)),
        )
        for run_id, run in runs.items()
    )


def trusted_run_message(run: SuiteRun, otherwise: str = TRUSTED_RUN_HINT) -> str:
    """Never the run's own message: it was written by the student's code while the trusted module
    was in memory, so it could carry that module's text out (docstrings, constants). One that
    names the runner's placeholder rule, or a name the implementation lacks, gets that explained;
    any other, ``otherwise`` (texts of ours only, so at most two bits per run come out)."""
    if not run.killed:
        return ""
    if UNDEFINED in run.message:
        return UNDEFINED_HINT
    return UNSWAPPABLE_HINT if UNSWAPPABLE in run.message else otherwise


def _mutant_result(suite: SuitePass, mutant_id: str, pitfall: bool, collected: frozenset[str],
                   where: str | None) -> MutantResult:
    run = suite.runs[mutant_id]
    return MutantResult(id=mutant_id, pitfall=pitfall, outcome=MUTANT_OUTCOMES[run.outcome],
                        killed_by=shown_node(run.node, collected) if run.killed else None, where=where)


def shown_node(node: str | None, collected: frozenset[str]) -> str | None:
    """A test id from a run on one of the grader's implementations, as a report may show it.

    Only ids the fast zygote collected, before any implementation entered the sandbox, are
    shown as they are. A run alone collects the suite with the implementation installed, so a
    parametrize id (or a test's name) can be built from it, docstrings and constants included,
    and a test can rewrite its own id while it runs: such an id is cut to the part that was
    collected, or not shown at all."""
    if node is None or node in collected:
        return node
    base = node.partition("[")[0]
    if base in {known.partition("[")[0] for known in collected}:
        return f"{base}[{HIDDEN_PART}]"
    return HIDDEN_NODE


def _error_report(request: GradeRequest, exc: Exception, started: float) -> Report:
    return Report(
        chapter=request.chapter,
        verdict=Verdict.ERROR,
        implementation=None,
        tests=None,
        pool_version="",
        pitfalls=(),
        backend=request.backend,
        submission="",
        error=str(exc),
        timing={"total": round(_since(started), 3)},
    )


def _as_shown(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A message from a run, as a report shows it: clipped, and pytest's explanation of an assert
    tidied. It named functions by their address ("where np.False_ = <function all at 0x7f...>"),
    which made a regrade's report differ, and numpy's booleans by their type (red team, round 27)."""
    return clipped(NUMPY_BOOL.sub(r"\1", ADDRESS.sub("", text)), limit)


def _timed(timing: dict[str, float], phase: str, work: Callable[..., T], *args: object) -> T:
    began = time.monotonic()
    try:
        return work(*args)
    finally:
        timing[phase] = _since(began)


def _since(start: float) -> float:
    return time.monotonic() - start
