"""The contract stubs (.pyi) and the code they describe agree, checked by mypy's stubtest.

Students and hidden acceptance submissions are written against the stubs, so a name or signature
that drifts in the substrate or in the reference ``luong.py`` must fail here. stubtest imports the
runtime modules, so it runs in a subprocess with the substrate on PYTHONPATH and the stubs on
MYPYPATH. Each run builds numpy's stubs with mypy (several seconds), hence the ``slow`` marker.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.chapter import load_chapter

pytestmark = pytest.mark.slow

CHAPTER = load_chapter("L4.3")
LUONG_MODULE = CHAPTER.student.module  # tinyllm.seq2seq.luong

# Installs one file as the graded module, as the runner does, then hands over to stubtest
# (which finds the module in sys.modules). argv: module name, file path, stubtest arguments.
INSTALL_THEN_STUBTEST = """
import importlib, importlib.util, sys
name, path = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location(name, path)
module = importlib.util.module_from_spec(spec)
sys.modules[name] = module
spec.loader.exec_module(module)
parent, _, child = name.rpartition(".")
setattr(importlib.import_module(parent), child, module)
from mypy.stubtest import main
sys.argv = ["stubtest", name, *sys.argv[3:]]
sys.exit(main())
"""


@pytest.fixture(scope="module")
def mypy_config(tmp_path_factory) -> Path:
    """One mypy cache for every run in this module: later runs reuse the parsed numpy stubs."""
    folder = tmp_path_factory.mktemp("stubtest")
    config = folder / "mypy.ini"
    config.write_text(f"[mypy]\ncache_dir = {folder / 'cache'}\n")
    return config


def stubtest(python_args: list[str], substrate_parent: Path, config: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": str(substrate_parent),
        "MYPYPATH": str(CHAPTER.contracts.resolve()),
    }
    return subprocess.run(
        [sys.executable, *python_args, "--mypy-config-file", str(config)],
        env=env,
        cwd=config.parent,
        capture_output=True,
        text=True,
        check=False,
    )


def check_substrate(substrate_parent: Path, config: Path) -> subprocess.CompletedProcess:
    """stubtest over the whole package except the graded module, which the substrate never has."""
    allowlist = config.parent / "allowlist.txt"
    allowlist.write_text(LUONG_MODULE.replace(".", r"\.") + "\n")
    return stubtest(["-m", "mypy.stubtest", "tinyllm", "--allowlist", str(allowlist)], substrate_parent, config)


def check_luong(luong_file: Path, config: Path) -> subprocess.CompletedProcess:
    """stubtest of one luong.py against luong.pyi; extra public helpers in the file are allowed."""
    args = ["-c", INSTALL_THEN_STUBTEST, LUONG_MODULE, str(luong_file), "--ignore-missing-stub"]
    return stubtest(args, CHAPTER.substrate.parent, config)


def report(run: subprocess.CompletedProcess) -> str:
    return f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"


def test_substrate_matches_its_contracts(mypy_config):
    run = check_substrate(CHAPTER.substrate.parent, mypy_config)
    assert run.returncode == 0, report(run)
    assert "Success" in run.stdout, report(run)


def test_a_missing_name_or_changed_signature_in_the_substrate_fails(mypy_config, tmp_path):
    copy = tmp_path / "tinyllm"
    shutil.copytree(CHAPTER.substrate, copy, ignore=shutil.ignore_patterns("__pycache__"))
    tensor = copy / "autograd" / "tensor.py"
    source = tensor.read_text()
    tensor.write_text(source.replace("    def item(self)", "    def _item(self)", 1))
    functional = copy / "autograd" / "functional.py"
    source = functional.read_text()
    functional.write_text(source.replace("def softmax(x: Any, axis: int = -1)", "def softmax(x: Any, dim: int = -1)"))
    run = check_substrate(tmp_path, mypy_config)
    assert run.returncode != 0, report(run)
    assert "tinyllm.autograd.tensor.Tensor.item" in run.stdout, report(run)
    assert "tinyllm.autograd.functional.softmax" in run.stdout, report(run)


def test_reference_luong_matches_the_student_contract(mypy_config):
    if not CHAPTER.reference_impl.is_file():
        pytest.skip(f"{CHAPTER.reference_impl} does not exist yet (written by another engineer)")
    run = check_luong(CHAPTER.reference_impl, mypy_config)
    assert run.returncode == 0, report(run)


def test_a_luong_that_breaks_the_contract_fails(mypy_config, tmp_path):
    broken = tmp_path / "luong.py"
    broken.write_text(
        "from tinyllm.nn import Module\n\n"
        "class LuongAttention(Module):\n"
        "    query_from = 'current'\n"
        "    def __init__(self, d, score, rng=None):\n"
        "        super().__init__()\n"
        "    def project_keys(self, keys): ...\n"
        "    def scores(self, query, keys): ...\n"  # proj dropped
        "    def forward(self, query, keys, mask, proj=None): ...\n"
    )  # attentional missing
    run = check_luong(broken, mypy_config)
    assert run.returncode != 0, report(run)
    assert f"{LUONG_MODULE}.LuongAttention.scores" in run.stdout, report(run)
    assert f"{LUONG_MODULE}.LuongAttention.attentional" in run.stdout, report(run)
