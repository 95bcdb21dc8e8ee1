"""The trusted side of the warm runner: one sandboxed zygote per submission, kept busy.

The driver decides everything the tests must not learn: it names runs by opaque sequence tokens
(never "s03" or "reference"), shuffles their order with a per-submission seed (so a regrade sees
the same order), and sends each module's bytes only in the request that runs it. Test order
within a run is adaptive: the tests that killed most runs so far go first, so a killed mutant
usually stops after one test.

A zygote that collects the student's suite (``collect=True``, the fast mutation pass) has run the
student's code, so from then on nothing inside its sandbox can be trusted to keep runs apart: a
conftest can patch the zygote itself and watch every module sent through it. Such a runner's
kills are therefore checked by a second runner (``collect=False``) whose zygote never runs the
student's code: each of its children collects the suite for itself, so a run *alone* sees only
its own module (see ``mutation_pass`` and grading.py).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Self

from grader.chapter import Chapter
from grader.runner.channel import ANSWER, HELD, READY, Channel
from grader.runner.compiled import MAGIC, compiled_modules
from grader.runner.inside.draws import SEED_BITS
from grader.runner.inside.pipes import FDS_PER_RUN
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
from grader.sandbox import OPEN_FILES, OPEN_FILES_APART, Limits, Mount, SandboxBackend, SandboxedProcess

INSIDE = Path(__file__).resolve().parent / "inside"
RUNNER_TARGET = "/runner"
COURSE_TARGET = PurePosixPath("/course")
STUDENT_TESTS_TARGET = "/submission/tests"
SCRATCH = "/scratch"
MAX_MODULE_BYTES = 1 << 20
# What the killers' names may take of a request: the names are the student's, and a conftest can
# make them long and of characters JSON spells in 12 bytes. Far below a pipe's buffer (64 KiB), so
# that requests queued for the zygote do not wait on one another's names.
MAX_ORDER_BYTES = 16 << 10
# The course tests' rows a luong.py's runs may report (the chapter's tests, parametrized, and the
# errors of files that fail to import), and how long a test's id may be for the reruns to skip it.
# The rows are the student's process's to write: one that reported 450 new ones a run, each run
# ending unfinished so that the driver ran the course tests again, made a report of 44 MB, and
# longer ids a request over the frame's limit (red team, round 29).
MAX_COURSE_ROWS = 200
MAX_SKIPPED_NODE_CHARS = 1000
STARTUP_SECONDS = 120.0  # imports and collection, once per sandbox
ANSWER_SLACK_SECONDS = 10.0  # beyond a run's own timeout: kill, reap and answer
# The first reference run has no earlier run to derive its timeout from. A suite slower than this on
# the reference is too slow to grade by mutation at all, and a hostile one (a fork storm, a hang)
# must not hold the sandbox for minutes.
FIRST_RUN_SECONDS = 20.0
# Requests queued per worker: the zygote reads the next one the moment a child ends, instead of
# idling while this side handles an answer and sends the next request.
PIPELINE_DEPTH = 2
# How many of the latest requests' answers the test order may lack (see suite_runs). With several
# workers, a run that passes (every test: some twenty times a kill's time) holds the oldest place
# while the others finish short runs; an order that needed the answers of all but the window's
# last requests made the driver wait for it with a worker idle (a fifth of the example's mutation
# pass, 0.8 to 1.2 s of it; this lag: 0.2 s). A longer lag learns the killers later (32: more child
# CPU than 16, measured by bench/mutation_speed.py's breakdown).
ORDER_LAG = 16
COLLECTION_DRAWS = "#collection"  # draws_seed's label for the collection: no run id starts with "#"
# The most runs whose pipes a zygote keeping its runs apart can hold (hold_pipes): what its sandbox's
# limit of open files adds to everyone's (sandbox.OPEN_FILES_APART).
MAX_HELD_RUNS = (OPEN_FILES_APART - OPEN_FILES) // FDS_PER_RUN
THREAD_ENV = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def timeout_from_reference(seconds: float) -> float:
    """A run's wall-clock budget from the reference run's: generous, so only a hang times out."""
    return max(0.5, 10.0 * seconds + 0.2)


def course_target(chapter: Chapter, path: Path) -> str:
    """Where a file of the course material is mounted inside a sandbox."""
    return str(COURSE_TARGET / path.relative_to(chapter.manifest.parent.parent))


def module_file(chapter: Chapter) -> str:
    """The graded module's ``__file__`` inside: where it would be in the substrate."""
    leaf = PurePosixPath(*chapter.student.module.split(".")[1:]).with_suffix(".py")
    return str(PurePosixPath(course_target(chapter, chapter.substrate)) / leaf)


class WarmRunner:
    """A context manager around one zygote; see the module docstring."""

    def __init__(self, *, chapter: Chapter, backend: SandboxBackend, student_tests: Path | None,
                 limits: Limits = Limits(), workers: int = 2, seed: int = 0, collect: bool = True,
                 private: bool = False) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if student_tests is not None and not student_tests.is_dir():
            raise ValueError(f"student tests folder {student_tests} does not exist")
        self.chapter, self.backend, self.student_tests = chapter, backend, student_tests
        self.limits, self.workers, self.seed, self.collect = limits, workers, seed, collect
        self.private = private  # a sandbox that reads no file another one reads (SandboxBackend.spawn)
        # each run of a zygote that collects nothing in namespaces of its own, where the backend can
        # (inside/apart.py): the clean one's runs alone must not reach each other through counters
        self.apart = not collect and backend.keeps_runs_apart
        self.collected: tuple[str, ...] = ()
        self.collection_errors: tuple[str, ...] = ()
        self.landlock_abi = 0
        self.magic = ""  # the sandbox Python's bytecode version (hex)
        self._process: SandboxedProcess | None = None
        self._channel: Channel | None = None
        self._tokens = 0
        self._ready_by = 0.0
        self._waiting_to_collect = False
        self._kills: Counter[str] = Counter()

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def draws_seed(self, run_id: str) -> int:
        """The seed of the random numbers the student's tests draw without one in run ``run_id``
        (inside/draws.py), from the submission's keyed seed (grade_key), so a regrade draws the
        same. Each pass draws its own for a module: a fast zygote that learnt a module's seed
        cannot recognise that module by it in a run alone. The collection's (COLLECTION_DRAWS) is
        one for both, so both collect the same tests."""
        run_pass = "suite" if self.collect or run_id == COLLECTION_DRAWS else "alone"
        return random.Random(f"{self.seed}:draws:{run_pass}:{run_id}").getrandbits(SEED_BITS)

    def _course_target(self, path: Path) -> str:
        return course_target(self.chapter, path)

    def mounts(self) -> list[Mount]:
        """The read-only view inside: substrate, course tests, the golden values, the runner, the
        student's tests. The golden file alone of the fixtures: beside it is the torch oracle that
        made it, a whole correct implementation, which a luong.py printed into its course tests'
        messages (red team, round 29)."""
        course = [self.chapter.substrate, self.chapter.course_tests, self.chapter.golden]
        mounts = [Mount(path, self._course_target(path)) for path in course]
        mounts.append(Mount(INSIDE, RUNNER_TARGET))
        if self.student_tests is not None:
            mounts.append(Mount(self.student_tests, STUDENT_TESTS_TARGET))
        return mounts

    def _config(self) -> dict:
        substrate = PurePosixPath(self._course_target(self.chapter.substrate))
        return {"kind": "config", "sys_path": [str(substrate.parent)], "module": self.chapter.student.module,
                "module_file": module_file(self.chapter),
                "course_tests": self._course_target(self.chapter.course_tests),
                "student_tests": STUDENT_TESTS_TARGET if self.student_tests is not None else None,
                "collect": self.collect, "scratch": SCRATCH, "runner_dir": RUNNER_TARGET, "workers": self.workers,
                "wait_to_collect": self._waiting_to_collect, "draws": self.draws_seed(COLLECTION_DRAWS),
                "apart": self.apart, "open_files": OPEN_FILES}

    def start(self) -> None:
        """Spawn the zygote and wait until it has imported everything and collected the tests."""
        self.launch()
        self.await_ready()

    def launch(self, *, wait_to_collect: bool = False) -> None:
        """Spawn the zygote and send its configuration, without waiting for it (so that several
        sandboxes can start at once). With ``wait_to_collect`` it imports everything and then
        waits to collect the tests, which runs the student's code, until await_ready()."""
        self._waiting_to_collect = wait_to_collect and self.collect
        self._process = self.backend.spawn([self.backend.python, f"{RUNNER_TARGET}/zygote.py"],
                                           mounts=self.mounts(), limits=self.limits, env=THREAD_ENV,
                                           private=self.private, apart=self.apart)
        self._channel = Channel(self._process, shows_sandbox=not self.collect)
        self._ready_by = time.monotonic() + min(STARTUP_SECONDS, self.limits.wall_seconds)
        self._channel.send(self._config(), [], deadline=self._ready_by)

    def await_ready(self) -> None:
        """Wait until the launched zygote has imported everything (and collected the tests)."""
        if self._waiting_to_collect:
            self._waiting_to_collect = False
            self._ready_by = time.monotonic() + min(STARTUP_SECONDS, self.limits.wall_seconds)
            self._live_channel().send({"kind": "collect"}, [], deadline=self._ready_by)
        ready, _ = self._live_channel().receive(READY, deadline=self._ready_by)
        self.collected = tuple(ready["collected"])
        self.collection_errors = tuple(ready["collection_errors"])
        self.landlock_abi = ready["landlock_abi"]
        self.magic = ready["magic"]
        if not self.landlock_abi:
            self.workers = 1  # without Landlock, concurrent children could see each other's files

    def hold_pipes(self, runs: int) -> None:
        """Have the zygote make the pipes of the next ``runs`` runs now, and give no later run any
        other (inside/pipes.py: the inode numbers of pipes made later can carry what the fast
        sandbox's runs did). Only with no run in flight, and once."""
        if not self.apart:
            raise ValueError("only a runner that keeps its runs apart holds their pipes")
        if not 0 <= runs <= MAX_HELD_RUNS:
            raise ValueError(f"a zygote can hold the pipes of 0 to {MAX_HELD_RUNS} runs, not {runs}")
        deadline = time.monotonic() + ANSWER_SLACK_SECONDS
        channel = self._live_channel()
        channel.send({"kind": "hold", "runs": runs}, [], deadline=deadline)
        held, _ = channel.receive(HELD, deadline=deadline)
        if held["runs"] != runs:
            raise channel.failure(f"the zygote held the pipes of {held['runs']} runs, not {runs}")

    def close(self) -> None:
        """Ask the zygote to stop, then close the sandbox: afterwards nothing of it is running."""
        if self._process is None:
            return
        try:
            if self._channel is not None:
                self._channel.send({"kind": "shutdown"}, [], deadline=time.monotonic() + 1.0)
        except RunnerError:
            pass  # already dead: close() below still cleans up
        self._process.close()
        self._process = self._channel = None

    # -- requests --------------------------------------------------------------------------

    def _live_channel(self) -> Channel:
        if self._channel is None:
            raise RunnerError("the runner is not started (use it as a context manager)")
        return self._channel

    def _send(self, request: dict, blobs: list[bytes], deadline: float | None = None) -> int:
        """Send a request; ``deadline`` (default: the slack from now) bounds the write, which
        waits for the zygote to read once the request outgrows the pipe's buffer, and the zygote
        reads only while a worker is free."""
        if not blobs[0] or len(blobs[0]) > MAX_MODULE_BYTES:
            raise ValueError(f"module must be 1 to {MAX_MODULE_BYTES} bytes, got {len(blobs[0])}")
        self._tokens += 1
        deadline = time.monotonic() + ANSWER_SLACK_SECONDS if deadline is None else deadline
        channel = self._live_channel()
        channel.stop_quoting()  # a run's code is the student's, or runs the student's tests
        channel.send({**request, "run": self._tokens}, blobs, deadline=deadline)
        return self._tokens

    def _receive(self, deadline: float) -> tuple[dict, list[bytes]]:
        return self._live_channel().receive(ANSWER, deadline=deadline)

    def _roundtrip(self, request: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
        token = self._send(request, blobs)
        answer, answer_blobs = self._receive(time.monotonic() + request["timeout"] + ANSWER_SLACK_SECONDS)
        if answer["run"] != token or answer["kind"] != request["kind"]:
            raise self._live_channel().failure(f"answer for run {answer['run']} while waiting for {token}")
        return answer, answer_blobs

    def call(self, module: bytes, entry: str, payload: bytes, timeout: float) -> CallResult:
        """Run ``/runner/<entry>.py``'s ``run(module, payload)`` in a child with ``module`` installed."""
        if not entry.isidentifier():
            raise ValueError(f"entry must be a module name under {RUNNER_TARGET}, got {entry!r}")
        answer, blobs = self._roundtrip({"kind": "call", "entry": entry, "timeout": timeout}, [module, payload])
        return CallResult(outcome=Outcome(answer["outcome"]), output=blobs[0] if blobs else b"",
                          message=answer["message"] or answer["output"], seconds=answer["seconds"])

    def course_tests(self, module: bytes, *, timeout: float, budget: float) -> list[TestOutcome]:
        """Every course test on ``module``; a test that hangs or crashes the child is rerun around,
        within ``budget`` seconds in all (a module that hangs every test must not hang the grade)."""
        results: dict[str, TestOutcome] = {}
        collected: list[str] | None = None
        ends = time.monotonic() + budget
        while True:
            attempt = min(timeout, max(0.0, ends - time.monotonic()))
            skip = sorted(node for node in results if len(node) <= MAX_SKIPPED_NODE_CHARS)
            answer, _ = self._roundtrip({"kind": "course", "timeout": attempt, "skip": skip}, [module])
            collected = collected if collected is not None else answer["collected"][:MAX_COURSE_ROWS]
            for test in answer["tests"]:
                results[test["node"]] = TestOutcome(test["node"], Outcome(test["outcome"]), test["message"],
                                                    test["seconds"])
            if len(results) > MAX_COURSE_ROWS:
                return _too_many_rows(results, collected)
            if answer["complete"]:
                break
            culprit = answer["node"] or "<collection>"
            outcome = Outcome.TIMEOUT if answer["outcome"] == Outcome.TIMEOUT.value else Outcome.ERROR
            results[culprit] = TestOutcome(culprit, outcome, answer["message"], answer["seconds"])
            if answer["node"] is None:
                break  # died outside any test: nothing left to isolate
            if time.monotonic() >= ends:
                message = f"not run: the course tests used up their {budget:g} s"
                results.update({node: TestOutcome(node, Outcome.TIMEOUT, message, 0.0)
                                for node in collected if node not in results})
                break
        order = {node: index for index, node in enumerate(collected)}
        return sorted(results.values(), key=lambda test: order.get(test.node, -1))

    # -- the student's suite ---------------------------------------------------------------

    def test_order(self) -> list[str]:
        """Collected tests, those that killed most runs so far first (collection order breaks ties)."""
        return sorted(self.collected, key=lambda node: -self._kills[node])

    def _killers_first(self) -> list[str]:
        """What a request says of test_order(): the tests that killed a run so far, in order (the
        child runs the rest after them, in collection order, which is the same order). Every
        request carries it, and all of a suite of thousands of tests filled a pipe's buffer. Only as
        many as fit in MAX_ORDER_BYTES: a conftest that made the zygote collect a few tests with
        names of 30,000 bytes, each failing one run, grew every request past the frame's limit and
        crashed the grade (red team, round 24); the ones left out run in collection order."""
        order, size = [], 0
        for node in (node for node in self.test_order() if self._kills[node]):
            size += len(json.dumps(node)) + 2  # as the header spells it, with a comma and a space
            if size > MAX_ORDER_BYTES:
                break
            order.append(node)
        return order

    def suite_runs(self, runs: Sequence[tuple[str, bytes]], *, timeout: float, stop_early: bool = True,
                   last: tuple[str, bytes] | None = None,
                   compiled: Mapping[bytes, bytes] | None = None) -> dict[str, SuiteRun]:
        """Each (id, module) through the student's suite, in a seeded shuffled order, pipelined;
        ``last``, if given, is sent after all the others (it may still overlap the final few).
        Without ``collect``, each run collects the suite in its own child: a run alone. A module
        found in ``compiled`` (trusted modules only, see compiled.py) is sent as its code."""
        ids = [run_id for run_id, _ in runs] + ([last[0]] if last else [])
        if len(set(ids)) != len(ids):
            raise ValueError("run ids must be unique")
        if self.student_tests is None:
            raise ValueError("this runner was started without student tests")
        if self.collect and (self.collection_errors or not self.collected):
            message = "\n".join(self.collection_errors) or "no tests were collected"
            return {run_id: SuiteRun(run_id, Outcome.ERROR, None, message[-2048:], "", 0.0, 0.0, None)
                    for run_id in ids}
        kind = "suite" if self.collect else "alone"
        queue = list(runs)
        # Runs alone in an order nobody can foresee: runs of one sandbox can still pass a few bits
        # on (the pid counter, timing), so a test that could tell which run alone comes first
        # could hold the others to it. The fast pass's order is the submission's, so a regrade
        # reports the same killing tests.
        (random.Random(f"{self.seed}:{self._tokens}") if self.collect else random.SystemRandom()).shuffle(queue)
        if last is not None:
            queue.insert(0, last)  # the queue is sent from its end
        window = PIPELINE_DEPTH * self.workers
        # one worker answers in send order, so waiting for the oldest answer never idles it
        lag = window if self.workers == 1 else max(window, ORDER_LAG)
        sent: list[str] = []  # run ids by send index
        in_flight: dict[int, tuple[int, float]] = {}  # token -> (send index, deadline)
        results: dict[int, SuiteRun] = {}  # by send index
        counted = 0  # results folded into the kill counts so far, in send order
        while queue or in_flight:
            while queue and len(in_flight) < window:
                # Request i is ordered by the kills of requests 0 .. i-lag-1 exactly, so the order
                # (and so which test is reported as the killer) never depends on which of the
                # parallel runs happened to answer first: a regrade gives the same report.
                counted = self._count_kills(results, counted, upto=len(sent) - lag)
                if counted < len(sent) - lag:
                    break  # an older run is still out: wait for its answer first
                run_id, module = queue.pop()
                code = compiled.get(module) if compiled else None
                request = {"kind": kind, "timeout": timeout, "draws": self.draws_seed(run_id),
                           "order": self._killers_first(), "stop_early": stop_early,
                           "form": "source" if code is None else "code"}
                # a queued request may wait for the run ahead of it, hence the depth in its deadline
                deadline = time.monotonic() + PIPELINE_DEPTH * timeout + ANSWER_SLACK_SECONDS
                token = self._send(request, [module if code is None else code], deadline)
                in_flight[token] = (len(sent), deadline)
                sent.append(run_id)
            answer, _ = self._receive(min(deadline for _, deadline in in_flight.values()))
            if answer["run"] not in in_flight or answer["kind"] != kind:
                raise self._live_channel().failure(f"unexpected answer for run {answer['run']}")
            index, _ = in_flight.pop(answer["run"])
            results[index] = self._suite_run(sent[index], answer)
        self._count_kills(results, counted, upto=len(sent))
        by_id = {sent[index]: run for index, run in results.items()}
        return {run_id: by_id[run_id] for run_id in ids}

    def _count_kills(self, results: Mapping[int, SuiteRun], counted: int, *, upto: int) -> int:
        """Fold the results of send indexes ``counted`` .. ``upto``-1 into the kill counts, in send
        order, stopping at the first that has not answered yet; return the new ``counted``."""
        while counted < upto and counted in results:
            run = results[counted]
            if run.killed and run.node is not None:
                self._kills[run.node] += 1
            counted += 1
        return counted

    def _suite_run(self, run_id: str, answer: dict) -> SuiteRun:
        return SuiteRun(run_id, Outcome(answer["outcome"]), answer["node"], answer["message"], answer["output"],
                        answer["seconds"], answer["test_seconds"], answer["install_seconds"],
                        answer["test_cpu_seconds"], answer["cpu_seconds"], answer["page_faults"],
                        answer.get("skipped", 0), tuple(answer.get("skipped_named", ())))

    def mutation_pass(self, *, reference: bytes, variants: Mapping[str, bytes], mutants: Mapping[str, bytes],
                      stop_early: bool = True, compiled: Mapping[bytes, bytes] | None = None) -> SuitePass:
        """Reference first (it sets the timeout), then variants and mutants shuffled, then the reference
        again (only where runs share a collecting zygote: alone, a run cannot depend on another).
        Every module here is the grader's own, so each is sent compiled (see compiled.py): from
        ``compiled`` when given (a caller running several passes over one catalogue compiles it
        once), else compiled here."""
        reserved = {REFERENCE, REFERENCE_AGAIN} & (set(variants) | set(mutants))
        if reserved or set(variants) & set(mutants):
            raise ValueError(f"variant and mutant ids must be distinct and not {sorted(reserved)}")
        if self.magic != MAGIC.hex():
            # Never the source instead: its comments would enter the sandbox (and this runner's
            # word is the student's conftest's once it has collected).
            raise RunnerError(f"the sandbox's Python reads bytecode {self.magic}, the grader's {MAGIC.hex()}: the "
                              "grader's modules enter a sandbox only compiled, so both must be one Python version")
        if compiled is None:
            compiled = compiled_modules([reference, *variants.values(), *mutants.values()], module_file(self.chapter))
        began = time.monotonic()
        first = self.suite_runs([(REFERENCE, reference)], timeout=FIRST_RUN_SECONDS, compiled=compiled)[REFERENCE]
        # Timed here, not by the zygote's answer: a zygote that collected the student's tests says
        # what their conftest wants it to.
        first_seconds = time.monotonic() - began
        if first.killed:  # invalid already: no kill could count, and no timeout can be derived
            return SuitePass(timeout=FIRST_RUN_SECONDS, runs={REFERENCE: first}, variants=(), mutants=())
        timeout = timeout_from_reference(first_seconds)
        rest = self.suite_runs([*variants.items(), *mutants.items()], timeout=timeout, stop_early=stop_early,
                               last=(REFERENCE_AGAIN, reference) if self.collect else None, compiled=compiled)
        return SuitePass(timeout=timeout, runs={REFERENCE: first, **rest}, variants=tuple(variants),
                         mutants=tuple(mutants))


def _too_many_rows(results: dict[str, TestOutcome], collected: list[str]) -> list[TestOutcome]:
    """What a course run that reported more than MAX_COURSE_ROWS rows ends with: the rows of the
    tests it said it collected, first, and one error saying the rest were dropped."""
    named = [results[node] for node in collected if node in results]
    dropped = TestOutcome("<report>", Outcome.ERROR,
                          f"the course tests' runs reported {len(results)} results, more than the "
                          f"{MAX_COURSE_ROWS} any course test file makes; the rest are not shown", 0.0)
    return [*named[:MAX_COURSE_ROWS], dropped]
