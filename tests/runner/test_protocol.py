"""Unit tests of the pieces shared by both sides: framing, record checks, the outcome table."""

from __future__ import annotations

import os
import signal
import time

import pytest

from grader.runner.channel import Channel
from grader.runner.driver import timeout_from_reference
from grader.runner.inside.outcomes import ChildExit, Outcome, classify_status, decide
from grader.runner.inside.protocol import MAX_HEADER_BYTES, FrameBuffer, ProtocolError, encode_frame
from grader.runner.inside.records import check_event, clip
from grader.runner.results import REFERENCE, REFERENCE_AGAIN, RunnerError, SuitePass, SuiteRun
from grader.sandbox import ExitInfo, SandboxedProcess, Termination


def test_frames_survive_any_chunking() -> None:
    stream = encode_frame({"e": "start", "node": "t::a"}) + encode_frame({"e": "return"}, [b"\x00\xffdata"])
    for size in (1, 3, len(stream)):
        buffer = FrameBuffer(max_blob_bytes=100)
        frames = [frame for i in range(0, len(stream), size) for frame in buffer.feed(stream[i : i + size])]
        assert frames == [({"e": "start", "node": "t::a", "blobs": []}, []), ({"e": "return", "blobs": [6]}, [b"\x00\xffdata"])]


def _framed(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


@pytest.mark.parametrize("garbage", [
    b"\x00\x00\x00\x00", b"\x00\x00\x00\x02[]", b"\x00\x00\x00\x03{x}", b"\x00\x00\x00\x0c{\"blobs\":-1}", b"\xff\xff\xff\xff",
    _framed(b'{"blobs":[],"x":' + b"[" * 200_000 + b"]" * 200_000 + b"}"),  # RecursionError in the decoder
    _framed(b'{"blobs":[],"x":NaN}'), _framed(b'{"blobs":[],"x":-Infinity}'),  # not JSON, and pass range checks
    _framed(b'{"blobs":[],"x":' + b"9" * 5000 + b"}"),  # over Python's digit limit for int()
    _framed(b'{"blobs":[],"x":"\xff"}'),  # not UTF-8
])
def test_malformed_frames_are_refused(garbage: bytes) -> None:
    with pytest.raises(ProtocolError):
        FrameBuffer(max_blob_bytes=100).feed(garbage)


def test_blob_sizes_over_the_cap_are_refused_before_reading_them() -> None:
    with pytest.raises(ProtocolError, match="exceed"):
        FrameBuffer(max_blob_bytes=4).feed(encode_frame({"e": "return"}, [b"12345"]))


@pytest.mark.parametrize("event", [
    {"e": "end", "node": "t", "outcome": "passed", "message": "", "seconds": 0.1, "cpu_seconds": 0.1, "extra": 1},
    {"e": "end", "node": "t", "outcome": "won", "message": "", "seconds": 0.1, "cpu_seconds": 0.1},
    {"e": "end", "node": 3, "outcome": "passed", "message": "", "seconds": 0.1, "cpu_seconds": 0.1},
    {"e": "end", "node": "t", "outcome": "passed", "message": "", "seconds": 0.1},
    {"e": "done", "node": "t"},
    {"e": "exec", "code": "print(1)"},
    {"e": "installed", "seconds": True},
    {"e": "end", "node": "t", "outcome": "passed", "message": "", "seconds": 10**400, "cpu_seconds": 0.1},
    {"e": "end", "node": "t", "outcome": "passed", "message": "", "seconds": 0.1, "cpu_seconds": float("inf")},
    {"e": "end", "node": "t", "outcome": "passed", "message": "", "seconds": float("nan"), "cpu_seconds": 0.1},
    {"e": "end", "node": "t", "outcome": "passed", "message": "", "seconds": -0.5, "cpu_seconds": 0.1},
    {"e": "end", "node": "t", "outcome": "passed", "message": "m" * 2049, "seconds": 0.1, "cpu_seconds": 0.1},
    {"e": "end", "node": "t", "outcome": ["passed"], "message": "", "seconds": 0.1, "cpu_seconds": 0.1},
    {"e": "start", "node": "t" * 4097},
    {"e": "collected", "nodes": ["t", 3]},
    {"e": []},
    {"e": {"nested": "name"}},
])
def test_records_of_the_wrong_shape_are_rejected(event: dict) -> None:
    with pytest.raises(ValueError):
        check_event({**event, "blobs": []}, [])


def test_a_return_record_needs_exactly_one_payload() -> None:
    with pytest.raises(ValueError):
        check_event({"e": "return", "blobs": []}, [])
    assert check_event({"e": "return", "blobs": [1]}, [b"x"])["e"] == "return"


def test_clip_keeps_the_end_of_long_messages() -> None:
    clipped = clip("x" * 5000 + "AssertionError")
    assert len(clipped) == 2048 and clipped.endswith("AssertionError")


def _exited(code: int) -> int:
    return code << 8


@pytest.mark.parametrize(("status", "wall_killed", "recorded", "expected"), [
    (_exited(0), False, Outcome.PASSED, Outcome.PASSED),
    (_exited(0), False, None, Outcome.CRASHED),  # os._exit(0) before the record: never a pass
    (_exited(0), False, Outcome.FAILED, Outcome.FAILED),
    (_exited(3), False, Outcome.PASSED, Outcome.CRASHED),  # a record, but no clean exit
    (signal.SIGSEGV, False, Outcome.PASSED, Outcome.CRASHED),
    (signal.SIGXCPU, False, None, Outcome.TIMEOUT),
    (signal.SIGKILL, True, Outcome.PASSED, Outcome.TIMEOUT),
])
def test_the_exit_table_decides_before_the_record(status: int, wall_killed: bool, recorded, expected) -> None:
    child_exit, description = classify_status(status, wall_killed=wall_killed)
    assert decide(child_exit, recorded) is expected
    assert description


def test_every_child_exit_has_a_row_in_the_table() -> None:
    for child_exit in ChildExit:
        decide(child_exit, None)
    assert os.WIFEXITED(_exited(0))


def test_timeout_from_reference_is_generous_with_a_floor() -> None:
    assert timeout_from_reference(0.0) == 0.5
    assert timeout_from_reference(1.0) == pytest.approx(10.2)


def _run(run_id: str, outcome: Outcome) -> SuiteRun:
    return SuiteRun(run_id, outcome, None, "", "", 0.1, 0.1, 0.0)


def test_a_suite_that_fails_the_second_reference_run_is_flaky_and_invalid() -> None:
    runs = {REFERENCE: _run(REFERENCE, Outcome.PASSED), "v": _run("v", Outcome.PASSED),
            "m": _run("m", Outcome.FAILED), REFERENCE_AGAIN: _run(REFERENCE_AGAIN, Outcome.FAILED)}
    result = SuitePass(timeout=1.0, runs=runs, variants=("v",), mutants=("m",))
    assert result.flaky and not result.valid and result.killed == {"m"}
    steady = SuitePass(timeout=1.0, runs={**runs, REFERENCE_AGAIN: _run(REFERENCE_AGAIN, Outcome.PASSED)},
                       variants=("v",), mutants=("m",))
    assert not steady.flaky and steady.valid


class _PipeSandbox(SandboxedProcess):
    """A sandbox that is only a pair of pipes and has ended: what Channel needs of one."""

    def __init__(self) -> None:
        read, write = os.pipe()  # one pipe for both ways: nothing is read back here
        self.stdin, self.stdout = os.fdopen(write, "wb"), os.fdopen(read, "rb")
        self.killed = False

    def wait(self, timeout: float | None = None) -> ExitInfo:
        return ExitInfo(Termination.SIGNALLED, -9, "", False, 0.0)

    def kill(self) -> None:
        self.killed = True

    def close(self) -> None:
        self.stdin.close()
        self.stdout.close()


def test_a_request_too_big_to_frame_is_a_runner_error() -> None:
    """A request is built partly from what the sandbox said (the names of the tests that killed):
    one that outgrew the frame's limit raised ProtocolError out of the grade, a traceback and no
    report (red team, round 24). It is a runner error now, which a grade reports, and the sandbox
    is killed."""
    sandbox = _PipeSandbox()
    with sandbox, pytest.raises(RunnerError, match="a request could not be sent: frame header of"):
        Channel(sandbox, shows_sandbox=False).send({"order": ["x" * MAX_HEADER_BYTES]}, [b"module"],
                                                   deadline=time.monotonic() + 5)
    assert sandbox.killed
