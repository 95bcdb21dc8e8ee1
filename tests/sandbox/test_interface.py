"""The interface's value types, the exit table and the stderr cap, without starting a sandbox."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from grader.sandbox import Limits, Mount, Termination, get_backend
from grader.sandbox._env import FIXED_ENV, sandbox_env
from grader.sandbox._outcome import CappedOutput, RawExit, classify

LIMITS = Limits(cpu_seconds=5)


def raw(code: int, *, wall: bool = False, oom: bool = False, cpu: float | None = None) -> RawExit:
    return RawExit(exit_code=code, wall_timeout=wall, oom_killed=oom, cpu_seconds=cpu)


@pytest.mark.parametrize(
    ("observed", "stderr", "expected"),
    [
        (raw(0), b"", (Termination.EXITED, 0)),
        (raw(2), b"", (Termination.EXITED, 2)),
        (raw(128 + signal.SIGKILL, wall=True), b"", (Termination.WALL_TIMEOUT, -9)),
        (raw(128 + signal.SIGKILL, oom=True), b"", (Termination.MEMORY_LIMIT, -9)),
        (raw(128 + signal.SIGXCPU), b"", (Termination.CPU_LIMIT, -24)),
        (raw(128 + signal.SIGKILL, cpu=5.2), b"", (Termination.CPU_LIMIT, -9)),
        (raw(128 + signal.SIGKILL, cpu=0.1), b"", (Termination.SIGNALLED, -9)),
        (raw(128 + signal.SIGSEGV), b"", (Termination.SIGNALLED, -11)),
        (raw(1), b"Traceback...\nMemoryError\n", (Termination.MEMORY_LIMIT, 1)),
        (raw(1), b"MemoryError\nValueError: x\n", (Termination.EXITED, 1)),
    ],
)
def test_the_exit_table(observed: RawExit, stderr: bytes, expected: tuple[Termination, int]) -> None:
    assert classify(observed, LIMITS, stderr) == expected


def test_capped_output_keeps_the_head_and_counts_the_rest() -> None:
    output = CappedOutput(5)
    output.write(b"abc")
    output.write(b"defgh")
    assert output.truncated
    assert output.text() == "abcde\n[... truncated 3 bytes]"
    assert output.tail == b"abcdefgh"


def test_capped_output_under_the_cap_is_untouched() -> None:
    output = CappedOutput(100)
    output.write("é".encode())
    assert not output.truncated and output.text() == "é"


@pytest.mark.parametrize("field", ["memory_bytes", "cpu_seconds", "processes", "output_bytes", "scratch_bytes"])
def test_limits_refuse_non_positive_values(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Limits(**{field: 0})


def test_limits_refuse_a_non_positive_wall_clock() -> None:
    with pytest.raises(ValueError, match="wall_seconds"):
        Limits(wall_seconds=0)


@pytest.mark.parametrize("target", ["relative/path", "/a/../b", "/a/", "/", "/scratch", "/scratch/x", "/usr/lib",
                                    "/opt/sandbox-env", "/proc"])
def test_mounts_refuse_bad_or_reserved_targets(target: str) -> None:
    with pytest.raises(ValueError, match="Mount target"):
        Mount(Path("/tmp"), target)


def test_a_mount_may_target_a_fresh_folder() -> None:
    assert Mount(Path("/tmp"), "/course/tests").target == "/course/tests"


def test_the_environment_adds_the_fixed_variables() -> None:
    assert sandbox_env({"A": "1"}) == {"A": "1", **FIXED_ENV}


@pytest.mark.parametrize("variables", [{"HOME": "/root"}, {"A=B": "1"}, {"": "1"}, {"A": "nul\0"}])
def test_the_environment_refuses_bad_or_fixed_variables(variables: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        sandbox_env(variables)


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown sandbox backend 'chroot'"):
        get_backend("chroot")


def test_a_missing_mount_source_is_refused() -> None:
    backend = get_backend("bwrap")
    with pytest.raises(ValueError, match="does not exist"):
        backend.spawn(["true"], mounts=[Mount(Path("/nonexistent/folder"), "/course")], limits=Limits())
