"""grader.patches applies what difflib and diff -u write, and refuses anything that does not fit."""

from __future__ import annotations

import difflib
import random

import pytest

from grader.patches import PatchError, apply_patch, parse_patch

SOURCE = "".join(f"line {n}\n" for n in range(1, 21))


def unified(old: str, new: str, context: int = 3) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), "a/f.py", "b/f.py", n=context
        )
    )


def edited(source: str, rng: random.Random) -> str:
    """A random mix of replaced, deleted and inserted lines."""
    lines = source.splitlines(keepends=True)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(lines) + 1)
        action = rng.choice(("replace", "delete", "insert"))
        if action == "insert" or at == len(lines):
            lines.insert(at, f"new {rng.random()}\n")
        elif action == "delete":
            del lines[at]
        else:
            lines[at] = f"changed {rng.random()}\n"
    return "".join(lines)


def test_applies_random_edits_made_by_difflib():
    rng = random.Random(7)
    for _ in range(200):
        new = edited(SOURCE, rng)
        for context in (0, 1, 3):
            assert apply_patch(SOURCE, unified(SOURCE, new, context)) == new


def test_creates_a_file_and_empties_one():
    assert apply_patch("", unified("", "a\nb\n")) == "a\nb\n"
    assert apply_patch("a\nb\n", unified("a\nb\n", "")) == ""


def test_handles_a_missing_final_newline_on_either_side():
    patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n"
    assert apply_patch("x\ny", patch) == "x\nz\n"
    patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n\\ No newline at end of file\n"
    assert apply_patch("x\ny\n", patch) == "x\nz"


def test_ignores_the_text_after_a_hunk_header():
    patch = "--- a/f\n+++ b/f\n@@ -2 +2 @@ def f():\n-line 2\n+two\n"
    assert apply_patch(SOURCE, patch) == SOURCE.replace("line 2\n", "two\n")


def test_refuses_a_hunk_that_does_not_match_exactly():
    patch = unified(SOURCE, SOURCE.replace("line 10\n", "ten\n"))
    drifted = SOURCE.replace("line 9\n", "line 9 \n")  # one context line differs by a space
    with pytest.raises(PatchError, match="hunk 1 does not match the source at line 7"):
        apply_patch(drifted, patch)


def test_refuses_a_hunk_that_only_matches_elsewhere():
    """patch(1) would find the hunk two lines down; a strict applier must not."""
    patch = unified(SOURCE, SOURCE.replace("line 10\n", "ten\n"))
    shifted = "extra\nextra\n" + SOURCE
    with pytest.raises(PatchError, match="does not match"):
        apply_patch(shifted, patch)


def test_refuses_hunks_out_of_order():
    first = unified(SOURCE, SOURCE.replace("line 3\n", "three\n"), context=0)
    second = unified(SOURCE, SOURCE.replace("line 15\n", "fifteen\n"), context=0)
    hunk = lambda patch: patch.split("@@", 1)[1]  # noqa: E731 - a one-off slice
    swapped = "--- a/f.py\n+++ b/f.py\n@@" + hunk(second) + "@@" + hunk(first)
    with pytest.raises(PatchError, match="out of order"):
        apply_patch(SOURCE, swapped)


def test_refuses_a_wrong_new_side_start():
    patch = unified(SOURCE, SOURCE.replace("line 10\n", "ten\n")).replace("+7,7", "+8,7")
    with pytest.raises(PatchError, match="inconsistent"):
        apply_patch(SOURCE, patch)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("", "no hunks"),
        ("--- a/f\n+++ b/f\n", "no hunks"),
        ("@@ -1,2 +1,2 @@\n line 1\n", "truncated"),
        ("@@ -1 +1,2 @@\n-line 1\n-line 2\n+one\n", "longer than its header"),
        ("@@ -1 +1 @@\n-line 1\n+one\n+uno\n", "outside every hunk"),
        ("@@ -1 +1 @@\n-line 1\n?one\n", "not a hunk line"),
        ("@@ -1 +1 @@\n-line 1\n+one\n--- a/g\n+++ b/g\n", "one file per patch"),
        ("@@ -1,0 +1 @@\n\\ No newline at end of file\n+x\n", "before any hunk line"),
    ],
)
def test_refuses_malformed_patches(patch, message):
    with pytest.raises(PatchError, match=message):
        apply_patch(SOURCE, patch)


def test_parse_patch_reads_header_counts_and_sides():
    (hunk,) = parse_patch("--- a/f\n+++ b/f\n@@ -4,2 +4,3 @@\n line 4\n-line 5\n+five\n+5\n")
    assert (hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len) == (4, 2, 4, 3)
    assert hunk.side(" -") == ["line 4\n", "line 5\n"]
    assert hunk.side(" +") == ["line 4\n", "five\n", "5\n"]
