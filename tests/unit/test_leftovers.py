"""What a run leaves in its folder goes, however deep and locked (grader/runner/inside/leftovers.py)."""

import os
from pathlib import Path

import pytest

from grader.runner.inside import leftovers

NAME = "d" * 100


def chain(top: Path, depth: int) -> None:
    """Folders ``depth`` deep under ``top``, made by relative names as a run can (the whole path
    soon passes PATH_MAX), a file every hundred, and the second folder locked."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for level in range(depth):
        os.mkdir(NAME, dir_fd=fd)
        if level % 100 == 0:
            os.close(os.open("file", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
        deeper = os.open(NAME, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.close(fd)
    os.chmod(top / NAME, 0)


def test_a_chain_of_folders_deeper_than_path_max_is_removed(tmp_path):
    """A run chained folders past PATH_MAX and the clean zygote died on ENAMETOOLONG, quoting
    the path it had made into the report (red team, round 29). Deeper than the recursion limit."""
    top = tmp_path / "run"
    top.mkdir()
    chain(top, depth=1500)  # 150,000 characters of path
    before = os.getcwd()
    leftovers.remove_files(top)
    assert not top.exists()
    assert os.getcwd() == before
    assert list(tmp_path.iterdir()) == []


def test_a_file_and_a_link_are_removed_as_themselves(tmp_path):
    target = tmp_path / "kept"
    target.mkdir()
    (tmp_path / "file").write_text("x")
    (tmp_path / "link").symlink_to(target)
    leftovers.remove_files(tmp_path / "file")
    leftovers.remove_files(tmp_path / "link")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]


def test_what_cannot_go_is_an_error(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    folder.mkdir()
    monkeypatch.setattr(leftovers.os, "rmdir", lambda name: None)  # a folder that stays
    with pytest.raises(RuntimeError, match="would not go"):
        leftovers.remove_files(folder)
