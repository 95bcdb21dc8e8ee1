"""One test per limit: each trips it and checks how the trusted side classifies the end."""

from __future__ import annotations

import subprocess

from grader.sandbox import Limits, SandboxBackend, Termination
from sandbox_helpers import read_line, run_python


def test_a_memory_hog_is_stopped(backend: SandboxBackend) -> None:
    hog = "import numpy; hoard = [numpy.ones(1 << 24) for _ in range(64)]; print('survived')"  # 8 GiB
    run = run_python(backend, hog, limits=Limits(memory_bytes=256 << 20))
    assert run.stdout == b""
    assert run.exit.termination is Termination.MEMORY_LIMIT, run.exit


def test_a_cpu_burner_is_stopped(backend: SandboxBackend) -> None:
    run = run_python(backend, "while True: pass", limits=Limits(cpu_seconds=1, wall_seconds=120))
    assert run.exit.termination is Termination.CPU_LIMIT, run.exit


def test_a_sleeper_is_stopped_by_the_wall_clock(backend: SandboxBackend) -> None:
    run = run_python(backend, "import time; time.sleep(600)", limits=Limits(wall_seconds=1.0))
    assert run.exit.termination is Termination.WALL_TIMEOUT, run.exit


FORK_STORM = """
import os, sys, time
children = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        children += 1
except OSError as error:
    print(children, type(error).__name__, flush=True)
time.sleep(600)
"""


def test_a_fork_storm_hits_the_process_cap_and_the_host_stays_healthy(backend: SandboxBackend) -> None:
    limits = Limits(processes=16)
    with backend.spawn([backend.python, "-c", FORK_STORM], mounts=(), limits=limits) as process:
        children, error = read_line(process).split()
        assert 0 < int(children) < limits.processes
        assert error == b"BlockingIOError"  # EAGAIN: the cap, not some other failure
        # While the storm holds its processes, the host still starts processes.
        assert subprocess.run(["true"]).returncode == 0


def test_an_output_flood_is_truncated_and_marked(backend: SandboxBackend) -> None:
    flood = "import sys\nfor _ in range(1000): sys.stderr.write('x' * 1000)\nprint('done')"
    run = run_python(backend, flood, limits=Limits(output_bytes=10_000))
    assert run.stdout == b"done\n"  # stdout is the protocol pipe and is never capped
    assert run.exit.stderr_truncated
    assert run.exit.stderr.startswith("x" * 10_000)
    assert run.exit.stderr.endswith("\n[... truncated 990000 bytes]")
    assert run.exit.termination is Termination.EXITED
