"""Honest student suites the sandbox cannot run, graded through the CLI: the report must say why.

Found by a red-team helper playing an honest student (round 11): each of these was reported
INVALID with "run this test against your own correct luong.py", which cannot help, since the
suite passes there; the reason was known to the grader all along.
"""

from __future__ import annotations

import json
import shutil

import pytest

from grader.chapter import REPO_ROOT
from grader.report.json_report import validate
from tests.cli import run_grader as grader

pytestmark = pytest.mark.slow  # each grades a submission in real sandboxes

CORRECT_IMPL = REPO_ROOT / "examples/L4.3/correct/python/tinyllm/seq2seq/luong.py"
USES_THE_MODULE = "from tinyllm.seq2seq.luong import LuongAttention\n"
SUITES = {
    "a package the sandbox lacks": (
        {"test_property.py": "import hypothesis\n" + USES_THE_MODULE + "def test_x():\n    assert LuongAttention\n"},
        ["collecting them failed in the sandbox", "No module named 'hypothesis'", "numpy, pytest"]),
    "skipped at import": (
        {"test_torch.py": "import pytest\ntorch = pytest.importorskip('torch')\n" + USES_THE_MODULE
                          + "def test_x():\n    assert LuongAttention\n"},
        ["no test was collected from them", "pytest.importorskip"]),
    "a long error": (  # cut from its start, it lost the file's name (red team, round 12)
        {"test_long.py": USES_THE_MODULE + "raise RuntimeError('y' * 100_000)\n"},
        ["test_long.py: [...] yyyy"]),
    "a conftest that raises on import": (  # pytest says why on the sandbox's stderr, which no report quotes
        {"conftest.py": "raise RuntimeError('no GPU')\n", "test_x.py": USES_THE_MODULE + "def test_x():\n    pass\n"},
        ["exit code 4): a usage error, as when a conftest.py raises while it is imported"]),
    "an instance made at import time": (
        {"test_shared.py": USES_THE_MODULE + "MODEL = LuongAttention(2, 'dot')\n\n"
                           "def test_x():\n    assert MODEL.d == 2\n"},
        ["test_shared.py", "was used at import time", "use it inside tests or fixtures"]),
}


@pytest.mark.parametrize("case", sorted(SUITES))
def test_a_suite_that_collects_nothing_is_an_error_that_says_why(case, tmp_path):
    files, said = SUITES[case]
    tests = tmp_path / "tests"
    tests.mkdir()
    for name, text in files.items():
        (tests / name).write_text(text, encoding="utf-8")
    out = tmp_path / "report.json"
    result = grader("grade", "--impl", str(CORRECT_IMPL), "--tests", str(tests), "--format", "json", "--out", str(out))
    assert result.returncode == 2, result.stdout + result.stderr
    report = json.loads(out.read_text())
    validate(report)
    assert report["implementation"]["verdict"] == "pass"  # graded all the same
    assert report["tests"]["verdict"] == "error" and report["error"].startswith("the tests could not be graded: ")
    assert all(text in report["error"] for text in said), report["error"]
    assert "valid Python names" not in report["error"]  # pytest's hint, beside a missing package (round 30)


def test_a_suite_slower_than_a_grade_allows_is_told_so_in_plain_words(tmp_path):
    """Each test sleeps: the runs on the mutants, which it never fails, take the whole suite each,
    and the sandbox's wall clock ran out. The report said "the zygote closed its output; the
    sandbox wall_timeout" (red team, round 26): it says what ran out, and what to make smaller."""
    tests = tmp_path / "tests"
    tests.mkdir()
    sleeps = "".join(f"\n\ndef test_slow_{n}():\n    time.sleep(0.3)\n    assert LuongAttention\n" for n in range(3))
    (tests / "test_slow.py").write_text("import time\n" + USES_THE_MODULE + sleeps, encoding="utf-8")
    out = tmp_path / "report.json"
    result = grader("grade", "--impl", str(CORRECT_IMPL), "--tests", str(tests), "--format", "json", "--out", str(out),
                    env={"GRADER_WALL_SECONDS": "25"})
    assert result.returncode == 2, result.stdout + result.stderr
    report = json.loads(out.read_text())
    validate(report)
    assert report["implementation"]["verdict"] == "pass" and report["tests"]["verdict"] == "error"
    error = report["error"]
    assert error.startswith("the tests could not be graded: they did not finish within the 25 s a grade may take")
    assert "on your own luong.py they took" in error and "make the slow tests smaller" in error
    assert "zygote" not in error and "wall_timeout" not in error, error


def test_tests_that_skip_themselves_are_named_on_the_run_on_the_student_s_own_module(tmp_path):
    """A suite whose unwritten tests skipped heard nothing of them (red team, round 26): a skipped
    test catches no mutant, and the run on the student's own luong.py says which skipped."""
    tests = tmp_path / "tests"
    shutil.copytree(CORRECT_IMPL.parents[2] / "tests" / "l4-3-luong", tests)
    (tests / "test_later.py").write_text(
        "import pytest\n\n@pytest.mark.skip(reason='not written yet')\ndef test_later():\n    assert False\n\n"
        "def test_maybe():\n    pytest.skip('todo')\n", encoding="utf-8")
    out = tmp_path / "report.json"
    result = grader("grade", "--impl", str(CORRECT_IMPL), "--tests", str(tests), "--format", "json", "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(out.read_text())
    validate(report)
    yours = report["tests"]["on_your_implementation"]
    assert yours["outcome"] == "passed" and yours["message"] == (
        "2 tests skipped (test_later.py::test_later, test_later.py::test_maybe): a skipped test catches no mutant")


def test_tests_that_share_the_implementation_s_mistake_are_told_so(tmp_path):
    """A suite that checks the same wrong formula as the student's luong.py passes there and fails
    every correct implementation; it was told of tolerances and pointed to the run on its own
    luong.py, which had passed and showed nothing (red team, round 27)."""
    invalid = REPO_ROOT / "examples/L4.3/invalid-tests/python/tests/l4-3-luong/test_section3.py"
    source = invalid.read_text(encoding="utf-8")
    tests = tmp_path / "tests"
    tests.mkdir()  # only the test that pins the dot score divided by sqrt(d), as pitfall s07 computes it
    (tests / "test_scaled.py").write_text(source.partition("\n\ndef test_weights_context")[0] + "\n", encoding="utf-8")
    impl = REPO_ROOT / "examples/L4.3/pitfall-s07/python/tinyllm/seq2seq/luong.py"
    out = tmp_path / "report.json"
    result = grader("grade", "--impl", str(impl), "--tests", str(tests), "--format", "json", "--out", str(out))
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(out.read_text())
    validate(report)
    assert report["implementation"]["verdict"] == "fail" and "s07" in report["implementation"]["behaves_like"]
    assert report["tests"]["verdict"] == "invalid"
    assert report["tests"]["on_your_implementation"]["outcome"] == "passed"
    reference = next(run for run in report["tests"]["validity"] if run["implementation"] == "reference")
    assert reference["outcome"] == "failed" and "shares your luong.py's mistake" in reference["message"], reference
    assert "tolerance" not in reference["message"]


def test_a_test_that_passes_by_chance_is_invalid_in_every_grade_alike(tmp_path):
    """A test drawing without a seed that fails half the time passed every run of a grade, each run
    drawing what the zygote held (red team, round 28), and the next grade could fail it. Each run
    now draws its own, so correct implementations fail it, and a regrade of the same files says
    the same."""
    tests = tmp_path / "tests"
    shutil.copytree(CORRECT_IMPL.parents[2] / "tests" / "l4-3-luong", tests)
    (tests / "test_coin.py").write_text(
        "import numpy as np\n\ndef test_coin():\n    assert np.random.rand() < 0.5\n", encoding="utf-8")
    reports = []
    for attempt in range(2):
        out = tmp_path / f"report-{attempt}.json"
        result = grader("grade", "--impl", str(CORRECT_IMPL), "--tests", str(tests), "--format", "json",
                        "--out", str(out))
        assert result.returncode == 1, result.stdout + result.stderr
        report = json.loads(out.read_text())
        validate(report)
        del report["timing"]
        reports.append(report)
    assert reports[0] == reports[1]
    assert reports[0]["implementation"]["verdict"] == "pass"
    assert reports[0]["tests"]["verdict"] == "invalid"
    assert "test_coin.py::test_coin" in reports[0]["tests"]["invalid_reason"]
