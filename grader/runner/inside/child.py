"""The body of one forked child: fence itself, install its module, do its job, record, exit.

Runs right after fork, in the zygote's image, and never returns: it leaves through os._exit so
no atexit handler, buffered stream or pytest teardown of the zygote's session runs in a child.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import signal
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import apart, draws, isolation, loader, substrate
from .records import IMPORT_FAILED, Recorder, clip
from .session import run_alone, run_course
from .suite import ordered, run_items

EXIT_UNCAUGHT = 70  # the job itself blew up (pytest.exit, an internal error): a crash, by the exit table
MAX_RETURN_BYTES = 80 << 20  # the probes' answer: some 35 MB, 46 MB at the widest widths drawn


@dataclass(frozen=True)
class Setup:
    """What every child of one zygote shares (fixed at zygote start)."""

    module: str
    module_file: str
    course_tests: Path
    student_tests: Path | None
    runner_dir: Path
    landlock_abi: int
    readable: isolation.ReadRules
    placeholder: loader.PlaceholderModule
    session: pytest.Session | None  # configured for the student's tests (None: no tests submitted)
    collected: bool  # the session holds the collected tests (else each child collects: runs alone)
    rebinding: loader.Rebinding  # where the collected tests hold names from the graded module
    test_files: tuple[isolation.OpenedFile, ...]  # files of the tests folder the collected tests hold open
    collection_draws: int = 0  # the seed a collection of the student's suite starts from (draws.py)
    scratch: Path = Path("/scratch")
    scratch_bytes: int = 0  # the scratch tmpfs's size, which a run kept apart gets one of its own of
    apart: bool = False  # each run in namespaces of its own (apart.py)
    open_files: int = 256  # a run's RLIMIT_NOFILE, below its zygote's where that holds pipes (pipes.py)


@dataclass(frozen=True)
class Job:
    """One request, as the child needs it. ``source``/``payload`` are views into the zygote's buffer."""

    kind: str
    source: memoryview
    payload: memoryview
    timeout: float
    workdir: Path
    order: tuple[str, ...] = ()
    stop_early: bool = True
    skip: frozenset[str] = frozenset()
    entry: str = ""
    compiled: bool = False  # ``source`` is a marshalled code object from the trusted side
    draws: int = 0  # the seed this run's tests start from (draws.py)


STUDENT_MODULE_KINDS = ("course", "call")  # the runs of the student's own luong.py


def run_child(setup: Setup, job: Job, *, record_fd: int, output_fd: int) -> None:
    """Never returns."""
    code = EXIT_UNCAUGHT
    try:
        _leave_the_zygote(setup, job)
        _enter(setup, job, record_fd=record_fd, output_fd=output_fd)
        _dispatch(setup, job, Recorder(record_fd))
        code = 0
    except BaseException:  # noqa: BLE001 - anything escaping the job makes this run a crash
        traceback.print_exc()
    finally:
        os._exit(code)


def _leave_the_zygote(setup: Setup, job: Job) -> None:
    """Lead a process group of its own (what the zygote kills at the deadline), in namespaces of
    its own when runs are kept apart."""
    os.setpgid(0, 0)
    # The zygote's SIGCHLD wake-up: left in place, a signal would write into whatever file the
    # tests opened under that fd number once it is closed in _enter.
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    if setup.apart:  # returns in the run, whose namespace's init has dropped the capabilities it had there
        apart.enter(setup.scratch, job.workdir, scratch_bytes=setup.scratch_bytes)


def _enter(setup: Setup, job: Job, *, record_fd: int, output_fd: int) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    if setup.landlock_abi:  # before the fds close: the read rules name fds the zygote opened
        isolation.confine(setup.landlock_abi, readable=setup.readable, writable=job.workdir)
    at = isolation.offsets(setup.test_files)
    isolation.close_fds_except(record_fd)
    resource.setrlimit(resource.RLIMIT_NOFILE, (setup.open_files, setup.open_files))
    isolation.reopen(setup.test_files, at)
    os.chdir(job.workdir)
    for name in ("HOME", "TMPDIR"):
        os.environ[name] = str(job.workdir)
    tempfile.tempdir = None
    isolation.limit_cpu(job.timeout)


def _install(setup: Setup, job: Job, recorder: Recorder):
    """Install this run's module: return it and None, or None and why it failed to import, which
    is recorded as the run's message too. The student's module (a course or call run) must leave
    the substrate as it found it."""
    begun = time.perf_counter()
    source = bytes(job.source)
    before = substrate.fingerprint(setup.module) if job.kind in STUDENT_MODULE_KINDS else None
    try:
        module = loader.install(source, setup.module, setup.module_file, compiled=job.compiled)
        if before is not None:
            _check_substrate(setup, before, "at import")
    except BaseException as exc:  # noqa: BLE001 - the module under test may raise anything at import
        failure = clip(f"{IMPORT_FAILED}: {type(exc).__name__}: {exc}")
        recorder.emit("raised", message=failure)
        return None, failure
    loader.rebind(setup.placeholder, module, setup.rebinding)
    recorder.emit("installed", seconds=time.perf_counter() - begun, hold=True)
    return module, None


def _dispatch(setup: Setup, job: Job, recorder: Recorder) -> None:
    module, import_error = _install(setup, job, recorder)
    if job.kind == "course":
        if module is None:
            loader.install_placeholder(setup.module, setup.module_file)  # so the tests still collect
        # each course test says why, as no report shows the run's own message (red team, round 28)
        run_course(setup.course_tests, setup.student_tests, skip=set(job.skip), import_error=import_error,
                   graded_file=setup.module_file, recorder=recorder)
    elif module is None:
        pass  # suite, alone and call: the "raised" event is the answer
    elif job.kind == "call":
        _call(setup, job, module, recorder)
    elif setup.session is None or setup.collected != (job.kind == "suite"):
        raise RuntimeError(f"a {job.kind} run needs a session that is {'' if job.kind == 'suite' else 'not '}collected")
    elif job.kind == "alone":
        run_alone(setup.session, order=job.order, stop_early=job.stop_early, recorder=recorder,
                  collection_seed=setup.collection_draws, tests_seed=job.draws)
    else:
        draws.seed(job.draws)
        run_items(ordered(setup.session.items, job.order), stop_early=job.stop_early, recorder=recorder)
    recorder.emit("done")


class SubstrateChanged(Exception):
    """The graded module rebound or rewrote a name the substrate defines."""


def _check_substrate(setup: Setup, before: substrate.Fingerprint, when: str) -> None:
    names = substrate.changed(before, substrate.fingerprint(setup.module))
    if names:
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        raise SubstrateChanged(f"the module changed {', '.join(names[:3])}{more} {when}: a luong.py may use the "
                               "substrate, not replace what it defines (every other module of a model would see it)")


def _call(setup: Setup, job: Job, module, recorder: Recorder) -> None:
    path = setup.runner_dir / f"{job.entry}.py"
    spec = importlib.util.spec_from_file_location(f"_runner_entry_{job.entry}", path)
    if not path.is_file() or spec is None or spec.loader is None:
        recorder.emit("raised", message=f"no entry {job.entry!r} under {setup.runner_dir}")
        return
    entry = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(entry)
    before = substrate.fingerprint(setup.module)
    try:
        answer = entry.run(module, bytes(job.payload))
        _check_substrate(setup, before, "while it ran")
    except BaseException as exc:  # noqa: BLE001 - the implementation under test may raise anything
        recorder.emit("raised", message=clip("".join(traceback.format_exception_only(exc)).strip()))
        return
    if not isinstance(answer, bytes):
        recorder.emit("raised", message=clip(f"{job.entry}.run returned {type(answer).__name__}, not bytes"))
    elif len(answer) > MAX_RETURN_BYTES:
        recorder.emit("raised", message=f"{job.entry}.run returned {len(answer)} bytes, over {MAX_RETURN_BYTES}")
    else:
        recorder.emit("return", answer)
