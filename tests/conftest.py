"""Fixtures every tier shares: the chapter, and a skip when no bwrap sandbox can run here."""

from __future__ import annotations

import pytest

from grader.chapter import Chapter, load_chapter
from grader.sandbox import SandboxUnavailable, get_backend


@pytest.fixture(scope="session")
def chapter() -> Chapter:
    return load_chapter("L4.3")


@pytest.fixture(scope="session")
def sandbox_ready() -> None:
    try:
        get_backend("bwrap").check()
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")
