"""The trusted end of the zygote's protocol pipe: frames with deadlines, answers checked by schema.

Every read has a deadline, so a hung or dead zygote becomes a RunnerError, never a hang. Answers
come from inside the sandbox, so each is validated against a JSON schema before any field is used.
Numbers are bounded there too: a time of 1e400 reads as infinity, and a deadline derived from it
would overflow select().
"""

from __future__ import annotations

import os
import select
import time

import jsonschema

from grader.runner.inside.outcomes import Outcome
from grader.runner.inside.protocol import LENGTH_BYTES, ProtocolError, decode_header, encode_frame, header_length
from grader.runner.inside.records import MAX_SECONDS, MAX_SKIPPED_NAMED
from grader.runner.results import RunnerError
from grader.sandbox import SandboxedProcess

MAX_ANSWER_BLOB_BYTES = 96 << 20

_TEXT = {"type": "string", "maxLength": 4096}
_SECONDS = {"type": "number", "minimum": 0, "maximum": MAX_SECONDS}
_BLOBS = {"type": "array", "items": {"type": "integer", "minimum": 0}}
READY_SCHEMA = {
    "type": "object",
    "required": ["kind", "landlock_abi", "magic", "collected", "collection_errors", "pid", "blobs"],
    "properties": {
        "kind": {"const": "ready"},
        "landlock_abi": {"type": "integer", "minimum": 0},
        "magic": {"type": "string", "pattern": "^[0-9a-f]{8}$"},
        "collected": {"type": "array", "items": {"type": "string"}},
        "collection_errors": {"type": "array", "items": _TEXT},
        "pid": {"type": "integer"},
        "blobs": {"type": "array", "maxItems": 0},
    },
    "additionalProperties": False,
}
HELD_SCHEMA = {
    "type": "object",
    "required": ["kind", "runs", "blobs"],
    "properties": {"kind": {"const": "held"}, "runs": {"type": "integer", "minimum": 0},
                   "blobs": {"type": "array", "maxItems": 0}},
    "additionalProperties": False,
}
_TEST = {
    "type": "object",
    "required": ["node", "outcome", "message", "seconds"],
    "properties": {"node": {"type": "string"}, "outcome": {"enum": ["passed", "failed", "error", "skipped"]},
                   "message": _TEXT, "seconds": _SECONDS},
    "additionalProperties": False,
}
ANSWER_SCHEMA = {
    "type": "object",
    "required": ["kind", "run", "outcome", "node", "message", "output", "seconds", "install_seconds",
                 "test_seconds", "test_cpu_seconds", "cpu_seconds", "page_faults", "blobs"],
    "properties": {
        "kind": {"enum": ["course", "suite", "alone", "call"]},
        "run": {"type": "integer"},
        # a single test may skip; no run as a whole does
        "outcome": {"enum": [outcome.value for outcome in Outcome if outcome is not Outcome.SKIPPED]},
        "node": {"type": ["string", "null"]},
        "message": _TEXT,
        "output": _TEXT,
        "seconds": _SECONDS,
        "install_seconds": {"anyOf": [_SECONDS, {"type": "null"}]},
        "test_seconds": _SECONDS,
        "test_cpu_seconds": _SECONDS,
        "cpu_seconds": _SECONDS,
        "page_faults": {"type": "integer", "minimum": 0, "maximum": 1 << 62},
        "blobs": _BLOBS,
        "collected": {"type": "array", "items": {"type": "string"}},
        "complete": {"type": "boolean"},
        "tests": {"type": "array", "items": _TEST},
        "skipped": {"type": "integer", "minimum": 0, "maximum": 1 << 62},
        "skipped_named": {"type": "array", "items": _TEXT, "maxItems": MAX_SKIPPED_NAMED},
    },
    "additionalProperties": False,
    "if": {"properties": {"kind": {"const": "course"}}},
    "then": {"required": ["collected", "complete", "tests"]},
}


def _compiled(schema: dict) -> jsonschema.protocols.Validator:
    """A validator checked once: jsonschema.validate re-checks the schema itself on every call,
    which costs more than the rest of a killed run's bookkeeping."""
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


READY = _compiled(READY_SCHEMA)
HELD = _compiled(HELD_SCHEMA)
ANSWER = _compiled(ANSWER_SCHEMA)


class Channel:
    """Frames to and from one sandboxed zygote.

    ``shows_sandbox`` says whether a failure may quote what the sandbox said (the end of its
    stderr, the frame that broke the protocol). Not for a zygote that collected the student's
    tests: their conftest runs in it and sees every module sent there, the grader's reference and
    mutants included, so anything it prints or sends could carry their text into the report. Nor,
    once the first run has been asked for, for the clean one (stop_quoting): its zygote's own
    errors can then name what a run made (a path of folders a test named after the module it held
    died in a traceback: red team, round 29)."""

    def __init__(self, process: SandboxedProcess, *, shows_sandbox: bool) -> None:
        self._process = process
        self._shows_sandbox = shows_sandbox
        self._in = process.stdout.fileno()
        self._out = process.stdin.fileno()
        os.set_blocking(self._out, False)

    def stop_quoting(self) -> None:
        """From now on a failure says what became of the sandbox, but not what it said."""
        self._shows_sandbox = False

    def send(self, header: dict, blobs: list[bytes], *, deadline: float) -> None:
        try:
            frame = encode_frame(header, blobs)
        except ProtocolError as exc:  # a request built from what the sandbox said (test names), grown too big
            raise self.failure(f"a request could not be sent: {exc}", kill=True) from None
        view = memoryview(frame)
        while view:
            self._wait(self._out, deadline, writing=True)
            try:
                view = view[os.write(self._out, view):]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                raise self.failure("the zygote stopped reading its input") from None

    def receive(self, validator: jsonschema.protocols.Validator, *, deadline: float) -> tuple[dict, list[bytes]]:
        """The next frame, checked by ``validator`` (READY, HELD or ANSWER)."""
        try:
            length = header_length(self._read(LENGTH_BYTES, deadline))
            header = decode_header(self._read(length, deadline), max_blob_bytes=MAX_ANSWER_BLOB_BYTES)
            validator.validate(header)
        except (ProtocolError, jsonschema.ValidationError) as exc:
            raise self.failure("the zygote sent an invalid frame" + (f": {exc}" if self._shows_sandbox else "")) from None
        return header, [self._read(size, deadline) for size in header["blobs"]]

    def _read(self, size: int, deadline: float) -> bytes:
        chunks, left = [], size
        while left:
            self._wait(self._in, deadline, writing=False)
            chunk = os.read(self._in, min(left, 1 << 20))
            if not chunk:
                raise self.failure("the zygote closed its output")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _wait(self, fd: int, deadline: float, *, writing: bool) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not (select.select([], [fd], [], remaining)[1] if writing
                                  else select.select([fd], [], [], remaining)[0]):
            raise self.failure("the zygote did not answer in time", kill=True)

    def failure(self, what: str, *, kill: bool = False) -> RunnerError:
        """A RunnerError that says what happened to the sandbox, with the end of its stderr."""
        if kill:
            self._process.kill()
        try:
            info = self._process.wait(timeout=5.0)
        except TimeoutError:
            return RunnerError(f"{what}; the sandbox is still running")
        tail = info.stderr[-2000:].strip() if self._shows_sandbox else ""
        return RunnerError(f"{what}; the sandbox {info.termination.value} (returncode {info.returncode})"
                           + (f":\n{tail}" if tail else ""), info.termination)
