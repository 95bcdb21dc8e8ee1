"""Apply a unified diff to one file's text, strictly.

Mutants are stored as patches against the reference ``luong.py`` and rebuilt at grading time, in
the trusted process, without ``patch`` or ``git`` on the machine. Unlike ``patch`` this applier
has no fuzz and no offset search: every hunk must match the source exactly at the line its header
names, or the whole patch is refused. A patch that has drifted from the reference must fail
loudly, because a silently misplaced mutant would grade students against the wrong code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
NO_NEWLINE_MARK = "\\"  # "\ No newline at end of file": the previous line has no "\n"
OLD_SIDE, NEW_SIDE = " -", " +"  # the line tags each side of a hunk is made of


class PatchError(ValueError):
    """The patch is malformed, or does not match the source exactly."""


@dataclass(frozen=True)
class Hunk:
    old_start: int  # 1-based; for an empty old side, the line after which the new lines go
    old_len: int
    new_start: int
    new_len: int
    body: tuple[tuple[str, str], ...]  # (tag, text with its "\n"), tag one of " ", "-", "+"

    def side(self, tags: str) -> list[str]:
        return [text for tag, text in self.body if tag in tags]


def split_lines(text: str) -> list[str]:
    """Lines with their "\n" kept; unlike str.splitlines, only "\n" ends a line."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _read_hunk(lines: list[str], at: int, header: re.Match) -> tuple[Hunk, int]:
    """Parse the hunk whose header is ``lines[at]``; return it and the index after it."""
    old_start, old_len, new_start, new_len = (
        int(value) if value is not None else 1 for value in header.groups()
    )
    body: list[tuple[str, str]] = []
    old_left, new_left, i = old_len, new_len, at + 1
    while old_left or new_left or (i < len(lines) and lines[i].startswith(NO_NEWLINE_MARK)):
        if i == len(lines):
            raise PatchError(f"line {at + 1}: hunk ends early (the patch is truncated)")
        line = lines[i]
        if line.startswith(NO_NEWLINE_MARK):
            if not body:
                raise PatchError(f"line {i + 1}: '\\ No newline' mark before any hunk line")
            tag, text = body[-1]
            body[-1] = (tag, text.removesuffix("\n"))
        elif line[:1] in (" ", "-", "+"):
            tag = line[0]
            old_left -= tag in OLD_SIDE
            new_left -= tag in NEW_SIDE
            if old_left < 0 or new_left < 0:
                raise PatchError(f"line {i + 1}: hunk is longer than its header {header.group(0)}")
            body.append((tag, line[1:]))
        else:
            raise PatchError(f"line {i + 1}: {line.rstrip()!r} is not a hunk line")
        i += 1
    return Hunk(old_start, old_len, new_start, new_len, tuple(body)), i


def parse_patch(patch: str) -> list[Hunk]:
    """The hunks of a single-file unified diff; header lines before the first hunk are skipped."""
    lines = split_lines(patch)
    hunks: list[Hunk] = []
    i = 0
    while i < len(lines):
        header = HUNK_HEADER.match(lines[i])
        if header:
            hunk, i = _read_hunk(lines, i, header)
            hunks.append(hunk)
        elif hunks:
            raise PatchError(
                f"line {i + 1}: {lines[i].rstrip()!r} is outside every hunk"
                " (a hunk longer than its header, or a second file: one file per patch)"
            )
        else:
            i += 1
    if not hunks:
        raise PatchError("the patch has no hunks")
    return hunks


def apply_patch(source: str, patch: str) -> str:
    """``source`` with every hunk of ``patch`` applied, each matched exactly where it says."""
    old = split_lines(source)
    new: list[str] = []
    done = 0  # lines of ``old`` already copied or replaced
    for number, hunk in enumerate(parse_patch(patch), start=1):
        start = hunk.old_start if hunk.old_len == 0 else hunk.old_start - 1
        expected = hunk.side(OLD_SIDE)
        if start < done:
            raise PatchError(f"hunk {number} overlaps the one before it or is out of order")
        if old[start : start + len(expected)] != expected:
            raise PatchError(f"hunk {number} does not match the source at line {hunk.old_start}")
        new += old[done:start]
        if hunk.new_start != len(new) + (hunk.new_len > 0):
            raise PatchError(f"hunk {number}: its new-side start {hunk.new_start} is inconsistent")
        new += hunk.side(NEW_SIDE)
        done = start + len(expected)
    return "".join(new + old[done:])
