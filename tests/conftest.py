"""Fixtures every tier shares: the chapter, and a skip when no bwrap sandbox can run here."""

from __future__ import annotations

import os

import pytest

from grader.chapter import Chapter, load_chapter
from grader.grade_key import KEY_BYTES, KEY_VARIABLE
from grader.sandbox import SandboxUnavailable, get_backend

# Every grade the tests make (in process or in a `grader` process they start) draws with one key,
# on any machine, so that a failure one run finds, the next run finds too; set GRADER_KEY outside
# to try other draws.
os.environ.setdefault(KEY_VARIABLE, "4c34" * (KEY_BYTES // 2))


@pytest.fixture(scope="session")
def chapter() -> Chapter:
    return load_chapter("L4.3")


@pytest.fixture(scope="session")
def sandbox_ready() -> None:
    try:
        get_backend("bwrap").check()
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")
