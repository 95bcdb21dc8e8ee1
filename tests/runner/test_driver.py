"""The driver against real zygotes: course tests, calls, the mutation pass, failures."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from grader.runner.driver import WarmRunner
from grader.runner.inside.loader import UNDEFINED, UNSWAPPABLE
from grader.runner.results import REFERENCE, REFERENCE_AGAIN, Outcome, RunnerError
from grader.sandbox import Limits



COURSE = {"timeout": 10.0, "budget": 30.0}


def test_course_tests_pass_on_the_reference_and_name_the_pitfall(runner_for, reference, pitfalls) -> None:
    runner = runner_for(None)
    on_reference = runner.course_tests(reference, **COURSE)
    assert len(on_reference) == 11 and {test.outcome for test in on_reference} == {Outcome.PASSED}
    on_s07 = {test.node.split("::")[-1]: test for test in runner.course_tests(pitfalls["s07"], **COURSE)}
    assert on_s07["test_dot_is_not_scaled"].outcome is Outcome.FAILED
    assert on_s07["test_dot_is_not_scaled"].message


def test_a_course_test_failure_inside_numpy_is_placed_in_the_module(runner_for, reference) -> None:
    """numpy raises, but the place a student can fix is the line of luong.py that called it."""
    broken = reference + (b"\n_scores = LuongAttention.scores\n"
                          b"def _einsum_wrong(self, *a, **k):\n"
                          b"    np.einsum('ij,jk->ik', np.ones((2, 3)), np.ones((4, 5)))\n"
                          b"    return _scores(self, *a, **k)\n"
                          b"LuongAttention.scores = _einsum_wrong\n")
    line = broken.decode().splitlines().index("    np.einsum('ij,jk->ik', np.ones((2, 3)), np.ones((4, 5)))") + 1
    failed = [test for test in runner_for(None).course_tests(broken, **COURSE) if test.outcome is not Outcome.PASSED]
    # the lines of luong.py it passed through, outermost first, the last three: here the forward
    # that called scores, then the wrong line
    assert failed and all(re.match(rf"luong\.py:(\d+→)*{line}: ValueError", test.message) for test in failed), failed
    assert any("→" in test.message.partition(":")[2].partition(":")[0] for test in failed), failed


def test_course_tests_on_a_module_that_does_not_import_all_error(runner_for) -> None:
    results = runner_for(None).course_tests(b"raise RuntimeError('broken on purpose')\n", **COURSE)
    assert len(results) == 11 and {test.outcome for test in results} == {Outcome.ERROR}
    # each says why: no report shows the run's own message, which they pointed to (red team, round 28)
    assert {test.message for test in results} == {"the module failed to import: RuntimeError: broken on purpose"}


@pytest.mark.slow
def test_a_hanging_course_test_times_out_and_the_rest_still_run(runner_for, reference) -> None:
    hangs_on_scaling = reference.replace(b"import numpy as np", b"import numpy as np\nimport time", 1)
    hangs_on_scaling += b"\n_scores = LuongAttention.scores\n" \
                        b"def _slow(self, *a, **k):\n    while self.score == 'dot': pass\n    return _scores(self, *a, **k)\n" \
                        b"LuongAttention.scores = _slow\n"
    results = runner_for(None).course_tests(hangs_on_scaling, timeout=2.0, budget=30.0)
    outcomes = {test.node.split("::")[-1]: test.outcome for test in results}
    assert len(results) == 11
    assert outcomes["test_dot_is_not_scaled"] is Outcome.TIMEOUT
    assert outcomes["test_general_is_not_symmetric"] is Outcome.PASSED


def test_a_module_that_hangs_every_course_test_ends_within_the_budget(runner_for, reference) -> None:
    hangs = reference + b"\ndef _forever(self, *a, **k):\n    while True: pass\nLuongAttention.forward = _forever\n"
    results = runner_for(None).course_tests(hangs, timeout=1.0, budget=3.0)
    assert len(results) == 11
    not_run = [test for test in results if test.message.startswith("not run: the course tests used up")]
    assert not_run and all(test.outcome is Outcome.TIMEOUT for test in not_run)
    assert sum(test.outcome is Outcome.TIMEOUT for test in results) >= 3  # a few attempts, then the budget


def test_call_returns_the_entry_answer_or_its_error(runner_for, reference) -> None:
    runner = runner_for(None)
    bad_payload = runner.call(reference, "probe", b"not an npz", timeout=10.0)
    assert bad_payload.outcome is Outcome.ERROR and bad_payload.output == b""
    missing = runner.call(reference, "no_such_entry", b"", timeout=10.0)
    assert missing.outcome is Outcome.ERROR and "no_such_entry" in missing.message
    with pytest.raises(ValueError):
        runner.call(reference, "../etc/passwd", b"", timeout=1.0)


def test_the_oracle_suite_kills_every_pitfall_and_stays_valid(chapter, runner_for, reference, pitfalls) -> None:
    variants = {path.stem: path.read_bytes() for path in chapter.variants}
    runner = runner_for(chapter.oracle_suite, seed=7)
    result = runner.mutation_pass(reference=reference, variants=variants, mutants=pitfalls)
    assert result.valid and not result.flaky, result.runs
    assert result.killed == set(pitfalls)
    assert result.runs[REFERENCE_AGAIN].outcome is Outcome.PASSED
    assert result.timeout >= 0.5
    assert all(result.runs[m].node is not None for m in pitfalls)


def test_a_suite_that_only_passes_on_the_reference_text_is_invalid(chapter, suite_folder, runner_for,
                                                                   reference) -> None:
    folder = suite_folder({"test_pin.py": """
        from tinyllm.seq2seq import luong
        def test_pins_an_implementation_detail():
            assert luong.LuongAttention.__init__.__code__.co_firstlineno == %d
    """ % _line_of_init(reference)})
    variants = {path.stem: path.read_bytes() for path in chapter.variants}
    result = runner_for(folder).mutation_pass(reference=reference, variants=variants, mutants={})
    assert result.runs[REFERENCE].outcome is Outcome.PASSED
    assert not result.valid


def _line_of_init(source: bytes) -> int:
    lines = source.decode().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if "def __init__" in line)


def test_killers_move_to_the_front(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_order.py": """
        from tinyllm.seq2seq.luong import LuongAttention
        def test_a_never_fails():
            pass
        def test_b_needs_the_marker():
            assert not hasattr(LuongAttention, "MUTATED")
    """})
    runner = runner_for(folder, workers=1)
    mutant = reference + b"\nLuongAttention.MUTATED = True\n"
    assert runner.test_order()[0] == "test_order.py::test_a_never_fails"
    runs = runner.suite_runs([("m1", mutant)], timeout=10.0)
    assert runs["m1"].node == "test_order.py::test_b_needs_the_marker"
    assert runner.test_order()[0] == "test_order.py::test_b_needs_the_marker"


def test_collection_errors_make_every_run_an_error(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_broken.py": "import not_a_module_anywhere\n"})
    runner = runner_for(folder)
    assert runner.collection_errors
    runs = runner.suite_runs([("ref", reference)], timeout=5.0)
    assert runs["ref"].outcome is Outcome.ERROR and "not_a_module_anywhere" in runs["ref"].message


def test_ids_too_many_to_send_are_a_collection_error_that_says_so(suite_folder, runner_for, reference) -> None:
    """3,000 ids of 400 characters: the zygote died framing them, and the grade said only that it
    had closed its output (red team, round 30)."""
    folder = suite_folder({"test_many.py": """
        import pytest

        @pytest.mark.parametrize("i", range(3000), ids=lambda i: "x" * 400 + str(i))
        def test_many(i):
            assert i >= 0
        """})
    runner = runner_for(folder)
    assert runner.collected == ()
    assert runner.collection_errors[-1].startswith("the tests collected 3000 test ids of 1285890 bytes in all, "
                                                   "more than the runner can take (1048576 bytes)")
    runs = runner.suite_runs([("ref", reference)], timeout=5.0)
    assert runs["ref"].outcome is Outcome.ERROR and "parametrize fewer cases" in runs["ref"].message


def test_a_dead_zygote_raises_instead_of_hanging(runner_for, reference) -> None:
    runner = runner_for(None)
    runner._process.kill()
    with pytest.raises(RunnerError, match="zygote"):
        runner.course_tests(reference, timeout=5.0, budget=5.0)


def test_bad_arguments_are_refused(runner_for, reference, chapter, backend) -> None:
    from grader.runner.driver import WarmRunner

    with pytest.raises(ValueError):
        WarmRunner(chapter=chapter, backend=backend, student_tests=None, workers=0)
    runner = runner_for(None)
    with pytest.raises(ValueError, match="student tests"):
        runner.suite_runs([("a", reference)], timeout=1.0)
    with pytest.raises(ValueError, match="module"):
        runner.course_tests(b"", **COURSE)


def test_a_run_reports_what_the_child_cost(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_cost.py": """
        import time
        def test_burns_cpu_and_touches_memory():
            block = bytearray(16 << 20)  # 4096 pages, each written below
            for offset in range(0, len(block), 4096):
                block[offset] = 1
            ends = time.process_time() + 0.3
            while time.process_time() < ends:
                pass
    """})
    run = runner_for(folder, workers=1).suite_runs([("ref", reference)], timeout=20.0)["ref"]
    assert run.outcome is Outcome.PASSED, run.message
    assert 0.3 <= run.test_cpu_seconds <= run.cpu_seconds <= run.seconds + 0.05
    assert run.page_faults >= 4096


def test_kernel_objects_that_outlive_a_run_are_refused(suite_folder, runner_for, reference) -> None:
    """SysV IPC, POSIX message queues and keyrings would let one run leave data for the next, and
    so would the zygote's limits, priority or affinity, which every child inherits."""
    folder = suite_folder({"test_kernel_objects.py": """
        import ctypes, errno, os
        libc = ctypes.CDLL(None, use_errno=True)
        CALLS = {
            "shmget": lambda: libc.shmget(0x4C33, 64, 0o1000 | 0o600),
            "semget": lambda: libc.semget(0x4C33, 1, 0o1000 | 0o600),
            "msgget": lambda: libc.msgget(0x4C33, 0o1000 | 0o600),
            "mq_open": lambda: libc.mq_open(b"/l43", 0o100 | 2, 0o600, None),
            "add_key": lambda: libc.syscall({"x86_64": 248, "aarch64": 217}[os.uname().machine], b"user", b"l43",
                                            b"x", 1, -4),
        }
        def test_each_is_refused():
            for name, call in CALLS.items():
                ctypes.set_errno(0)
                assert call() == -1 and ctypes.get_errno() == errno.EPERM, name

        def test_the_zygote_is_out_of_reach_but_the_run_itself_is_not():
            import resource, pytest
            zygote = os.getppid()
            for call in (lambda: resource.prlimit(zygote, resource.RLIMIT_RSS, (1, resource.RLIM_INFINITY)),
                         lambda: os.setpriority(os.PRIO_PROCESS, zygote, 5),
                         lambda: os.setpriority(os.PRIO_USER, 0, 5),
                         lambda: os.sched_setaffinity(zygote, {0})):
                with pytest.raises(PermissionError):
                    call()
            resource.setrlimit(resource.RLIMIT_RSS, (1 << 40, resource.RLIM_INFINITY))
            os.nice(1)
            os.sched_setaffinity(0, os.sched_getaffinity(0))

        def test_files_shared_with_the_other_sandbox_carry_no_locks_or_notices():
            import fcntl, pytest, struct
            with open(__file__, "rb") as shared:
                for call in (lambda: fcntl.flock(shared, fcntl.LOCK_SH | fcntl.LOCK_NB),
                             lambda: fcntl.lockf(shared, fcntl.LOCK_SH | fcntl.LOCK_NB),
                             lambda: fcntl.fcntl(shared, 36, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 1, 0))):
                    with pytest.raises(PermissionError):
                        call()
                assert fcntl.fcntl(shared, fcntl.F_GETFD) & fcntl.FD_CLOEXEC  # other commands work
            ctypes.set_errno(0)
            assert libc.inotify_init1(0) == -1 and ctypes.get_errno() == errno.EPERM

        def test_the_page_cache_of_shared_files_can_be_neither_emptied_nor_probed():
            import mmap, pytest
            with open(__file__, "rb") as shared:
                for call in (lambda: os.posix_fadvise(shared.fileno(), 0, 0, os.POSIX_FADV_DONTNEED),
                             lambda: os.preadv(shared.fileno(), [bytearray(1)], 0, os.RWF_NOWAIT),
                             lambda: os.preadv(shared.fileno(), [bytearray(1)], 0, 0)):
                    with pytest.raises(PermissionError):
                        call()
                mapped = mmap.mmap(shared.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)  # a shared one is refused
                for advice in (20, 21):  # MADV_COLD, MADV_PAGEOUT
                    with pytest.raises(PermissionError):
                        mapped.madvise(advice)
                mapped.madvise(mmap.MADV_DONTNEED)  # malloc's advice still works
            with pytest.raises(PermissionError):
                os.memfd_create("l43")  # numbered from a counter of the whole machine
            ctypes.set_errno(0)  # the whole machine's free memory, which a run could move
            assert libc.sysinfo(ctypes.create_string_buffer(128)) == -1 and ctypes.get_errno() == errno.EPERM
            ctypes.set_errno(0)  # unfiltered, a null address would give ENOMEM
            assert libc.mincore(None, 4096, ctypes.create_string_buffer(1)) == -1 and ctypes.get_errno() == errno.EPERM
    """})
    run = runner_for(folder, workers=1).suite_runs([("ref", reference)], timeout=20.0)["ref"]
    assert run.outcome is Outcome.PASSED, run.message


def test_memory_mapped_by_the_zygote_is_not_shared_with_the_runs(suite_folder, runner_for, reference) -> None:
    """A mapping the fast zygote made while it collected would be the same memory in every run
    forked from it, a place to keep the first run's behaviour (the reference's) for every later
    run to be held to (red team, round 23): mapped shared, it is refused, and a private one is
    each run's own copy."""
    folder = suite_folder({"conftest.py": """
        import mmap
        try:
            MEMORY, SHARED = mmap.mmap(-1, 4096), True  # MAP_SHARED | MAP_ANONYMOUS
        except PermissionError:
            MEMORY, SHARED = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE), False
    """, "test_memory.py": """
        import mmap, pytest
        from conftest import MEMORY, SHARED

        def test_no_run_saw_another():
            MEMORY[0] += 1
            assert (SHARED, MEMORY[0]) == (False, 1)

        def test_shared_mappings_are_refused(tmp_path):
            with pytest.raises(PermissionError):
                mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED)
            backing = tmp_path / "backing"
            backing.write_bytes(bytes(4096))
            with open(backing, "r+b") as file, pytest.raises(PermissionError):
                mmap.mmap(file.fileno(), 4096)
    """})
    runs = runner_for(folder, workers=1).suite_runs([(f"m{i}", reference) for i in range(3)], timeout=20.0)
    assert {run_id: (run.outcome, run.message) for run_id, run in runs.items()} == {
        f"m{i}": (Outcome.PASSED, "") for i in range(3)}


def test_runs_alone_go_in_an_order_nobody_can_foresee(suite_folder, runner_for, reference) -> None:
    """Two sandboxes grading the same submission (same seed) run the same modules alone in
    different orders: a test that knew which run alone came first, and could pass a few bits on to
    the next (the clock, a count the kernel keeps), could hold every later run to it."""
    folder = suite_folder({"test_order.py": """
        import time
        def test_says_when():
            assert False, f"at={time.monotonic_ns()}"
    """})

    def order(runner) -> list[str]:
        runs = runner.suite_runs([(f"m{i}", reference) for i in range(8)], timeout=10.0)
        return sorted(runs, key=lambda run_id: int(runs[run_id].message.split("at=")[1].split()[0]))

    orders = [order(runner_for(folder, collect=False, workers=1, seed=7)) for _ in range(2)]
    assert orders[0] != orders[1], orders


def test_unseeded_draws_are_keyed_by_submission_and_module(suite_folder, runner_for, reference) -> None:
    """A test drawing without a seed (numpy's and Python's global generators, a generator made with
    none) draws anew in each run, the reference's second run included, so that chance shows on the
    correct implementations (red team, round 28), and a module run alone draws apart from its run
    among the others; a regrade of the same submission (same seed) draws the same everywhere, and
    at import time the two zygotes draw alike."""
    folder = suite_folder({"test_draws.py": """
        import random
        import numpy as np
        def drawn():
            return (int(np.random.randint(1 << 30)), random.getrandbits(30),
                    int(np.random.default_rng().integers(1 << 30)))
        AT_IMPORT = drawn()
        def test_says_what_it_drew():
            assert False, f"import={AT_IMPORT} test={drawn()}"
    """})
    modules = [(REFERENCE, reference), ("m1", reference), ("m2", reference), (REFERENCE_AGAIN, reference)]

    def drawn(runner) -> dict[str, tuple[str, str]]:
        runs = runner.suite_runs(modules, timeout=10.0)
        found = {run_id: re.search(r"import=(\(.*?\)) test=(\(.*?\))", run.message) for run_id, run in runs.items()}
        assert all(found.values()), {run_id: run.message for run_id, run in runs.items()}
        return {run_id: match.groups() for run_id, match in found.items()}

    together = drawn(runner_for(folder, seed=7))
    alone = drawn(runner_for(folder, collect=False, workers=1, seed=7))
    regrade = drawn(runner_for(folder, seed=7))
    other_submission = drawn(runner_for(folder, seed=8))
    assert together == regrade
    at_import, in_test = (set(draws) for draws in zip(*together.values(), *alone.values()))
    assert len(at_import) == 1 and len(in_test) == 2 * len(modules)
    other_import, other_test = (set(draws) for draws in zip(*other_submission.values()))
    assert not at_import & other_import and not in_test & other_test


def test_a_runner_told_to_wait_collects_only_when_awaited(suite_folder, chapter, backend) -> None:
    """The fast sandbox starts with the clean one, but collecting the suite runs the student's
    code, which must not run there while the clean sandbox runs what the grade trusts: it waits
    for the word. The conftest names its test after the moment it was collected."""
    folder = suite_folder({"conftest.py": """
        import time
        COLLECTED_AT = time.time()
    """, "test_when.py": """
        import pytest
        from conftest import COLLECTED_AT
        @pytest.mark.parametrize("at", [repr(COLLECTED_AT)])
        def test_collected(at):
            pass
    """})
    runner = WarmRunner(chapter=chapter, backend=backend, student_tests=folder, limits=Limits(wall_seconds=60.0))
    try:
        runner.launch(wait_to_collect=True)
        time.sleep(3.0)  # the zygote has long imported everything by now
        word = time.time()
        runner.await_ready()
    finally:
        runner.close()
    [node] = runner.collected
    assert float(node.partition("[")[2].rstrip("]")) >= word, (node, word)


@pytest.mark.parametrize("collect", [True, False], ids=["collected-once", "run-alone"])
def test_a_top_level_conftest_starts_as_in_plain_pytest(suite_folder, runner_for, reference, collect) -> None:
    """The runs alone load the conftests only in the child, after pytest was configured with
    --noconftest in the zygote; they must still count as top level (pytest refuses
    ``pytest_plugins`` from any other) and get their ``pytest_sessionstart``, as the fast pass's
    do. A suite using either was reported invalid: it passed collected once and erred alone."""
    folder = suite_folder({"conftest.py": """
        import numpy as np
        pytest_plugins = ["plugin_fixtures"]
        STARTED = []
        def pytest_sessionstart(session):
            STARTED.append(True)
            np.seterr(all="raise")
    """, "plugin_fixtures.py": """
        import pytest
        @pytest.fixture
        def width():
            return 3
    """, "test_conftest.py": """
        import numpy as np
        import pytest
        from conftest import STARTED
        def test_the_plugin_fixture(width):
            assert width == 3
        def test_the_session_started():
            assert STARTED
            with pytest.raises(FloatingPointError):
                np.float64(1.0) / np.float64(0.0)
    """})
    runner = runner_for(folder, collect=collect, workers=1)
    runs = runner.suite_runs([("ref", reference)], timeout=20.0)
    assert runs["ref"].outcome is Outcome.PASSED, runs["ref"].message


@pytest.mark.parametrize("collect", [True, False], ids=["collected-once", "run-alone"])
@pytest.mark.parametrize("fails", [False, True], ids=["passing", "failing"])
def test_subtests_count_as_in_plain_pytest(suite_folder, runner_for, reference, collect, fails) -> None:
    """unittest's subTest and pytest's subtests fixture report each subtest through a hook alone;
    a run alone died in the runner's own hook (red team, round 9: such a suite was invalid), and a
    failing subtest, which fails the test in plain pytest, left the test passed in every run."""
    folder = suite_folder({"test_subtests.py": f"""
        import unittest
        from tinyllm.seq2seq.luong import LuongAttention
        class TestScores(unittest.TestCase):
            def test_each_score(self):
                for count, score in enumerate(("dot", "general", "concat"), start=1):
                    with self.subTest(score=score):
                        self.assertEqual(len(list(LuongAttention(3, score).named_parameters())), count)
        def test_each_width(subtests):
            for d in (2, 3):
                with subtests.test(d=d):
                    assert dict(LuongAttention(d, "dot").named_parameters())["combine.weight"].shape == (d, 2 * d)
                    assert d != 3 or not {fails}
    """})
    runner = runner_for(folder, collect=collect, workers=1)
    run = runner.suite_runs([("ref", reference)], timeout=20.0)["ref"]
    if fails:
        assert (run.outcome, run.node) == (Outcome.FAILED, "test_subtests.py::test_each_width"), run.message
    else:
        assert run.outcome is Outcome.PASSED, (run.node, run.message)


@pytest.mark.parametrize("collect", [True, False], ids=["collected-once", "run-alone"])
def test_a_data_file_opened_at_import_time_reads_in_every_run(suite_folder, runner_for, reference, collect) -> None:
    """``np.load`` of an .npz at module level reads the archive lazily, from a file the zygote
    opened at collection; each child closes what it inherits, so each opens it again (red team,
    round 9: such a suite passed alone and failed in the fast pass, invalid)."""
    folder = suite_folder({"test_data.py": """
        from pathlib import Path
        import numpy as np
        from tinyllm.seq2seq.luong import LuongAttention
        HERE = Path(__file__).parent
        DATA = np.load(HERE / "hand.npz")
        NOTES = open(HERE / "notes.txt")
        def test_reads_the_archive():
            assert DATA["keys"].shape == (1, 3, 2)
            assert NOTES.readline() == "first\\n" and NOTES.readline() == "second\\n"
            assert LuongAttention(2, "dot")
    """, "notes.txt": "first\nsecond\n"})
    np.savez(folder / "hand.npz", keys=np.zeros((1, 3, 2)))
    (folder / "hand.npz").chmod(0o644)
    runner = runner_for(folder, collect=collect, workers=1)
    runs = runner.suite_runs([(f"ref{i}", reference) for i in range(3)], timeout=20.0)
    assert all(run.outcome is Outcome.PASSED for run in runs.values()), [(r.node, r.message) for r in runs.values()]


def test_names_held_in_classes_containers_and_defaults_are_swapped(suite_folder, runner_for, reference) -> None:
    """The tests are collected once against a stand-in for the graded module; each run's real
    class must reach every place an honest suite keeps it. Each test below holds the class one
    way and checks it is the module's own in this run (red team, round 7: the class attribute,
    dict, tuple, default, dataclass instance and ``ids=lambda cls: cls.__name__`` cases were each
    reported invalid)."""
    folder = suite_folder({"test_holding.py": """
        import collections
        import dataclasses
        import unittest
        import pytest
        import tinyllm.seq2seq.luong as L
        from tinyllm.seq2seq.luong import LuongAttention

        BY_SCORE = {"dot": LuongAttention}
        IN_A_LIST = [LuongAttention]

        def current():
            import importlib
            return importlib.import_module("tinyllm.seq2seq.luong").LuongAttention

        class TestHeldByAClass:
            cls = LuongAttention
            def test_class_attribute(self):
                assert self.cls is current()

        class HeldByATestCase(unittest.TestCase):
            cls = LuongAttention
            def test_testcase_attribute(self):
                assert self.cls is current()

        @dataclasses.dataclass(frozen=True)
        class Case:
            cls: type = LuongAttention

        CASE = Case()

        def build(cls=LuongAttention):
            return cls

        def build_by_keyword(*, cls=LuongAttention):
            return cls

        Spec = collections.namedtuple("Spec", "cls score")

        class Holder:
            @staticmethod
            def build(cls=LuongAttention):
                return cls

        def test_module_containers():
            assert BY_SCORE["dot"] is current() and IN_A_LIST[0] is current() and L.LuongAttention is current()

        @pytest.mark.parametrize("spec", [(LuongAttention, "dot")])
        def test_tuple_parameter(spec):
            assert spec[0] is current()

        def test_defaults():
            assert build() is current() and Case().cls is current() and CASE.cls is current()
            assert build_by_keyword() is current() and Holder.build() is current()

        @pytest.mark.parametrize("spec", [Spec(LuongAttention, "dot")], ids=lambda spec: spec.cls.__qualname__)
        def test_named_tuple(spec):
            assert spec.cls is current() and spec.score == "dot"

        @pytest.mark.parametrize("cls", [LuongAttention], ids=lambda cls: cls.__name__)
        def test_ids_from_the_name(cls):
            assert cls is current()
    """})
    runner = runner_for(folder, workers=1)
    assert "test_holding.py::test_ids_from_the_name[LuongAttention]" in runner.collected
    assert "test_holding.py::test_named_tuple[LuongAttention]" in runner.collected
    runs = runner.suite_runs([("ref", reference)], timeout=20.0, stop_early=False)
    assert runs["ref"].outcome is Outcome.PASSED, (runs["ref"].node, runs["ref"].message)


def test_names_held_anywhere_the_collector_finds_them_are_swapped(suite_folder, runner_for, reference) -> None:
    """Beyond the places above, the zygote asks the garbage collector what holds each stand-in,
    so sets, closures, partials, namespaces, slots, dict keys and containers nested at any depth
    get each run's class too (each was a false INVALID until the places were found this way)."""
    folder = suite_folder({"test_deeper.py": """
        import collections
        import dataclasses
        import functools
        import types
        from tinyllm.seq2seq.luong import LuongAttention

        NESTED = [("dot", (LuongAttention, 3))]
        BY_NAME = {"cases": [{"cls": LuongAttention}]}
        KEYED = {LuongAttention: "the class"}
        A_SET, A_FROZENSET = {LuongAttention}, frozenset([LuongAttention])
        A_DEQUE = collections.deque([LuongAttention])
        BUILD = functools.partial(LuongAttention, 4, "dot")
        BUILD_BY_ARGS = functools.partial(lambda cls, d: cls, LuongAttention)
        SPACE = types.SimpleNamespace(cls=LuongAttention)
        LAMBDA = lambda cls=LuongAttention: cls

        def closing_over():
            held = LuongAttention
            return lambda: held

        CLOSURE = closing_over()

        @dataclasses.dataclass(frozen=True, slots=True)
        class Slotted:
            cls: type = LuongAttention

        SLOTTED = Slotted()

        def current():
            import importlib
            return importlib.import_module("tinyllm.seq2seq.luong").LuongAttention

        def test_everywhere():
            real = current()
            assert NESTED[0][1][0] is real and BY_NAME["cases"][0]["cls"] is real
            assert list(KEYED) == [real] and A_SET == {real} and A_FROZENSET == frozenset([real])
            assert A_DEQUE[0] is real and BUILD.func is real and BUILD_BY_ARGS(2) is real
            assert SPACE.cls is real and LAMBDA() is real and CLOSURE() is real and SLOTTED.cls is real
            assert isinstance(BUILD(), real)
    """})
    runner = runner_for(folder, workers=1)
    runs = runner.suite_runs([("ref", reference)], timeout=20.0, stop_early=False)
    assert runs["ref"].outcome is Outcome.PASSED, (runs["ref"].node, runs["ref"].message)


def test_a_subclass_made_at_import_time_fails_collection_naming_the_rule(suite_folder, runner_for) -> None:
    folder = suite_folder({"test_spy.py": """
        from tinyllm.seq2seq.luong import LuongAttention
        class Spy(LuongAttention):
            pass
        def test_spy():
            assert Spy(2, "dot")
    """})
    runner = runner_for(folder, workers=1)
    assert any(UNSWAPPABLE in error and "subclassed at import time" in error for error in runner.collection_errors)


def test_a_root_conftest_pytest_took_out_of_sys_modules_is_swapped_too(suite_folder, runner_for, reference) -> None:
    """With a conftest in a subfolder that has no __init__.py, pytest removes the root conftest
    from sys.modules when it loads the other: a fixture there that held the class kept the
    placeholder, and an honest suite was invalid (red team, round 8)."""
    folder = suite_folder({"conftest.py": """
        import pytest
        from tinyllm.seq2seq.luong import LuongAttention
        @pytest.fixture
        def attention_class():
            return LuongAttention
    """, "test_root.py": """
        def test_root(attention_class):
            assert attention_class(2, "dot").query_from == "current"
    """})
    (folder / "sub").mkdir(mode=0o755)
    for name, text in {"conftest.py": "SUB = True\n",
                       "test_sub.py": "def test_sub(attention_class):\n    assert attention_class(3, 'dot')\n"}.items():
        (folder / "sub" / name).write_text(text)
        (folder / "sub" / name).chmod(0o644)
    runner = runner_for(folder, workers=1)
    runs = runner.suite_runs([("ref", reference)], timeout=20.0, stop_early=False)
    assert runs["ref"].outcome is Outcome.PASSED, (runs["ref"].node, runs["ref"].message)


def test_a_name_the_run_s_module_lacks_fails_saying_so(suite_folder, runner_for, reference) -> None:
    """Collected against the placeholder, a name the contract does not define imports fine; in a
    run whose module lacks it, using it must say that, not blame the placeholder rule."""
    folder = suite_folder({"test_helper.py": """
        from tinyllm.seq2seq.luong import a_helper_of_my_own
        def test_my_helper():
            assert a_helper_of_my_own(1) == 1
    """})
    runner = runner_for(folder, workers=1)
    runs = runner.suite_runs([("ref", reference)], timeout=20.0)
    assert runs["ref"].outcome is Outcome.FAILED and UNDEFINED in runs["ref"].message, runs["ref"].message
