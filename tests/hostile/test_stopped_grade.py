"""A grade stopped from outside (SIGTERM: a supervisor, ``docker stop``, ``kill``) in the middle:
it ends at once with the signal's exit status and no report, and takes its sandboxes with it.
One killed outright (SIGKILL) can take nothing with it: the next grade removes what it left."""

from __future__ import annotations

import os
import signal
import time

import pytest

from grader.sandbox.scratch import GRACE_SECONDS, LEASE_FILE

from hostile_helpers import CORRECT_IMPL, assert_nothing_left, hostile_tests

STOP_AFTER = 8.0  # seconds: both sandboxes are up by then, and this suite's grade runs far longer
SIGTERM_STATUS = 128 + 15


@pytest.mark.parametrize("backend_name", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_stopped_grade_leaves_nothing_behind(backend_name, grade_hostile, sandbox_backend):
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests("loop_in_test"),
                           backend=sandbox_backend(backend_name), stop_after=STOP_AFTER)
    assert_nothing_left(graded)
    assert graded.returncode == SIGTERM_STATUS, (graded.returncode, graded.stdout[-2000:], graded.stderr[-2000:])
    assert "stopped (SIGTERM)" in graded.stderr and graded.report is None


@pytest.mark.parametrize("backend_name", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_what_a_grade_killed_outright_left_the_next_grade_removes(backend_name, grade_hostile, sandbox_backend):
    """Its temporary folders (world-readable copies of the submission's tests and of the sandbox's
    mounts) and, on Docker, its containers: the next grade sweeps the folders whose lease is free
    and older than the grace (as these are, aged here), and the containers whose uid's is."""
    backend = sandbox_backend(backend_name)
    killed = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests("loop_in_test"), backend=backend,
                           stop_after=STOP_AFTER, stop_signal="KILL")
    assert killed.returncode == -signal.SIGKILL and killed.report is None, killed.stderr[-2000:]
    assert any(name.startswith("grader-submission-") for name in killed.temporary_left), killed.temporary_left
    aged = time.time() - 2 * GRACE_SECONDS
    for lease in killed.temporary.glob(f"grader-*/{LEASE_FILE}"):
        os.utime(lease, (aged, aged))
    orphans = [left["container"] for left in killed.leftovers if "container" in left]
    assert bool(orphans) == (backend_name == "docker"), killed.leftovers
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=None, backend=backend)
    assert_nothing_left(graded)
    assert graded.returncode == 0, graded.stdout[-2000:]
    assert [name for name in orphans if _container_exists(name)] == []


def _container_exists(name: str) -> bool:
    import docker

    client = docker.from_env()
    try:
        client.containers.get(name)
        return True
    except docker.errors.NotFound:
        return False
    finally:
        client.close()
