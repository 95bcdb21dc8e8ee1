"""`grader export gradescope`: the zip Gradescope wants, and its run_autograder run on a real submission."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from grader.chapter import REPO_ROOT
from grader.report.gradescope import validate
from grader.sandbox.runtime import default_env_dir


def export(tmp_path: Path) -> Path:
    out = tmp_path / "autograder.zip"
    result = subprocess.run([sys.executable, "-m", "grader", "export", "gradescope", "--out", str(out)],
                            capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    return out


def test_the_zip_has_gradescopes_two_scripts_at_its_root_and_the_chapter_material(tmp_path):
    with zipfile.ZipFile(export(tmp_path)) as archive:
        names = set(archive.namelist())
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
    for script in ("setup.sh", "run_autograder"):
        assert script in names and modes[script] & stat.S_IXUSR
    for needed in ("grader/cli.py", "grader/report/assets/mutation-test-elements.js", "chapters/L4.3.toml",
                   "reference/L4.3/luong.py", "reference/tests/L4.3/test_luong.py", "mutants/L4.3/pool.json",
                   "fixtures/L4.3/luong_torch.npz", "requirements.txt", "scripts/setup.sh"):
        assert needed in names, needed
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [n for n in names if n.startswith(("tests/", "examples/", ".venv/", "var/"))]


def test_an_unknown_chapter_is_refused(tmp_path):
    result = subprocess.run([sys.executable, "-m", "grader", "export", "gradescope", "--chapter", "L9.9",
                             "--out", str(tmp_path / "x.zip")], capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.returncode == 2 and "unknown chapter" in result.stderr


@pytest.mark.slow
def test_run_autograder_grades_a_course_repo_submission_into_results_json(tmp_path, chapter, sandbox_ready):
    root = Path(tempfile.mkdtemp(prefix="autograder-"))
    try:
        root.chmod(0o755)  # the sandbox user reads the chapter material from here
        with zipfile.ZipFile(export(tmp_path)) as archive:
            archive.extractall(root / "source")
        submission = root / "submission"
        (submission / "python/tinyllm/seq2seq").mkdir(parents=True)
        shutil.copy(chapter.variants[0], submission / "python/tinyllm/seq2seq/luong.py")
        shutil.copytree(chapter.oracle_suite, submission / "python/tests/l4-3-luong")
        env = {**os.environ, "GRADESCOPE_ROOT": str(root), "GRADER_PYTHON": sys.executable,
               "GRADER_SANDBOX_ENV": str(default_env_dir())}
        result = subprocess.run(["bash", str(root / "source/run_autograder")], capture_output=True, text=True,
                                env=env, timeout=600)
        data = json.loads((root / "results/results.json").read_text())
        validate(data)
        assert data["extra_data"]["verdict"] == "pass", result.stdout + result.stderr
        assert len(data["tests"]) == 11 + 1 + 7 + 1  # course tests, the probes, pitfalls, the score
        assert all(t["status"] == "passed" for t in data["tests"])
    finally:
        shutil.rmtree(root)
