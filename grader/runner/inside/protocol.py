"""Framing for every byte stream between the grader, the zygote and its children.

A frame is a 4-byte big-endian header length, a JSON object (the header), then raw byte
payloads ("blobs") whose lengths the header lists under ``"blobs"``. JSON carries the small
structured part and blobs carry module source and probe arrays unchanged, so nothing is ever
pickled and every side can check a frame's shape before it trusts a field.

IMPORTANT: this module is imported by the trusted driver (grader.runner.channel) and by the code
inside the sandbox, so it uses the standard library only and imports no sibling module.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence

_LENGTH = struct.Struct(">I")
LENGTH_BYTES = _LENGTH.size
MAX_HEADER_BYTES = 1 << 20  # headers hold names and messages, never source or arrays


class ProtocolError(Exception):
    """A frame is malformed: bad length, not JSON, not an object, or bad blob sizes."""


def encode_frame(header: dict, blobs: Sequence[bytes | bytearray | memoryview] = ()) -> bytes:
    """One frame as bytes; the header gains ``"blobs"`` with each payload's length."""
    body = json.dumps({**header, "blobs": [len(blob) for blob in blobs]}, separators=(",", ":")).encode()
    if len(body) > MAX_HEADER_BYTES:
        raise ProtocolError(f"frame header of {len(body)} bytes exceeds {MAX_HEADER_BYTES}")
    return b"".join([_LENGTH.pack(len(body)), body, *(bytes(blob) for blob in blobs)])


def header_length(prefix: bytes) -> int:
    """The header size announced by a frame's first LENGTH_BYTES bytes, checked against the cap."""
    (length,) = _LENGTH.unpack(prefix)
    if length == 0 or length > MAX_HEADER_BYTES:
        raise ProtocolError(f"frame header length {length} is out of range")
    return length


def _refuse_constant(name: str) -> float:
    """NaN and Infinity are not JSON (Python's decoder accepts them), and pass every range check."""
    raise ValueError(f"{name} is not a JSON number")


def decode_header(body: bytes, *, max_blob_bytes: int) -> dict:
    """Parse a header and check its blob list, so a reader knows exactly how much follows.

    Whatever the bytes, the only failure is ProtocolError: a reader of an untrusted stream must
    not die of it. The decoder raises ValueError for bad UTF-8, bad JSON or an integer over
    Python's digit limit, and RecursionError for arrays nested deeper than the recursion limit
    (200,000 of them fit under MAX_HEADER_BYTES).
    """
    try:
        header = json.loads(body, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"frame header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("frame header is not a JSON object")
    blobs = header.get("blobs")
    if not isinstance(blobs, list) or not all(type(n) is int and n >= 0 for n in blobs):
        raise ProtocolError("frame header lacks a list of blob lengths")
    if sum(blobs) > max_blob_bytes:
        raise ProtocolError(f"frame payloads of {sum(blobs)} bytes exceed {max_blob_bytes}")
    return header


class FrameBuffer:
    """Incremental decoder for a stream read in arbitrary chunks (the zygote's child pipes)."""

    def __init__(self, *, max_blob_bytes: int) -> None:
        self._data = bytearray()
        self._max_blob_bytes = max_blob_bytes

    def feed(self, chunk: bytes) -> list[tuple[dict, list[bytes]]]:
        """Append ``chunk`` and return every frame it completes; raise ProtocolError on garbage."""
        self._data += chunk
        frames = []
        while len(self._data) >= LENGTH_BYTES:
            length = header_length(bytes(self._data[:LENGTH_BYTES]))
            if len(self._data) < LENGTH_BYTES + length:
                break
            header = decode_header(bytes(self._data[LENGTH_BYTES : LENGTH_BYTES + length]),
                                   max_blob_bytes=self._max_blob_bytes)
            end = LENGTH_BYTES + length + sum(header["blobs"])
            if len(self._data) < end:
                break
            blobs, offset = [], LENGTH_BYTES + length
            for size in header["blobs"]:
                blobs.append(bytes(self._data[offset : offset + size]))
                offset += size
            del self._data[:end]
            frames.append((header, blobs))
        return frames
