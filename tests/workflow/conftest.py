"""The student's verbs, driven as a student runs them: `python -m grader <verb>` in a course repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grader.chapter import REPO_ROOT, Chapter, load_chapter
from grader.sandbox import SandboxUnavailable, get_backend

IMPL = "python/tinyllm/seq2seq/luong.py"


def grader(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "COLUMNS": "160"}, timeout=600)


@pytest.fixture(scope="session")
def chapter() -> Chapter:
    return load_chapter("L4.3")


@pytest.fixture(scope="session")
def sandbox_ready() -> None:
    try:
        get_backend("bwrap").check()
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")


@pytest.fixture
def course_repo() -> Iterator[Callable[[bytes | None], Path]]:
    """A course repo holding a given luong.py (or nothing), readable by the sandbox user."""
    made: list[Path] = []

    def make(impl: bytes | None) -> Path:
        repo = Path(tempfile.mkdtemp(prefix="course-repo-"))
        repo.chmod(0o755)
        made.append(repo)
        if impl is not None:
            path = repo / IMPL
            path.parent.mkdir(parents=True)
            path.write_bytes(impl)
        return repo

    yield make
    for repo in made:
        shutil.rmtree(repo)
