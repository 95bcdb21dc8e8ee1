"""The student's verbs, driven as a student runs them: `python -m grader <verb>` in a course repo."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


IMPL = "python/tinyllm/seq2seq/luong.py"


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
