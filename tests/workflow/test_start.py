"""`grader start`: a stub luong.py from the contract, importable, every body unwritten."""

from __future__ import annotations

import ast
import importlib.util
import sys

import pytest

from grader.workflow import stub_source
from tests.cli import run_grader as grader
from tests.workflow.conftest import IMPL


def contract_of(chapter) -> str:
    return (chapter.contracts / "tinyllm/seq2seq/luong.pyi").read_text(encoding="utf-8")


def test_start_writes_the_stub_and_the_tests_folder_and_names_the_rung(course_repo):
    repo = course_repo(None)
    result = grader("start", str(repo))
    assert result.returncode == 0, result.stderr
    assert (repo / IMPL).is_file()
    assert (repo / "python/tests/l4-3-luong").is_dir()
    assert "python/tests/l4-3-luong" in result.stdout
    assert "R5" in result.stdout


def test_start_refuses_to_overwrite_unless_forced(course_repo):
    repo = course_repo(b"# my work\n")
    refused = grader("start", str(repo))
    assert refused.returncode == 1
    assert "already exists" in refused.stderr and "--force" in refused.stderr
    assert (repo / IMPL).read_bytes() == b"# my work\n"
    forced = grader("start", str(repo), "--force")
    assert forced.returncode == 0
    assert "NotImplementedError" in (repo / IMPL).read_text()


def test_start_with_an_unknown_chapter_is_an_error(course_repo):
    result = grader("start", str(course_repo(None)), "--chapter", "L9.9")
    assert result.returncode == 2 and "unknown chapter 'L9.9'" in result.stderr


def test_the_stub_keeps_every_signature_of_the_contract(chapter):
    contract = ast.parse(contract_of(chapter))
    stub = ast.parse(stub_source(contract_of(chapter), contract_name="luong.pyi"))

    def signatures(tree):
        return {node.name: ast.unparse(node.args) + " -> " + ast.unparse(node.returns)
                for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}

    assert signatures(stub) == signatures(contract)
    assert len(signatures(stub)) == 5


def test_the_stub_imports_and_every_method_raises_not_implemented(chapter, tmp_path, monkeypatch):
    path = tmp_path / "luong.py"
    path.write_text(stub_source(contract_of(chapter), contract_name="luong.pyi"))
    monkeypatch.syspath_prepend(str(chapter.substrate.parent))
    spec = importlib.util.spec_from_file_location("stub_luong", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.pop("stub_luong", None)
    assert "luong.pyi" in module.__doc__
    cls = module.LuongAttention
    assert "[B, S]" in cls.scores.__doc__ and "context first" in cls.attentional.__doc__
    with pytest.raises(NotImplementedError, match="LuongAttention.__init__"):
        cls(4, "dot")
    with pytest.raises(NotImplementedError, match="LuongAttention.forward"):
        cls.forward(None, None, None, None)


def test_start_does_not_write_through_a_linked_folder(course_repo, tmp_path):
    """With python/tinyllm/seq2seq linked elsewhere, --force would overwrite the luong.py there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "luong.py").write_bytes(b"# somebody else's file\n")
    repo = course_repo(None)
    (repo / "python/tinyllm").mkdir(parents=True)
    (repo / "python/tinyllm/seq2seq").symlink_to(elsewhere, target_is_directory=True)
    result = grader("start", str(repo), "--force")
    assert result.returncode != 0
    assert "python/tinyllm/seq2seq: symbolic links are not accepted" in result.stderr
    assert (elsewhere / "luong.py").read_bytes() == b"# somebody else's file\n"


@pytest.mark.parametrize("blocked", ["python", "python/tests"])
def test_a_file_where_the_layout_needs_a_folder_is_an_error_and_nothing_is_written(course_repo, blocked):
    """It was a traceback, and with python/tests a file the stub was written first, so a second
    `grader start` said it already existed (red team, round 17)."""
    repo = course_repo(None)
    (repo / blocked).parent.mkdir(parents=True, exist_ok=True)
    (repo / blocked).write_bytes(b"")
    result = grader("start", str(repo))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("grader start: cannot write the chapter's layout: ")
    assert "Not a directory" in result.stderr and "Traceback" not in result.stderr
    assert not (repo / IMPL).exists()
