"""The command line as users and CI call it: `python -m grader`, exit codes, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from grader.chapter import REPO_ROOT
from grader.report.json_report import validate
from tests.cli import run_grader as grader


def test_help_lists_the_commands():
    result = grader("--help")
    assert result.returncode == 0
    assert "check" in result.stdout and "grade" in result.stdout


def test_a_missing_implementation_is_an_error_with_exit_2(tmp_path):
    result = grader("grade", "--impl", str(tmp_path / "luong.py"))
    assert result.returncode == 2
    assert "luong.py: not found" in result.stdout
    assert "Traceback" not in result.stderr


def test_a_folder_that_is_not_a_course_repo(tmp_path):
    result = grader("check", str(tmp_path))
    assert result.returncode == 2
    assert "python/tinyllm/seq2seq/luong.py" in result.stdout or "luong.py: not found" in result.stdout


def test_an_unknown_chapter(tmp_path):
    impl = tmp_path / "luong.py"
    impl.write_text("x = 1\n")
    result = grader("grade", "--impl", str(impl), "--chapter", "L9.9")
    assert result.returncode == 2
    assert "unknown chapter 'L9.9'; known chapters: L4.3" in result.stdout


def test_error_reports_are_valid_json(tmp_path):
    out = tmp_path / "report.json"
    result = grader("grade", "--impl", str(tmp_path / "nothing.py"), "--format", "json", "--out", str(out))
    assert result.returncode == 2
    data = json.loads(out.read_text())
    validate(data)
    assert data["verdict"] == "error" and "not found" in data["error"]


@pytest.mark.parametrize(("out", "says"), [
    ("{tmp}", "is a folder: give the report's file name"),
    ("{tmp}/a-file/report.json", "is not a folder, so"),
])
def test_an_out_the_report_cannot_go_to_is_refused_before_grading(tmp_path, out, says):
    (tmp_path / "a-file").write_text("")
    result = grader("grade", "--impl", str(tmp_path / "luong.py"), "--out", out.format(tmp=tmp_path))
    assert result.returncode == 2
    assert says in " ".join(result.stderr.split())  # the usage box wraps its lines
    assert "Chapter L4.3" not in result.stdout and "Traceback" not in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="only root passes the check before grading on /proc")
def test_a_report_that_cannot_be_written_after_grading_is_an_error_with_the_text_kept(tmp_path):
    """The folder was there when grading began, and gone when the report was written (here /proc,
    where no folder can be made): exit 2, a plain message, and the text report on standard output."""
    out = "/proc/no-such-folder/report.txt"
    result = grader("grade", "--impl", str(tmp_path / "luong.py"), "--out", out)
    assert result.returncode == 2
    assert f"error: cannot write the report to {out}" in result.stderr and "Traceback" not in result.stderr
    assert "Chapter L4.3: ERROR" in result.stdout and "luong.py: not found" in result.stdout


def test_an_unreachable_docker_engine_is_an_error_not_a_traceback(tmp_path):
    impl = REPO_ROOT / "reference/L4.3/variants/luong_variant.py"
    result = grader("grade", "--impl", str(impl), "--backend", "docker",
                    env={"DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"})
    assert result.returncode == 2
    assert "docker" in result.stdout.lower()
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_grading_a_correct_implementation_without_tests_passes(tmp_path):
    out = tmp_path / "report.json"
    impl = REPO_ROOT / "reference/L4.3/variants/luong_variant.py"
    result = grader("grade", "--impl", str(impl), "--format", "json", "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(out.read_text())
    validate(data)
    assert data["verdict"] == "pass" and data["tests"] is None
    assert [t["outcome"] for t in data["implementation"]["tests"]] == ["passed"] * 11
    assert data["implementation"]["probes_agree"] is True


@pytest.mark.parametrize("impl", ["examples/L4.3/correct/python/tinyllm/seq2seq/luong.py",
                                  "examples/L4.3/pitfall-s04/python/tinyllm/seq2seq/luong.py"])
def test_refused_tests_leave_the_implementation_graded(tmp_path, impl):
    """Tests that import outside the contract are refused before anything runs, and the report
    says why; the implementation is graded all the same (its grade was lost with them, where a
    suite that could not be collected kept it: red team, round 28). Exit 2 when it passes: the
    tests are bad input. Exit 1 when it fails: that is the grade."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_mine.py").write_text("from tinyllm.nn import Linear\n\ndef test_x():\n    assert Linear\n")
    out = tmp_path / "report.json"
    result = grader("grade", "--impl", str(REPO_ROOT / impl), "--tests", str(tests), "--format", "json",
                    "--out", str(out))
    data = json.loads(out.read_text())
    validate(data)
    passes = "correct" in impl
    assert result.returncode == (2 if passes else 1), result.stdout + result.stderr
    assert data["verdict"] == ("error" if passes else "fail")
    assert data["implementation"]["verdict"] == ("pass" if passes else "fail")
    assert data["implementation"]["behaves_like"] == ([] if passes else ["s04"])
    assert data["tests"]["verdict"] == "error" and data["tests"]["mutants"] == []
    assert data["error"] == ("the tests were refused, so only the implementation was graded: test_mine.py:1: imports "
                             "'tinyllm.nn'; tests may import only " + data["error"].partition("may import only ")[2])


@pytest.mark.slow
def test_a_repo_just_started_grades_its_implementation_and_says_where_tests_go(tmp_path):
    """`grader start` leaves an empty tests folder: `grader check` grades the implementation and
    says where it looked for tests (it ended in an error, the implementation not graded: red team,
    round 11)."""
    assert grader("start", str(tmp_path)).returncode == 0
    impl = REPO_ROOT / "examples/L4.3/correct/python/tinyllm/seq2seq/luong.py"
    (tmp_path / "python/tinyllm/seq2seq/luong.py").write_bytes(impl.read_bytes())
    result = grader("check", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Tests: none submitted" in result.stdout
    assert f"no test file (test_*.py or *_test.py) in {tmp_path / 'python/tests/l4-3-luong'}" in result.stderr


def test_a_crash_of_the_grader_exits_2_not_1():
    """1 means "the grade failed" to CI; a bug in the grader must read as "could not grade"."""
    crash = ("import sys, grader.cli as cli\n"
             "def grade(request):\n    raise RuntimeError('a bug in the grader')\n"
             "cli.grade = grade\nsys.argv = ['grader', 'check', 'examples/L4.3/correct']\ncli.main()\n")
    result = subprocess.run([sys.executable, "-c", crash], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 2
    assert "RuntimeError: a bug in the grader" in result.stderr


def test_a_misspelt_class_is_named_first_and_the_tests_it_stopped_say_so(tmp_path):
    """The course tests cannot import LuongAttention: the file's row leads with the ImportError
    (a cut message lost it after pytest's traceback), and the tests that never ran point to it
    (red team, round 14)."""
    impl = tmp_path / "luong.py"
    impl.write_text((REPO_ROOT / "reference/L4.3/variants/luong_variant.py").read_text()
                    .replace("class LuongAttention(", "class LoungAttention("))
    out = tmp_path / "report.json"
    result = grader("grade", "--impl", str(impl), "--format", "json", "--out", str(out))
    assert result.returncode == 1
    tests = json.loads(out.read_text())["implementation"]["tests"]
    assert tests[0]["name"] == "test_luong.py" and tests[0]["outcome"] == "error"
    assert tests[0]["message"].startswith("ImportError: cannot import name 'LuongAttention' from 'tinyllm.seq2seq.luong'")
    assert "valid Python names" not in tests[0]["message"]
    not_run = [test for test in tests if test["message"].startswith("not run: the course tests could not be collected")]
    assert len(not_run) == 11 and all(test["outcome"] == "error" for test in not_run)


def test_probes_that_time_out_say_so_and_not_that_the_module_differs(tmp_path):
    """A module too slow for the probes' deadline is told the deadline and why the probes take
    long, with no legend of outputs that were never compared (red team, round 15)."""
    impl = tmp_path / "luong.py"
    impl.write_text((REPO_ROOT / "reference/L4.3/variants/luong_variant.py").read_text() + (
        "\n\nimport time as _time\n_forward = LuongAttention.forward\n\n\n"
        "def _slow(self, *args, **kwargs):\n    _time.sleep(0.02)\n    return _forward(self, *args, **kwargs)\n\n\n"
        "LuongAttention.forward = _slow\n"))
    result = grader("grade", "--impl", str(impl), env={"GRADER_PROBE_TIMEOUT": "1"})
    assert result.returncode == 1
    assert "the probe run did not finish within 1 s (GRADER_PROBE_TIMEOUT)" in " ".join(result.stdout.split())
    assert "Reading them:" not in result.stdout and "where your module differs" not in result.stdout
