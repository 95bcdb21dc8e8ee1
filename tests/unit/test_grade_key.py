"""The grade key: a submission's draw is the same on one installation and unknown without its key."""

from __future__ import annotations

import stat

import pytest

from grader.grade_key import KEY_BYTES, KEY_VARIABLE, grade_key, keyed_seed
from grader.settings import SettingsError

DIGEST = "ab" * 32


def test_the_key_file_is_made_once_private_and_then_kept(tmp_path):
    key_file = tmp_path / "var" / "grade-key"
    first = grade_key({}, key_file)
    assert len(first) == KEY_BYTES and grade_key({}, key_file) == first
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert [path.name for path in key_file.parent.iterdir()] == ["grade-key"]  # no temporary left
    assert grade_key({}, tmp_path / "elsewhere") != first


def test_the_environment_key_wins_over_the_file(tmp_path):
    key = bytes(range(KEY_BYTES))
    assert grade_key({KEY_VARIABLE: key.hex()}, tmp_path / "grade-key") == key
    assert not (tmp_path / "grade-key").exists()


@pytest.mark.parametrize(("value", "says"), [("not hex", "hexadecimal"), ("00" * (KEY_BYTES - 1), "needs 32")])
def test_an_unusable_environment_key_is_refused_saying_why(tmp_path, value, says):
    with pytest.raises(SettingsError, match=says):
        grade_key({KEY_VARIABLE: value}, tmp_path / "grade-key")


def test_a_key_file_that_cannot_be_made_names_the_way_out(tmp_path):
    blocker = tmp_path / "var"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(SettingsError, match=f"cannot read or make the grade key .*set {KEY_VARIABLE}"):
        grade_key({}, blocker / "grade-key")


def test_a_truncated_key_file_is_refused(tmp_path):
    (tmp_path / "grade-key").write_bytes(b"short")
    with pytest.raises(SettingsError, match="remove it"):
        grade_key({}, tmp_path / "grade-key")


def test_the_seed_follows_the_files_and_the_key_not_the_files_alone():
    key, other = b"k" * KEY_BYTES, b"o" * KEY_BYTES
    assert keyed_seed(key, DIGEST) == keyed_seed(key, DIGEST)
    assert keyed_seed(key, DIGEST) != keyed_seed(other, DIGEST)
    assert keyed_seed(key, DIGEST) != keyed_seed(key, "cd" * 32)
    assert keyed_seed(key, DIGEST) != int(DIGEST[:16], 16)  # what a student could compute
