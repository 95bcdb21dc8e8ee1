"""Reports rendered from real grades: each submission goes through the whole pipeline once.

Two submissions cover both sides of what a report may show: a correct implementation written
differently from the reference (so the reference is revealed), and the reference with pitfall s01
(so it is not), both with the instructor's oracle suite as the student's tests.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.chapter import REPO_ROOT, Chapter
from grader.grading import GradeRequest, grade
from grader.patches import apply_patch
from grader.report.model import Report, Verdict

ARTIFACTS = REPO_ROOT / "test-artifacts"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run"]


@pytest.fixture(scope="session")
def s01_impl(chapter: Chapter) -> Iterator[Path]:
    """The reference with pitfall s01 (W_c [h ; c]) applied, as a student's luong.py."""
    folder = Path(tempfile.mkdtemp(prefix="reports-s01-"))
    patch = (chapter.pitfalls.parent / "pitfalls" / "s01.patch").read_text(encoding="utf-8")
    impl = folder / "luong.py"
    impl.write_text(apply_patch(chapter.reference_impl.read_text(encoding="utf-8"), patch), encoding="utf-8")
    yield impl
    shutil.rmtree(folder)


def _graded(chapter: Chapter, impl: Path) -> Report:
    report = grade(GradeRequest(chapter=chapter.id, impl=impl, tests=chapter.oracle_suite))
    assert report.verdict is not Verdict.ERROR, report.error
    return report


@pytest.fixture(scope="module")
def passing_report(chapter: Chapter, sandbox_ready: None) -> Report:
    """A correct implementation (the variant) with the oracle suite: the implementation passes."""
    return _graded(chapter, chapter.variants[0])


@pytest.fixture(scope="module")
def pitfall_report(chapter: Chapter, sandbox_ready: None, s01_impl: Path) -> Report:
    """The s01 implementation with the oracle suite: the implementation fails, the tests are graded."""
    return _graded(chapter, s01_impl)


@pytest.fixture(scope="session")
def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("chromium is not installed (scripts/setup.sh --dev installs it)")
    return path


@pytest.fixture
def open_page(chromium: str, tmp_path: Path):
    """Run headless Chromium on a file URL with extra flags; returns its standard output."""

    def run(url: str, *flags: str) -> str:
        profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
        result = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *flags, url],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr[-2000:]
        return result.stdout

    return run
