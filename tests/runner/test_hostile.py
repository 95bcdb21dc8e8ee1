"""Hostile student tests against a real zygote: each ends bounded, with the right outcome."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from grader.runner.driver import WarmRunner
from grader.runner.results import Outcome, RunnerError

HEADER = """
    from tinyllm.seq2seq import luong
    from tinyllm.seq2seq.luong import LuongAttention
"""


def _only_run(runner, module: bytes, timeout: float = 10.0):
    return runner.suite_runs([("only", module)], timeout=timeout)["only"]


def test_os_exit_zero_is_a_crash_not_a_pass(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_exit.py": HEADER + """
    import os
    def test_leaves():
        os._exit(0)
    """})
    run = _only_run(runner_for(folder), reference)
    assert run.outcome is Outcome.CRASHED and run.node == "test_exit.py::test_leaves"


def test_a_hanging_test_times_out_and_names_the_test(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_hang.py": HEADER + """
    def test_fine():
        assert LuongAttention(2, "dot") is not None
    def test_hangs():
        while True:
            pass
    """})
    run = _only_run(runner_for(folder), reference, timeout=1.0)
    assert run.outcome is Outcome.TIMEOUT and run.node == "test_hang.py::test_hangs"


def test_self_kill_and_segfault_are_crashes(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_die.py": HEADER + """
    import ctypes, os, signal
    def test_segfault():
        ctypes.string_at(0)
    """})
    run = _only_run(runner_for(folder), reference)
    assert run.outcome is Outcome.CRASHED and "SIGSEGV" in run.message


def test_a_forked_daemon_is_killed_with_its_run(suite_folder, runner_for, reference, processes_with_cmdline) -> None:
    marker = f"{os.getpid()}.{id(reference) % 997}"
    folder = suite_folder({"test_fork.py": HEADER + f"""
    import os
    def test_spawns_a_daemon():
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/usr/bin/sleep", ["sleep", "{marker}"])
            os._exit(0)
    """})
    runner = runner_for(folder)
    runs = runner.suite_runs([("a", reference), ("b", reference)], timeout=10.0)
    assert all(run.outcome is Outcome.PASSED for run in runs.values())
    assert processes_with_cmdline(f"sleep\0{marker}") == []


def test_no_file_survives_into_a_later_run(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_memory.py": HEADER + """
    import os, pathlib
    PLACES = [pathlib.Path.home(), pathlib.Path.cwd(), pathlib.Path(os.environ["TMPDIR"]),
              pathlib.Path("/scratch"), pathlib.Path("/tmp"), pathlib.Path("/dev/shm")]
    def test_remembers_the_first_implementation_it_saw():
        seen = []
        for place in PLACES:
            try:
                seen += [p.name for p in place.iterdir() if p.name.startswith("seen-")]
            except OSError:
                pass
            try:
                (place / f"seen-{os.getpid()}").write_text(repr(LuongAttention(2, "dot").state_dict()))
            except OSError:
                pass
        assert not seen, f"found {seen}"
    """})
    runs = runner_for(folder).suite_runs([(f"r{i}", reference) for i in range(6)], timeout=10.0)
    assert {run.outcome for run in runs.values()} == {Outcome.PASSED}


def test_a_folder_a_run_made_unreadable_does_not_outlive_it(suite_folder, runner_for, reference) -> None:
    """Removed all the same: left in the scratch, its size would be there for the next run to
    measure (statvfs), a channel from one run to the next."""
    folder = suite_folder({"test_residue.py": HEADER + """
    import os
    def test_leaves_an_unreadable_folder_and_says_how_full_the_scratch_was():
        scratch = os.statvfs("/scratch")
        free = scratch.f_bavail * scratch.f_frsize
        os.makedirs("keep/deeper")
        with open("keep/deeper/blob", "wb") as blob:
            blob.write(b"x" * (4 << 20))
        os.chmod("keep/deeper", 0)
        os.chmod("keep", 0)
        os.write(1, f"FREE {free}".encode())
    """})
    runs = runner_for(folder, workers=1).suite_runs([(f"r{i}", reference) for i in range(3)], timeout=10.0)
    assert {run.outcome for run in runs.values()} == {Outcome.PASSED}, [run.message for run in runs.values()]
    free = {run.output.split("FREE")[-1].strip() for run in runs.values()}
    assert len(free) == 1, free


def test_siblings_cannot_list_scratch_or_signal_the_zygote(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_reach.py": HEADER + """
    import os, signal, pytest
    def test_cannot_list_scratch():
        with pytest.raises(PermissionError):
            os.listdir("/scratch")
    def test_cannot_signal_the_zygote():
        with pytest.raises(PermissionError):
            os.kill(os.getppid(), signal.SIGKILL)
    def test_can_write_its_own_home():
        (os.path.expanduser("~") + "/x") and open(os.path.expanduser("~/x"), "w").write("ok")
    """})
    runner = runner_for(folder)
    if not runner.landlock_abi:
        pytest.skip("Landlock is not available in this sandbox")
    runs = runner.suite_runs([("a", reference), ("b", reference)], timeout=10.0)
    assert {run.outcome for run in runs.values()} == {Outcome.PASSED}, runs


def test_the_module_source_cannot_be_read(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_peek.py": HEADER + """
    import inspect, linecache, os, sys, pytest
    def test_no_source_anywhere():
        with pytest.raises((OSError, TypeError)):
            inspect.getsource(luong)
        with pytest.raises((OSError, TypeError)):
            inspect.getsource(LuongAttention)
        assert linecache.getlines(luong.__file__) == []
        assert not os.path.exists(luong.__file__)
        assert not hasattr(luong, "__cached__")
        assert sys.modules["tinyllm.seq2seq.luong"] is luong
    def test_same_identity_every_run():
        assert luong.__name__ == "tinyllm.seq2seq.luong"
        assert luong.__file__ == "/course/reference/tinyllm/seq2seq/luong.py"
        assert luong.__spec__.origin == luong.__file__ and luong.__spec__.loader is None
    """})
    runs = runner_for(folder).suite_runs([("ref", reference), ("mutant", reference + b"\nX = 1\n")], timeout=10.0)
    assert {run.outcome for run in runs.values()} == {Outcome.PASSED}, runs


def test_an_output_flood_is_capped(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_flood.py": HEADER + """
    import sys
    def test_floods():
        for _ in range(2000):
            sys.stdout.write("x" * 10000 + "\\n")
        assert False, "after the flood"
    """})
    run = _only_run(runner_for(folder), reference)
    assert run.outcome is Outcome.FAILED and "after the flood" in run.message
    assert len(run.output) <= 2048 and "dropped" in run.output


def test_a_module_that_kills_its_process_is_a_crash(suite_folder, runner_for, reference) -> None:
    folder = suite_folder({"test_plain.py": HEADER + """
    def test_builds():
        assert LuongAttention(2, "dot").query_from == "current"
    """})
    runner = runner_for(folder)
    bomb = b"import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    runs = runner.suite_runs([("ref", reference), ("bomb", bomb)], timeout=10.0)
    assert runs["ref"].outcome is Outcome.PASSED
    assert runs["bomb"].outcome is Outcome.CRASHED and str(signal.SIGKILL.name) in runs["bomb"].message


def test_runs_alone_collect_in_their_own_child(suite_folder, runner_for, reference) -> None:
    """Without ``collect`` the zygote never imports the student's conftest: each run does, so what
    a conftest does (here, patch the runner) reaches its own run only."""
    folder = suite_folder({"conftest.py": """
    import os
    COLLECTED_IN = os.getpid()
    """, "test_where.py": HEADER + """
    import os
    import conftest
    def test_collected_here():
        assert conftest.COLLECTED_IN == os.getpid()
    """})
    alone = runner_for(folder, collect=False).suite_runs([("a", reference), ("b", reference)], timeout=10.0)
    assert [run.outcome for run in alone.values()] == [Outcome.PASSED, Outcome.PASSED]
    together = _only_run(runner_for(folder), reference)
    assert together.outcome is Outcome.FAILED and together.node == "test_where.py::test_collected_here"


WITNESS = f"witness{os.getpid() % 100000}"  # a process name (comm: at most 15 bytes) no other process has
WITNESSED_RUNS = {"test_witnessed.py": HEADER + f"""
    import ctypes, time
    def test_is_seen_from_outside():
        ctypes.CDLL(None).prctl(15, b"{WITNESS}", 0, 0, 0)  # PR_SET_NAME
        time.sleep(0.3)
    """}


@pytest.mark.parametrize("workers", [1, 2])
def test_runs_with_one_worker_never_overlap(workers, suite_folder, runner_for, reference,
                                            processes_named) -> None:
    """The clean runner's guarantee, seen from the host: each run names its process and holds
    for a while, and a watcher counts the processes of that name. With one worker there is never
    more than one; with two, runs that start together are seen together (the control). A witness
    inside cannot see it: a run kept apart has no socket, pipe or pid another run could meet."""
    runner = runner_for(suite_folder(WITNESSED_RUNS), collect=False, workers=workers)
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.005):
            seen.append(len(processes_named(WITNESS)))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        runs = runner.suite_runs([(f"run {i}", reference) for i in range(6)], timeout=10.0)
    finally:
        done.set()
        watcher.join()
    assert {run.outcome for run in runs.values()} == {Outcome.PASSED}, runs
    # never more than one with one worker (and seen at all: the witness works); two at once with two
    # (runs that start and end together may never be seen alone)
    assert max(seen) == workers, seen


def test_a_thread_started_at_collection_does_not_break_the_runs(suite_folder, runner_for, reference,
                                                                  pitfalls) -> None:
    """A conftest thread in the zygote: the zygote then forks with os.fork (libc's fork would leave
    the child believing the thread exists), and runs still pass and kill as they should."""
    folder = suite_folder({"conftest.py": """
    import threading, time
    threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()
    """, "test_scaling.py": HEADER + """
    import numpy as np
    from tinyllm.autograd.tensor import Tensor
    def test_dot_is_not_scaled():
        score = LuongAttention(2, "dot").scores(Tensor(np.array([[1.0, 0.0]])), Tensor(np.array([[[2.0, 0.0]]])))
        assert np.allclose(score.numpy(), [[2.0]])
    """})
    runs = runner_for(folder).suite_runs([("reference", reference), ("s07", pitfalls["s07"])], timeout=10.0)
    assert runs["reference"].outcome is Outcome.PASSED
    assert runs["s07"].outcome is Outcome.FAILED


CHAIN_NAME = f"chain{os.getpid() % 100000}"
CHAIN = HEADER + f"""
    import ctypes, os, select, signal, time
    NAME = b"{CHAIN_NAME}"
    DEPTH = 12  # deeper than a fixed number of sweeps of orphans reaches (the zygote once made 8)

    def _depth(zygote, forked):
        count, pid = 0, os.getppid()
        while pid not in (zygote, 0, 1):
            count += 1
            try:
                with open(f"/proc/{{pid}}/stat", "rb") as stat:
                    pid = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except OSError:  # no /proc to see the chain in (a run kept apart): as many as it forked
                return forked
        return count

    def _plant():
        zygote = os.getppid()
        if os.fork() != 0:
            time.sleep(0.3)  # for the chain to grow before this run ends
            return
        os.setsid()
        os.closerange(0, 1024)
        ctypes.CDLL(None).prctl(15, NAME, 0, 0, 0)  # PR_SET_NAME, which every fork below inherits
        forked = 0
        while True:  # the bottom of the chain keeps the chain DEPTH deep
            if _depth(zygote, forked) < DEPTH:
                if os.fork() != 0:
                    while True:
                        signal.pause()
                os.setsid()
                forked += 1
            select.select([], [], [], 0.002)

    def _named(name):
        found = []
        try:
            pids = [pid for pid in os.listdir("/proc") if pid.isdigit()]
        except OSError:  # hidden from a run kept apart
            pids = []
        for pid in pids:
            try:
                with open(f"/proc/{{pid}}/comm", "rb") as comm:
                    found += [pid] if comm.read().rstrip() == name else []
            except OSError:
                continue
        return found

    def test_plants_or_finds_what_an_earlier_run_left():
        if getattr(luong, "ROLE", None) == "planter":
            _plant()
            return
        time.sleep(1.5)  # the planter's run has ended and been answered
        assert not _named(NAME), "a process planted by an earlier run is still there"
"""


@pytest.mark.parametrize(("collect", "workers"), [(False, 1), (True, 2)], ids=["alone", "together"])
def test_no_process_outlives_its_run(suite_folder, runner_for, reference, collect, workers,
                                     processes_named) -> None:
    """A chain of processes in sessions of their own, kept deeper than any sweep of orphans by its
    bottom: alone (nothing else running: kill(-1), or the end of its namespace) and beside another
    run (killed tree by tree), seen by the run after it where it can see, and from the host."""
    runner = runner_for(suite_folder({"test_chain.py": CHAIN}), collect=collect, workers=workers)
    runs = runner.suite_runs([("planter", reference + b"\nROLE = 'planter'\n")], last=("watcher", reference),
                             timeout=10.0)
    assert {run.outcome for run in runs.values()} == {Outcome.PASSED}, runs
    assert processes_named(CHAIN_NAME) == []


COUNTERS = {"test_counters.py": HEADER + """
    import ctypes, os, platform, socket, threading
    libc = ctypes.CDLL(None, use_errno=True)
    USERFAULTFD, IO_SETUP, PERF_EVENT_OPEN = {"x86_64": (323, 206, 298), "aarch64": (282, 0, 241)}[platform.machine()]
    # a software clock of this process, user space only: what perf_event_paranoid 2 allows
    PERF = ctypes.create_string_buffer(128)
    ctypes.c_uint32.from_buffer(PERF, 0).value, ctypes.c_uint32.from_buffer(PERF, 4).value = 1, 128
    ctypes.c_uint64.from_buffer(PERF, 8).value, ctypes.c_uint64.from_buffer(PERF, 40).value = 1, (1 << 5) | (1 << 6)
    def call(result, what):
        if result < 0:
            raise OSError(ctypes.get_errno(), what)
    def unshare_user():  # the one namespace a process without capabilities may make
        call(libc.unshare(0x10000000), "unshare")
    REFUSED = {"a namespace": unshare_user,
               "a pidfd": lambda: os.pidfd_open(os.getpid()), "a time on /dev": lambda: os.utime("/dev/shm"),
               "an attribute on /dev": lambda: os.setxattr("/dev/shm", "user.seen", b"1"),
               "a pipe": os.pipe, "a socket": socket.socketpair,
               "a userfaultfd": lambda: call(libc.syscall(USERFAULTFD, 1), "userfaultfd"),  # UFFD_USER_MODE_ONLY
               "an aio context": lambda: call(libc.syscall(IO_SETUP, 1, ctypes.byref(ctypes.c_ulong())), "io_setup"),
               "a perf event": lambda: call(libc.syscall(PERF_EVENT_OPEN, PERF, 0, -1, -1, 0), "perf_event_open"),
               "a pty": lambda: os.open("/dev/ptmx", os.O_RDWR)}
    def test_moves_and_reads_the_counters():
        for what, attempt in REFUSED.items():
            try:
                attempt()
            except OSError:
                continue
            assert False, f"it may take {what}"
        first = open("first", "w")
        seen = f"pid {os.getpid()}, inode {os.fstat(first.fileno()).st_ino}, "
        threads = [threading.Thread(target=lambda: None) for _ in range(20)]
        for thread in threads:
            thread.start()
            thread.join()
        for index in range(50):
            open(f"more-{index}", "w").close()
        seen += f"thread {threads[-1].native_id}"
        assert False, seen
    """}


def test_each_run_alone_starts_from_the_same_counters(suite_folder, runner_for, reference) -> None:
    """A run alone moved the pid counter (threads) and the scratch's inode counter (files), and the
    next one read them: a suite carried a module's fingerprint that way from run to run and held
    each module to the first that reproduced the worked example (red team, round 30). Kept apart,
    every run alone sees the same pid, inode and thread id, and has no capability left to make
    namespaces of its own. Nor may it reach the counters of the machine that consecutive runs
    read exactly: a pidfd's inode number (every thread made on the machine), the times and
    attributes of bwrap's /dev, and a pipe or a socket, whose inode numbers come from one CPU's
    batch (red team, round 31); a perf event's id, a counter of the machine, and the time of the
    sandbox's pty instance, which every write to a pty sets (round 32)."""
    runner = runner_for(suite_folder(COUNTERS), collect=False)
    runs = runner.suite_runs([(f"run {i}", reference) for i in range(3)], timeout=10.0)
    messages = {run.message.splitlines()[0] for run in runs.values()}
    assert {run.outcome for run in runs.values()} == {Outcome.FAILED} and len(messages) == 1, runs
    assert "AssertionError: pid 2, inode " in messages.pop(), messages


class _NamespacesRefused:
    """A backend that says it keeps runs apart but starts its sandboxes as every other, where no
    process may make a user namespace."""

    def __init__(self, backend) -> None:
        self.backend, self.name, self.python, self.keeps_runs_apart = backend, backend.name, backend.python, True

    def check(self) -> None:
        self.backend.check()

    def spawn(self, argv, **options):
        return self.backend.spawn(argv, **{**options, "apart": False})


def test_a_sandbox_that_refuses_namespaces_is_an_error_at_start(chapter, backend, suite_folder) -> None:
    """Runs that could not be kept apart would each crash, or worse run together: the zygote tries
    once at start, and a runner that asked for it fails there, saying why."""
    runner = WarmRunner(chapter=chapter, backend=_NamespacesRefused(backend), student_tests=suite_folder(COUNTERS),
                        collect=False)
    with pytest.raises(RunnerError, match="refuses a run namespaces of its own"):
        runner.start()
    runner.close()


DEVICE_TIMES = {"test_times.py": HEADER + """
    import os, stat
    def test_sets_times():
        nodes = [f"/dev/{name}" for name in sorted(os.listdir("/dev")) if stat.S_ISCHR(os.lstat(f"/dev/{name}").st_mode)]
        open("mine", "w").close()
        touched = []
        for path in [*nodes, "mine"]:
            for change in (os.utime, lambda path: os.chown(path, -1, -1)):
                try:
                    change(path)
                except OSError:
                    continue
                touched.append(path)
        assert nodes and not touched, f"set the times or the owner of {touched}, of {nodes} and its own file"
    """}


@pytest.mark.parametrize("collect", [True, False], ids=["fast", "alone"])
def test_no_run_sets_a_files_times_or_owner(suite_folder, runner_for, reference, collect) -> None:
    """bwrap's /dev binds the machine's own device nodes, writable, and a write permission lets a
    process set a node's times to now: a run of the fast zygote touched /dev/zero and /dev/full at
    chosen moments, and each run alone after the pass read 8 bits from their times, 18 of 18 (red
    team, round 33); a chown to the owner it has (-1, -1) sets the change time, 16 bits, 54 of 54
    (round 34). No run may do either, to its own files too: both sandboxes alike."""
    run = _only_run(runner_for(suite_folder(DEVICE_TIMES), collect=collect), reference)
    assert run.outcome is Outcome.PASSED, run.message


PIPES = {"test_pipes.py": HEADER + """
    import os, resource, stat
    def fifo(fd):
        try:
            return stat.S_ISFIFO(os.fstat(fd).st_mode)
        except OSError:
            return False
    def test_reports_its_pipes():
        inodes = sorted({os.fstat(fd).st_ino for fd in range(4096) if fifo(fd)})
        assert False, f"limit {resource.getrlimit(resource.RLIMIT_NOFILE)} pipes {inodes}"
    """}


def _pipes_made(run) -> tuple[tuple[int, int], list[int]]:
    """What a PIPES run saw: its RLIMIT_NOFILE and the inode numbers of its record and output pipes."""
    limit, inodes = run.message.splitlines()[0].split("limit ")[1].split(" pipes ")
    return tuple(map(int, limit.strip("()").split(", "))), [int(i) for i in inodes.strip("[]").split(", ")]


def _pipes_on_every_cpu(count: int = 1100) -> int:
    """Make ``count`` pipes on each CPU in turn and return a bound between the inode numbers of the
    pipes made before and after: each CPU takes its numbers from the machine's counter in batches of
    1024, so after 1100 on each, every CPU draws from a batch taken here, above all numbers handed
    out before, and no pipe made before is numbered above the start of the lowest of those."""
    cpus = os.sched_getaffinity(0)
    last = []
    try:
        for cpu in cpus:
            os.sched_setaffinity(0, {cpu})
            for _ in range(count):
                read, write = os.pipe()
                inode = os.fstat(read).st_ino
                os.close(read)
                os.close(write)
            last.append(inode)
    finally:
        os.sched_setaffinity(0, cpus)
    return min(inode & ~1023 for inode in last)


def test_a_runs_pipes_are_not_numbered_by_the_machines_counter(suite_folder, runner_for, reference) -> None:
    """The inode numbers of a run's own pipes came from a counter of the machine that the fast
    sandbox's runs may move (by making pipes, CPU by CPU): a fast run set it, and each run alone
    after the pass read 4 bits from its pipes, 18 times of 18 (session 31); one grade's fast zygote
    set it for a later grade's runs alone, 8 bits, 25 of 25 (red team, round 36). A run's record
    and output channels are FIFOs on its zygote's own scratch, numbered by that tmpfs alone: the
    host makes pipes on every CPU before the runs, held before or made after, and every number the
    runs read is below what those took. Either way each run's limit of open files is the sandbox's
    usual one, though the zygote holding pipes has more."""
    folder = suite_folder(PIPES)
    held, fresh = runner_for(folder, collect=False), runner_for(folder, collect=False)
    held.hold_pipes(2)
    between = _pipes_on_every_cpu()
    runs = {name: _only_run(runner, reference) for name, runner in (("held", held), ("fresh", fresh))}
    limits = {name: _pipes_made(run)[0] for name, run in runs.items()}
    inodes = {name: _pipes_made(run)[1] for name, run in runs.items()}
    assert limits == {"held": (256, 256), "fresh": (256, 256)}, runs
    assert len(inodes["held"]) == len(inodes["fresh"]) == 2, inodes
    assert max(inodes["held"] + inodes["fresh"]) < between, (inodes, between)


def test_a_run_past_the_held_pipes_is_an_error(suite_folder, runner_for, reference) -> None:
    """Once held, a run gets no pipes made later: one more run than the driver held for fails the
    runner, rather than being run on pipes the fast pass could have numbered."""
    runner = runner_for(suite_folder(PIPES), collect=False)
    runner.hold_pipes(1)
    assert _only_run(runner, reference).outcome is Outcome.FAILED
    with pytest.raises(RunnerError, match="closed its output"):
        _only_run(runner, reference)
