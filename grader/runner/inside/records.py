"""What a child tells the zygote, as frames on its private record pipe, and how it is read.

The child is untrusted (it shares a process with the student's tests), so the zygote reads
these frames as data: each event is checked for its exact fields, their types and their bounds,
and anything else makes the run a crash rather than a result.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .outcomes import Outcome
from .protocol import encode_frame

MAX_MESSAGE_CHARS = 2048
IMPORT_FAILED = "the module failed to import"  # how a run's message begins when its module did not import
MAX_NODE_CHARS = 4096  # a test id; pytest's ids of parametrized tests can be long, but not this long
# The most a recorded time may be; the driver's answer schema (grader/runner/channel.py) refuses
# any time above it too.
MAX_SECONDS = 1e6
MAX_SKIPPED_NAMED = 5  # of a suite run's skipped tests, the ids its answer names (it counts them all)
TEST_OUTCOMES = {Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED}


def _text(limit: int) -> Callable[[object], bool]:
    return lambda value: type(value) is str and len(value) <= limit


def _seconds(value: object) -> bool:
    """An int or float (a bool is an int too), 0 to MAX_SECONDS: JSON bounds no number, and a time
    of 10**400 or infinity would overflow or poison the sums the zygote answers with."""
    return type(value) in (int, float) and 0 <= value <= MAX_SECONDS  # NaN fails every comparison


_node = _text(MAX_NODE_CHARS)
_message = _text(MAX_MESSAGE_CHARS)


def _nodes(value: object) -> bool:
    return type(value) is list and all(_node(node) for node in value)


def _test_outcome(value: object) -> bool:
    return type(value) is str and value in {outcome.value for outcome in TEST_OUTCOMES}


# Event name -> its fields (beyond "e" and "blobs"), each with the check its value must pass. Every
# string is bounded, so that an answer built from the events fits the driver's schema.
EVENT_FIELDS: dict[str, dict[str, Callable[[object], bool]]] = {
    "installed": {"seconds": _seconds},  # the module is installed (and swapped into the tests)
    "collected": {"nodes": _nodes},  # course runs: every test id pytest collected
    "start": {"node": _node},  # a test is about to run
    "end": {"node": _node, "outcome": _test_outcome, "message": _message, "seconds": _seconds,
            "cpu_seconds": _seconds},
    "raised": {"message": _message},  # the module failed to import, or the call raised
    "return": {},  # a call's answer, in the frame's single blob
    "done": {},  # the child finished its job; only now can a run pass
}


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Messages cross to the grader at most MAX_MESSAGE_CHARS long, keeping the end (the error)."""
    return text if len(text) <= limit else "[...] " + text[-(limit - 6):]


def check_event(header: dict, blobs: list[bytes]) -> dict:
    """Return the event if it has exactly the expected shape; raise ValueError otherwise."""
    name = header.get("e")
    if type(name) is not str:  # nor formatted: a list may be unhashable, and nested deep enough to fail repr
        raise ValueError("record event without a name")
    if name not in EVENT_FIELDS:
        raise ValueError(f"unknown record event {name[:80]!r}")
    fields = EVENT_FIELDS[name]
    if set(header) != {"e", "blobs", *fields}:
        raise ValueError(f"record event {name!r} has fields {sorted(header)}")
    for key, valid in fields.items():
        if not valid(header[key]):
            raise ValueError(f"record event {name!r}: {key} has the wrong type or is out of range")
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
