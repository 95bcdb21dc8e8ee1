"""The bundled examples (examples/L4.3/) graded through `python -m grader check`, as the README says.

Each example is graded once per session and its report shared by the checks below; the correct
and the weak-tests repos are graded a second time to show that a regrade gives the same report.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.chapter import REPO_ROOT, load_chapter
from grader.report.json_report import validate
from grader.sandbox import SandboxUnavailable, get_backend

pytestmark = pytest.mark.slow  # each grade runs the whole mutation pass in a real sandbox

EXAMPLES = REPO_ROOT / "examples" / "L4.3"
CHAPTER = load_chapter("L4.3")
PITFALL_EXAMPLES = ["s01", "s04", "s05", "s07"]
SECTION3_SUITE_MISSES = ["s02", "s03", "s05"]  # the pitfall repos' small suite (see the README)
GRADE_TIMEOUT = 900  # a hang guard only


@dataclass(frozen=True)
class Graded:
    returncode: int
    stdout: str
    stderr: str
    report: dict


def grade_example(name: str, out: Path) -> Graded:
    result = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(EXAMPLES / name), "--format", "json", "--out", str(out)],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=GRADE_TIMEOUT,
    )
    return Graded(result.returncode, result.stdout, result.stderr, json.loads(out.read_text(encoding="utf-8")))


@pytest.fixture(scope="session")
def graded(tmp_path_factory: pytest.TempPathFactory):
    """graded(name, attempt=0) -> Graded, each (name, attempt) graded once per session."""
    try:
        get_backend("bwrap").check()
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")
    folder = tmp_path_factory.mktemp("example-reports")
    cache: dict[tuple[str, int], Graded] = {}

    def grade(name: str, attempt: int = 0) -> Graded:
        if (name, attempt) not in cache:
            cache[name, attempt] = grade_example(name, folder / f"{name}-{attempt}.json")
        return cache[name, attempt]

    return grade


def assert_well_formed(result: Graded, exit_code: int) -> dict:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == exit_code, result.stdout
    validate(result.report)
    assert result.report["error"] is None
    assert result.stdout.strip(), "the text report goes to stdout beside --out"
    return result.report


def test_correct_passes_everything(graded):
    report = assert_well_formed(graded("correct"), exit_code=0)
    assert report["verdict"] == "pass"
    implementation, tests = report["implementation"], report["tests"]
    assert implementation["verdict"] == "pass" and implementation["probes_agree"]
    assert [t["outcome"] for t in implementation["tests"]] == ["passed"] * 11
    assert tests["verdict"] == "pass" and tests["score"] >= CHAPTER.threshold
    assert tests["pitfalls_missed"] == []
    killed = {m["id"]: m for m in tests["mutants"] if m["pitfall"]}
    assert sorted(killed) == list(CHAPTER.required_pitfalls)
    for mutant in killed.values():
        assert mutant["outcome"] == "killed" and mutant["killed_by"], mutant
    assert all(run["outcome"] == "passed" for run in tests["validity"])
    assert tests["on_your_implementation"] == {"implementation": "your luong.py", "outcome": "passed",
                                               "failed_test": None, "message": ""}
    # the report says what catches the survivors of each place, for a reader without the manifest
    assert tests["place_hints"] == dict(CHAPTER.place_hints)
    assert all(m["where"] in tests["place_hints"] for m in tests["mutants"] if not m["pitfall"])


@pytest.mark.parametrize("pitfall", PITFALL_EXAMPLES)
def test_a_pitfall_implementation_is_recognised(graded, pitfall):
    report = assert_well_formed(graded(f"pitfall-{pitfall}"), exit_code=1)
    assert report["verdict"] == "fail"
    implementation = report["implementation"]
    assert implementation["verdict"] == "fail" and not implementation["probes_agree"]
    assert pitfall in implementation["behaves_like"], implementation
    assert report["tests"]["pitfalls_missed"] == SECTION3_SUITE_MISSES


def test_weak_tests_name_the_pitfall_they_miss(graded):
    report = assert_well_formed(graded("weak-tests"), exit_code=1)
    assert report["implementation"]["verdict"] == "pass"
    tests = report["tests"]
    assert tests["verdict"] == "fail"
    assert tests["pitfalls_missed"] == ["s05"]
    s05 = next(m for m in tests["mutants"] if m["id"] == "s05")
    assert s05["outcome"] == "survived" and s05["killed_by"] is None
    assert "s05" in graded("weak-tests").stdout


def test_invalid_tests_say_which_test_failed_on_which_implementation(graded):
    report = assert_well_formed(graded("invalid-tests"), exit_code=1)
    assert report["implementation"]["verdict"] == "pass"
    tests = report["tests"]
    assert tests["verdict"] == "invalid"
    reference = next(run for run in tests["validity"] if run["implementation"] == "reference")
    assert reference["outcome"] == "failed"
    assert reference["failed_test"].endswith("test_scores_are_scaled_like_the_transformer")
    assert "test_scores_are_scaled_like_the_transformer" in tests["invalid_reason"]
    assert "reference" in tests["invalid_reason"]
    # the trusted runs' messages are not shown; the run on the student's own luong.py fails the same
    # test, and its message, the student's own, is shown whole: the numbers that disagree
    yours = tests["on_your_implementation"]
    assert yours["outcome"] == "failed" and yours["failed_test"].endswith("test_scores_are_scaled_like_the_transformer")
    assert "Not equal to tolerance" in yours["message"] and "0.707" in yours["message"], yours
    assert "on your luong.py: failed" in graded("invalid-tests").stdout


@pytest.mark.parametrize("name", ["correct", "weak-tests"])
def test_a_regrade_gives_the_same_report(graded, name):
    first, second = graded(name).report, graded(name, attempt=1).report
    assert {k: v for k, v in first.items() if k != "timing"} == {k: v for k, v in second.items() if k != "timing"}


@pytest.mark.parametrize("name", ["weak-tests", "invalid-tests"])
def test_shared_implementations_stay_identical_to_correct(name):
    impl = CHAPTER.student.impl
    assert (EXAMPLES / name / impl).read_bytes() == (EXAMPLES / "correct" / impl).read_bytes()


def test_the_readme_lists_every_example():
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for folder in sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()):
        assert f"`{folder}/`" in readme, folder
