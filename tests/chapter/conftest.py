"""Shared by the chapter-material tests: the reference module, and a run of the course tests.

The reference is imported under a private module name, never as ``tinyllm.seq2seq.luong``, so
this process holds no installed implementation that another test could pick up by accident. Course
test runs happen in a fresh pytest process each, for the same reason.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from grader.chapter import load_chapter

CHAPTER = load_chapter("L4.3")
COURSE_TEST_COUNT = 11
SUBSTRATE_PARENT = str(CHAPTER.substrate.parent)
if SUBSTRATE_PARENT not in sys.path:
    sys.path.insert(0, SUBSTRATE_PARENT)


@pytest.fixture(scope="session")
def reference_luong() -> ModuleType:
    spec = importlib.util.spec_from_file_location("l43_reference_luong", CHAPTER.reference_impl)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def course_test_outcomes(impl: Path, scratch: Path) -> dict[str, bool]:
    """{course test name: failed?} for ``impl``, read from the JUnit XML of a fresh pytest run."""
    report = scratch / "course-tests.xml"
    command = [sys.executable, "-m", "pytest", str(CHAPTER.course_tests), "--luong", str(impl)]
    command += ["-p", "no:cacheprovider", "-q", f"--junitxml={report}"]
    run = subprocess.run(command, capture_output=True, text=True, cwd=scratch)
    assert report.is_file(), f"the course tests did not run on {impl}:\n{run.stdout}\n{run.stderr}"
    cases = ET.parse(report).getroot().iter("testcase")
    outcomes = {case.get("name"): any(child.tag in ("failure", "error") for child in case) for case in cases}
    assert len(outcomes) == COURSE_TEST_COUNT, f"expected {COURSE_TEST_COUNT} course tests, ran {sorted(outcomes)}"
    return outcomes


@pytest.fixture
def course_test_failures(tmp_path: Path) -> Callable[[Path], set[str]]:
    """Names of the course tests that fail against a given luong.py."""
    return lambda impl: {name for name, failed in course_test_outcomes(impl, tmp_path).items() if failed}
