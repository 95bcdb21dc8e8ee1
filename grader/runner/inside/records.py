"""What a child tells the zygote, as frames on its private record pipe, and how it is read.

The child is untrusted (it shares a process with the student's tests), so the zygote reads
these frames as data: each event is checked for its exact fields and types, and anything else
makes the run a crash rather than a result.
"""

from __future__ import annotations

import os

from .outcomes import Outcome
from .protocol import encode_frame

MAX_MESSAGE_CHARS = 2048
TEST_OUTCOMES = {Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED}

# Event name -> required fields and their types (beyond "e" and "blobs").
EVENT_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "installed": {"seconds": (int, float)},  # the module is installed (and swapped into the tests)
    "collected": {"nodes": list},  # course runs: every test id pytest collected
    "start": {"node": str},  # a test is about to run
    "end": {"node": str, "outcome": str, "message": str, "seconds": (int, float), "cpu_seconds": (int, float)},
    "raised": {"message": str},  # the module failed to import, or the call raised
    "return": {},  # a call's answer, in the frame's single blob
    "done": {},  # the child finished its job; only now can a run pass
}


def clip(text: str) -> str:
    """Messages cross to the grader at most MAX_MESSAGE_CHARS long, keeping the end (the error)."""
    return text if len(text) <= MAX_MESSAGE_CHARS else "[...] " + text[-(MAX_MESSAGE_CHARS - 6):]


def check_event(header: dict, blobs: list[bytes]) -> dict:
    """Return the event if it has exactly the expected shape; raise ValueError otherwise."""
    name = header.get("e")
    if name not in EVENT_FIELDS:
        raise ValueError(f"unknown record event {name!r}")
    fields = EVENT_FIELDS[name]
    if set(header) != {"e", "blobs", *fields}:
        raise ValueError(f"record event {name!r} has fields {sorted(header)}")
    for key, kind in fields.items():
        if not isinstance(header[key], kind) or isinstance(header[key], bool):
            raise ValueError(f"record event {name!r}: {key} has the wrong type")
    if name == "end" and header["outcome"] not in {o.value for o in TEST_OUTCOMES}:
        raise ValueError(f"record event 'end': unknown outcome {header['outcome']!r}")
    if name == "collected" and not all(isinstance(node, str) for node in header["nodes"]):
        raise ValueError("record event 'collected': node ids must be strings")
    if len(blobs) != (1 if name == "return" else 0):
        raise ValueError(f"record event {name!r} has {len(blobs)} payloads")
    return header


class Recorder:
    """The child's writer end of the record pipe.

    Each write wakes the zygote, so an event that need not be seen at once is held and goes out
    with the next one that must (``hold``): a test's "start" is always written before the test
    runs, so a run that hangs or dies is pinned to the test it was running.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._held = b""

    def emit(self, event: str, blob: bytes | None = None, *, hold: bool = False, **fields: object) -> None:
        self._held += encode_frame({"e": event, **fields}, [blob] if blob is not None else [])
        if hold:
            return
        view = memoryview(self._held)
        self._held = b""
        while view:
            view = view[os.write(self._fd, view):]
