"""A normal run, the protocol pipe, and that close() leaves no process or container behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import docker.errors
import pytest

from grader.chapter import REPO_ROOT
from grader.sandbox import Limits, SandboxBackend, Termination
from grader.sandbox.docker import CONTAINER_LABEL, DockerBackend
from sandbox_helpers import read_line, run_python

SLEEPER = "import time; time.sleep(600)"
ECHO_DOUBLED = """
import sys, numpy
for line in sys.stdin:
    print(int(numpy.array([int(line)]).sum() * 2), flush=True)
print("bye", file=sys.stderr)
"""


def test_a_normal_run_round_trips_stdin_and_stdout(backend: SandboxBackend) -> None:
    run = run_python(backend, ECHO_DOUBLED, stdin=b"1\n20\n")
    assert run.stdout == b"2\n40\n"
    assert run.exit.termination is Termination.EXITED
    assert run.exit.returncode == 0
    assert run.exit.stderr == "bye\n"
    assert not run.exit.stderr_truncated


def test_the_pipe_is_interactive(backend: SandboxBackend) -> None:
    with backend.spawn([backend.python, "-c", ECHO_DOUBLED], mounts=(), limits=Limits()) as process:
        for number in (3, 5):
            process.stdin.write(f"{number}\n".encode())
            process.stdin.flush()
            assert read_line(process) == f"{number * 2}\n".encode()
        process.stdin.close()
        assert process.wait().termination is Termination.EXITED


def test_exit_codes_and_signals_are_reported(backend: SandboxBackend) -> None:
    assert run_python(backend, "raise SystemExit(3)").exit.returncode == 3
    segfault = run_python(backend, "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)").exit
    assert segfault.termination is Termination.SIGNALLED
    assert segfault.returncode == -11


def test_wait_with_a_timeout_raises_while_running(backend: SandboxBackend) -> None:
    with backend.spawn([backend.python, "-c", "import sys; sys.stdin.read()"], mounts=(), limits=Limits()) as process:
        with pytest.raises(TimeoutError):
            process.wait(timeout=0.1)
        process.stdin.close()
        assert process.wait().termination is Termination.EXITED


def _host_pids_running(token: str) -> set[int]:
    """Host pids whose command line carries ``token`` (sandboxed processes are host processes)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # it ended while we looked
        if token.encode() in cmdline and state != "Z":
            found.add(int(entry.name))
    return found


def test_close_leaves_no_process_behind(backend: SandboxBackend) -> None:
    """Forked children, a detached daemon and a blocked parent are all gone after close()."""
    token = uuid.uuid4().hex
    code = f"""
import os, sys, time
TOKEN = "{token}"
for _ in range(3):
    if os.fork() == 0:
        time.sleep(600)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)
print("ready", flush=True)
time.sleep(600)
"""
    process = backend.spawn([backend.python, "-c", code], mounts=(), limits=Limits())
    assert read_line(process) == b"ready\n"
    assert len(_host_pids_running(token)) >= 5  # the scan can see them: parent, 3 children, daemon
    process.close()
    assert _host_pids_running(token) == set()
    process.close()  # idempotent


@pytest.mark.docker
def test_close_removes_the_container(docker_backend: DockerBackend) -> None:
    api = docker_backend.api()

    def labelled() -> set[str]:
        return {c["Id"] for c in api.containers(all=True, filters={"label": CONTAINER_LABEL})}

    before = labelled()
    process = docker_backend.spawn([docker_backend.python, "-c", SLEEPER], mounts=(), limits=Limits())
    assert len(labelled() - before) == 1
    process.close()
    assert labelled() - before == set()


@pytest.mark.docker
def test_what_a_container_writes_is_not_kept_on_the_hosts_disk(docker_backend: DockerBackend) -> None:
    """The attach socket carries its output, stderr capped there; with the engine's default log
    driver a sandbox wrote 50 MB of stderr to the host's disk as well, without bound, and the disk's
    free space was a channel to whatever ran beside it (red team, round 34)."""
    flood = "import sys, time\nsys.stderr.write('x' * (4 << 20))\nprint('ready', flush=True)\ntime.sleep(60)"
    process = docker_backend.spawn([docker_backend.python, "-c", flood], mounts=(), limits=Limits())
    try:
        assert read_line(process) == b"ready\n"
        log = docker_backend.api().inspect_container(process._container)["LogPath"]
        assert not log or not os.path.exists(log) or os.path.getsize(log) < 4096, log
    finally:
        process.close()


ORPHAN_MAKER = f"""
import os, signal, sys
from grader.sandbox import Limits
from grader.sandbox.docker import DockerBackend
backend = DockerBackend()
process = backend.spawn([backend.python, "-c", {SLEEPER!r}], mounts=(), limits=Limits())
print(process._container, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.docker
def test_the_container_of_a_grader_that_died_is_removed_by_the_next_check(docker_backend: DockerBackend) -> None:
    """A grader killed outright (SIGKILL) leaves its container to the engine; the next grader's
    check() removes it, and only it: a live sandbox's container stays."""
    api = docker_backend.api()
    live = docker_backend.spawn([docker_backend.python, "-c", SLEEPER], mounts=(), limits=Limits())
    try:
        died = subprocess.run([sys.executable, "-c", ORPHAN_MAKER], capture_output=True, text=True, check=False,
                              cwd=REPO_ROOT)
        orphan = died.stdout.strip()
        assert died.returncode == -signal.SIGKILL and orphan, died.stderr
        assert api.inspect_container(orphan)["State"]["Running"]
        docker_backend.check()
        with pytest.raises(docker.errors.NotFound):
            api.inspect_container(orphan)
        assert api.inspect_container(live._container)["State"]["Running"]
    finally:
        live.close()


def test_sandboxes_run_concurrently(backend: SandboxBackend) -> None:
    results: list[bytes] = []

    def one(value: int) -> None:
        results.append(run_python(backend, ECHO_DOUBLED, stdin=f"{value}\n".encode()).stdout)

    threads = [threading.Thread(target=one, args=(value,)) for value in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [b"0\n", b"2\n", b"4\n"]
