"""The zygote: warm imports once, then fork one child per request, several at a time.

Started by zygote.py inside the sandbox. Its stdin/stdout are the protocol pipe to the trusted
driver (moved to private fds at once, so nothing printed by an import can corrupt the protocol).
The first frame is the configuration; the zygote answers "ready", then serves requests until
"shutdown" or end of input, answering each as its child finishes, possibly out of order. A
"hold" request makes the pipes of the runs to come at once (pipes.py), answered "held".

Secrets hygiene: a request's module source is read straight into a buffer of its own size, the
child is forked, and the zygote zeroes the buffer. The zygote never decodes or compiles a
module, so no later child inherits another run's source.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import importlib.util
import math
import os
import pkgutil
import resource
import select
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import apart, draws, isolation, leftovers, loader
from .child import Job, Setup, run_child
from .outcomes import ChildExit, Outcome, classify_status, decide
from .pipes import PipeSource
from .protocol import (
    LENGTH_BYTES,
    MAX_HEADER_BYTES,
    FrameBuffer,
    ProtocolError,
    decode_header,
    encode_frame,
    header_length,
)
from .records import MAX_SECONDS, MAX_SKIPPED_NAMED, check_event, clip
from .suite import serve_from_session

MAX_REQUEST_BYTES = 32 << 20  # module source plus a call's payload
MAX_RECORD_BYTES = 88 << 20  # all a child may write to its record pipe (a probe answer, MAX_RETURN_BYTES)
# Records a child may write: two per test is a suite of 32,768 tests. Each costs the zygote some
# 400 bytes, so without a bound 20 MB of tiny records would grow it by 300 MB.
MAX_RECORD_EVENTS = 1 << 16
OUTPUT_KEEP_BYTES = 4096  # what is kept of a child's stdout+stderr, for messages
CONFIG_FIELDS: dict[str, type | tuple[type, ...]] = {"sys_path": list, "module": str, "module_file": str, "course_tests": str,
                 "student_tests": (str, type(None)), "collect": bool, "scratch": str, "runner_dir": str,
                 "workers": int, "wait_to_collect": bool, "draws": int, "apart": bool, "open_files": int}

_LIBC_FORK = ctypes.PyDLL(None, use_errno=True).fork
# Imported once here so that no child pays for them: numpy loads these submodules lazily on first
# use, which costs a child more (10-20 ms) than a typical killing test.
WARM_MODULES = ("numpy", "numpy.random", "numpy.testing", "numpy.linalg", "pytest")


@dataclass
class Run:
    """One child in flight, as the zygote tracks it."""

    token: int
    kind: str
    pid: int
    workdir: Path
    deadline: float
    started: float
    record_fd: int
    output_fd: int
    frames: FrameBuffer = field(default_factory=lambda: FrameBuffer(max_blob_bytes=MAX_RECORD_BYTES))
    events: list[tuple[dict, list[bytes]]] = field(default_factory=list)
    record_bytes: int = 0
    garbage: str | None = None
    output: bytearray = field(default_factory=bytearray)
    output_dropped: int = 0
    wall_killed: bool = False


class ProtocolIO:
    """Blocking frame I/O on the zygote's private protocol fds."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out

    def _read_into(self, view: memoryview) -> bool:
        while view:
            count = os.readv(self.fd_in, [view])
            if count == 0:
                return False
            view = view[count:]
        return True

    def read_header(self, max_blob_bytes: int) -> dict | None:
        """The next request's header, or None at end of input."""
        prefix = bytearray(LENGTH_BYTES)
        if not self._read_into(memoryview(prefix)):
            return None
        body = bytearray(header_length(bytes(prefix)))
        if not self._read_into(memoryview(body)):
            raise ProtocolError("input ended inside a frame header")
        return decode_header(bytes(body), max_blob_bytes=max_blob_bytes)

    def read_blobs_into(self, buffer: bytearray, sizes: list[int]) -> None:
        if not self._read_into(memoryview(buffer)[: sum(sizes)]):
            raise ProtocolError("input ended inside a frame payload")

    def send(self, header: dict, blobs: Sequence[bytes] = ()) -> None:
        self.write(encode_frame(header, blobs))

    def write(self, frame: bytes) -> None:
        view = memoryview(frame)
        while view:
            view = view[os.write(self.fd_out, view):]


def too_many_ids(collected: list[str]) -> str:
    """Why a collection is not graded when its ids are too many or too long to send: the zygote
    died framing them, and the grade ended in an error that said only that the zygote had closed
    its output (red team, round 30: 32,000 parametrized cases, or 3,000 ids of 400 characters)."""
    total = sum(len(node.encode()) for node in collected)
    return (f"the tests collected {len(collected)} test ids of {total} bytes in all, more than the runner can "
            f"take ({MAX_HEADER_BYTES} bytes): parametrize fewer cases, or give them shorter ids (ids=...)")


class Zygote:
    """The serve loop: admit requests while a worker is free, reap children, enforce deadlines."""

    def __init__(self, io: ProtocolIO, config: dict, setup: Setup, scratch: Path) -> None:
        self.io, self.setup, self.scratch = io, setup, scratch
        self.workers = config["workers"]
        self.running: dict[int, Run] = {}
        self.input_open = True
        self.pipes = PipeSource(scratch)
        self.wakeup_r, wakeup_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(wakeup_w)

    def serve(self, collected: list[str], errors: list[str]) -> None:
        ready = {"kind": "ready", "landlock_abi": self.setup.landlock_abi, "magic": importlib.util.MAGIC_NUMBER.hex(),
                 "collected": collected, "collection_errors": errors, "pid": os.getpid()}
        try:
            self.io.send(ready)
        except ProtocolError:  # too much to frame: say so, as a collection error the report shows
            self.io.send({**ready, "collected": [], "collection_errors": [*map(clip, errors[:1]),
                                                                          too_many_ids(collected)]})
        while self.input_open or self.running:
            self._wait_for_events()
            self._reap()
            self._enforce_deadlines()

    def _wait_for_events(self) -> None:
        readers = [self.wakeup_r]
        for run in self.running.values():
            readers += [fd for fd in (run.record_fd, run.output_fd) if fd >= 0]
        if self.input_open and len(self.running) < self.workers:
            readers.append(self.io.fd_in)
        deadlines = [run.deadline for run in self.running.values() if not run.wall_killed]
        timeout = math.ceil(max(0.0, min(deadlines) - time.monotonic()) * 1000) if deadlines else None
        # poll, not select: the held pipes (pipes.py) can number fds past select's 1024
        poller = select.poll()
        for fd in readers:
            poller.register(fd, select.POLLIN)
        for fd, _ in poller.poll(timeout):
            if fd == self.wakeup_r:
                os.read(self.wakeup_r, 4096)
            elif fd == self.io.fd_in:
                self._admit()
            else:
                self._drain(self._run_by_fd(fd), fd)

    def _admit(self) -> None:
        header = self.io.read_header(MAX_REQUEST_BYTES)
        if header is None or header.get("kind") == "shutdown":
            self.input_open = False
            for run in self.running.values():
                leftovers.kill_group(run.pid)
            return
        if header.get("kind") == "hold":
            self._hold(header)
            return
        # Sized to this request, not preallocated: every fork copies (and every exit unmaps) the
        # zygote's resident memory, so a large standing buffer would slow every run.
        buffer = bytearray(sum(header["blobs"]))
        self.io.read_blobs_into(buffer, header["blobs"])
        try:
            self._start(header, buffer)
        finally:
            buffer[:] = bytes(len(buffer))  # no later child may find this run's module in memory

    def _hold(self, request: dict) -> None:
        runs = request.get("runs")
        if type(runs) is not int or runs < 0 or request["blobs"] or self.running:
            raise ProtocolError(f"bad hold request for {runs!r} runs, {len(self.running)} in flight")
        self.pipes.hold(runs)
        self.io.send({"kind": "held", "runs": runs})

    def _start(self, request: dict, buffer: bytearray) -> None:
        job = _job_from_request(request, memoryview(buffer), self.scratch)
        os.mkdir(job.workdir, 0o700)
        record_r, record_w, output_r, output_w = self.pipes.take()
        started = time.monotonic()
        pid = _fork()
        if pid == 0:
            os.set_blocking(record_w, True)
            run_child(self.setup, job, record_fd=record_w, output_fd=output_w)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child already did it (or already exited): either way it leads its group
        os.close(record_w)
        os.close(output_w)
        os.set_blocking(record_r, False)
        os.set_blocking(output_r, False)
        self.running[pid] = Run(token=request["run"], kind=job.kind, pid=pid, workdir=job.workdir,
                                deadline=started + job.timeout, started=started,
                                record_fd=record_r, output_fd=output_r)

    def _run_by_fd(self, fd: int) -> Run:
        return next(run for run in self.running.values() if fd in (run.record_fd, run.output_fd))

    def _drain(self, run: Run, fd: int) -> bool:
        """Read what ``fd`` has now; False when nothing was there (or it reached end of file)."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return False
        if not chunk:
            _close_pipe(run, fd)
            return False
        if fd == run.record_fd:
            self._take_records(run, chunk)
        else:
            keep = max(0, OUTPUT_KEEP_BYTES - len(run.output))
            run.output += chunk[:keep]
            run.output_dropped += len(chunk) - min(keep, len(chunk))
        return True

    def _take_records(self, run: Run, chunk: bytes) -> None:
        if run.garbage is not None:
            return
        run.record_bytes += len(chunk)
        try:
            if run.record_bytes > MAX_RECORD_BYTES:
                raise ValueError(f"the child wrote over {MAX_RECORD_BYTES} bytes of records")
            for header, blobs in run.frames.feed(chunk):
                if len(run.events) == MAX_RECORD_EVENTS:
                    raise ValueError(f"the child wrote over {MAX_RECORD_EVENTS} records")
                run.events.append((check_event(header, blobs), blobs))
        except (ProtocolError, ValueError) as exc:
            run.garbage = f"invalid record from the child: {exc}"

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for run in self.running.values():
            if not run.wall_killed and now >= run.deadline:
                run.wall_killed = True
                leftovers.kill_group(run.pid)

    def _reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            run = self.running.pop(pid, None)
            if run is not None:
                self._finish(run, status, usage)  # which also ends whatever the run left behind
            else:
                leftovers.end(self.running)  # an adopted orphan ended: its children are adopted in turn

    def _finish(self, run: Run, status: int, usage: resource.struct_rusage) -> None:
        leftovers.kill_group(run.pid)
        leftovers.end(self.running)  # before the answer: nothing of a run may outlive it
        for fd in (run.record_fd, run.output_fd):
            while fd >= 0 and self._drain(run, fd):
                pass
            _close_pipe(run, fd)  # whatever a surviving grandchild writes later is not this run's
        child_exit, description = classify_status(status, wall_killed=run.wall_killed)
        self.io.write(answer(run, child_exit, description, time.monotonic() - run.started, usage))
        try:
            os.rmdir(run.workdir)  # the usual case: the tests left nothing behind
        except OSError:
            leftovers.remove_files(run.workdir)
        self._sweep_scratch()

    def _sweep_scratch(self) -> None:
        live = {run.workdir.name for run in self.running.values()}
        for entry in os.listdir(self.scratch):
            if entry not in live:
                leftovers.remove_files(self.scratch / entry)


def _fork() -> int:
    """fork(2) without CPython's at-fork work in the child when the zygote is single-threaded.

    os.fork runs the interpreter's after-fork machinery in the child (thread states, every
    os.register_at_fork callback, random's reseed): some 230 page faults, 0.7 ms of every run.
    With no other thread there is nothing for it to repair, and libc's fork, called with the GIL
    held (PyDLL), gives the child the zygote exactly as it was. A thread (a student's conftest may
    start one) means os.fork.
    """
    if len(os.listdir("/proc/self/task")) > 1:
        return os.fork()
    pid = _LIBC_FORK()
    if pid < 0:
        raise OSError(ctypes.get_errno(), "fork failed")
    return pid


def _close_pipe(run: Run, fd: int) -> None:
    if fd >= 0 and fd in (run.record_fd, run.output_fd):
        os.close(fd)
        if fd == run.record_fd:
            run.record_fd = -1
        else:
            run.output_fd = -1


def _job_from_request(request: dict, buffer: memoryview, scratch: Path) -> Job:
    """Check a request's fields (the driver is trusted, but a bug must fail loudly here)."""
    kind = request.get("kind")
    sizes = request["blobs"]
    expected = {"course": 1, "suite": 1, "alone": 1, "call": 2}
    if kind not in expected or len(sizes) != expected[kind]:
        raise ProtocolError(f"bad request kind {kind!r} with {len(sizes)} payloads")
    if type(request.get("run")) is not int or not isinstance(request.get("timeout"), (int, float)):
        raise ProtocolError("request lacks an integer run token or a timeout")
    seed = request.get("draws", 0)
    if not draws.is_seed(seed):
        raise ProtocolError(f"bad draws seed {seed!r}")
    form = request.get("form", "source")
    if form not in ("source", "code") or (form == "code" and kind not in ("suite", "alone")):
        raise ProtocolError(f"bad module form {form!r} for a {kind} run")
    entry = request.get("entry", "")
    if kind == "call" and not (isinstance(entry, str) and entry.isidentifier()):
        raise ProtocolError(f"bad call entry {entry!r}")
    payload = buffer[sizes[0] : sum(sizes)]
    return Job(kind=kind, source=buffer[: sizes[0]], payload=payload, timeout=float(request["timeout"]),
               workdir=scratch / os.urandom(8).hex(), order=tuple(request.get("order", ())),
               stop_early=bool(request.get("stop_early", True)), skip=frozenset(request.get("skip", ())),
               entry=entry, compiled=form == "code", draws=seed)


def answer(run: Run, child_exit: ChildExit, description: str, seconds: float,
           usage: resource.struct_rusage) -> bytes:
    """respond()'s answer as a frame that the driver's schema accepts (ANSWER_SCHEMA in
    grader/runner/channel.py) whatever the child recorded. Each event is bounded (check_event),
    but many together can make a header over the frame cap, or more test time than the schema
    allows: such records make the run a crash, answered without them."""
    header, blobs = respond(run, child_exit, description, seconds, usage)
    try:
        if max(header["test_seconds"], header["test_cpu_seconds"]) > MAX_SECONDS:
            raise ValueError(f"its tests took over {MAX_SECONDS:g} s, by its records")
        return encode_frame(header, blobs)
    except (ProtocolError, ValueError) as exc:
        unsendable = replace(run, events=[], garbage=f"invalid records from the child: {exc}")
        return encode_frame(*respond(unsendable, child_exit, description, seconds, usage))


def respond(run: Run, child_exit: ChildExit, description: str, seconds: float,
            usage: resource.struct_rusage) -> tuple[dict, list[bytes]]:
    """The answer to the driver for a finished run: outcome from the exit table and the records,
    and what the child cost (its CPU time and page faults, for the benchmark's breakdown)."""
    events = [header for header, _ in run.events]
    names = [event["e"] for event in events]
    done = "done" in names and run.garbage is None
    ends = [event for event in events if event["e"] == "end"]
    starts = [event["node"] for event in events if event["e"] == "start"]
    running = starts[-1] if starts and (not ends or ends[-1]["node"] != starts[-1]) else None
    raised = next((event["message"] for event in events if event["e"] == "raised"), None)
    failing = next((e for e in ends if e["outcome"] in (Outcome.FAILED.value, Outcome.ERROR.value)), None)
    if run.kind == "course" or raised is None:
        recorded = Outcome(failing["outcome"]) if failing else Outcome.PASSED
    else:
        recorded = Outcome.ERROR
    outcome = decide(child_exit, recorded if done else None)
    output = run.output.decode(errors="replace") + (f"\n[... {run.output_dropped} bytes dropped]"
                                                     if run.output_dropped else "")
    if outcome in (Outcome.TIMEOUT, Outcome.CRASHED):
        message = f"the run {description}" + (f" ({run.garbage})" if run.garbage else "")
        node = running
    else:
        message = raised if raised and not failing else (failing["message"] if failing else "")
        node = failing["node"] if failing else None
    installed = next((event["seconds"] for event in events if event["e"] == "installed"), None)
    header = {"kind": run.kind, "run": run.token, "outcome": outcome.value, "node": node,
              "message": clip(message), "output": clip(output), "seconds": seconds,
              "install_seconds": installed, "test_seconds": sum(e["seconds"] for e in ends),
              "test_cpu_seconds": sum(e["cpu_seconds"] for e in ends),
              "cpu_seconds": usage.ru_utime + usage.ru_stime, "page_faults": usage.ru_minflt + usage.ru_majflt}
    if run.kind in ("suite", "alone"):  # a test that skips itself catches nothing: the student hears of it
        skipped = [e["node"] for e in ends if e["outcome"] == Outcome.SKIPPED.value]
        header |= {"skipped": len(skipped), "skipped_named": [clip(node) for node in skipped[:MAX_SKIPPED_NAMED]]}
    if run.kind == "course":
        collected: list[str] = next((event["nodes"] for event in events if event["e"] == "collected"), [])
        header |= {"collected": collected, "complete": done,
                   "tests": [{k: e[k] for k in ("node", "outcome", "message", "seconds")} for e in ends]}
    blobs = [blob for (event, blob_list) in run.events if event["e"] == "return" for blob in blob_list]
    return header, blobs if outcome is Outcome.PASSED else []


def _check_config(config: dict) -> dict:
    for key, kind in CONFIG_FIELDS.items():
        if not isinstance(config.get(key), kind):
            raise ProtocolError(f"config field {key!r} missing or of the wrong type")
    if config["workers"] < 1:
        raise ProtocolError("config: workers must be at least 1")
    if not draws.is_seed(config["draws"]):
        raise ProtocolError("config: draws is not a seed")
    # a sandbox keeping runs apart lets its processes make namespaces: only the runs are refused them
    if config["apart"] and config["collect"]:
        raise ProtocolError("config: a zygote that collects the tests cannot keep its runs apart")
    return config


def _size_of(folder: Path) -> int:
    """The size of the filesystem ``folder`` is on (the scratch tmpfs's cap)."""
    stats = os.statvfs(folder)
    return stats.f_blocks * stats.f_frsize


def _await_word_to_collect(io: ProtocolIO) -> None:
    """Block until the driver says to collect: collecting runs the student's code here, which
    must not be running while the other sandbox runs what the grade trusts (see grading.Runners)."""
    header = io.read_header(0)
    if header is None or header.get("kind") != "collect":
        raise ProtocolError("expected the word to collect the tests")


def _warm_imports(config: dict) -> None:
    """numpy, pytest and every substrate module but the graded one, once, before any fork."""
    sys.path[:0] = config["sys_path"]
    for name in WARM_MODULES:
        importlib.import_module(name)
    package_name = config["module"].split(".")[0]
    package = importlib.import_module(package_name)
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
        if info.name != config["module"]:
            importlib.import_module(info.name)


def main() -> None:
    leftovers.check_alone_with_init()
    isolation.harden_zygote()
    io = ProtocolIO(os.dup(0), os.dup(1))
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # anything printed from here on goes to the sandbox's stderr, never the protocol
    header = io.read_header(0)
    if header is None or header.get("kind") != "config":
        raise ProtocolError("the first frame must be the configuration")
    config = _check_config(header)
    _warm_imports(config)
    draws.route_fresh_generators()
    placeholder = loader.install_placeholder(config["module"], config["module_file"])
    scratch = Path(config["scratch"])
    if config["apart"] and (why := apart.can_keep_runs_apart(scratch)):
        raise ProtocolError(f"config: this sandbox refuses a run namespaces of its own, so runs cannot be kept "
                            f"apart: {why}")
    abi = isolation.landlock_abi()
    student_tests = Path(config["student_tests"]) if config["student_tests"] else None
    collect = config["collect"]
    if collect and config["wait_to_collect"]:
        _await_word_to_collect(io)

    def serve(session, errors: list[str]) -> None:
        collected = session is not None and collect
        try:
            rebinding = loader.rebinding_sites(placeholder) if collected else loader.NO_REBINDING
        except loader.TooManyNames as exc:
            errors, rebinding = [*errors, str(exc)], loader.NO_REBINDING
        setup = Setup(module=config["module"], module_file=config["module_file"],
                      course_tests=Path(config["course_tests"]), student_tests=student_tests,
                      runner_dir=Path(config["runner_dir"]), landlock_abi=abi,
                      readable=isolation.read_rules(abi, scratch) if abi else isolation.ReadRules(()),
                      placeholder=placeholder, session=session, collected=collected,
                      rebinding=rebinding, collection_draws=config["draws"],
                      test_files=isolation.files_open_under(student_tests) if collected else (),
                      scratch=scratch, scratch_bytes=_size_of(scratch), apart=config["apart"],
                      open_files=config["open_files"])
        # Children must not copy the warm heap: a collection in a child writes to every object's
        # GC header, and copy-on-write then duplicates the whole heap page by page (tens of ms).
        gc.collect()
        gc.freeze()
        Zygote(io, config, setup, scratch).serve([item.nodeid for item in session.items] if collected else [], errors)
        sys.stderr.flush()
        os._exit(0)

    if student_tests is None:
        serve(None, [])
    else:
        draws.seed(config["draws"])  # as each child running alone does before it collects
        serve_from_session(student_tests, serve, collect=collect)
