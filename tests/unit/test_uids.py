"""Leasing a host uid per sandbox: never one a live sandbox holds, and free again once released."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from grader.sandbox import SandboxUnavailable
from grader.sandbox import uids


def test_a_uid_is_leased_to_one_sandbox_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(uids, "UIDS", 2)
    first, second = uids.lease_uid(tmp_path), uids.lease_uid(tmp_path)
    assert {first.uid, second.uid} == {uids.FIRST_UID, uids.FIRST_UID + 1}
    with pytest.raises(SandboxUnavailable, match="no free sandbox uid"):
        uids.lease_uid(tmp_path)
    first.release()
    first.release()  # idempotent
    assert uids.lease_uid(tmp_path).uid == first.uid
    second.release()


def test_an_unusable_lease_folder_makes_the_sandbox_unavailable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SandboxUnavailable, match="cannot keep sandbox uid leases"):
        uids.lease_uid(blocker / "locks")


def test_a_held_uid_cannot_be_taken_and_a_freed_one_can(tmp_path):
    held = uids.lease_uid(tmp_path)
    assert uids.try_lease(held.uid, tmp_path) is None
    held.release()
    taken = uids.try_lease(held.uid, tmp_path)
    assert taken is not None and taken.uid == held.uid
    taken.release()
    assert uids.try_lease(uids.FIRST_UID - 1, tmp_path) is None  # not of the range: never anyone's to judge


def test_a_lease_of_a_grader_that_died_is_free(tmp_path):
    """The kernel drops a dead process's locks: what the Docker backend's sweep of orphans relies on."""
    script = ("import os, signal, sys\nfrom pathlib import Path\nfrom grader.sandbox import uids\n"
              "print(uids.lease_uid(Path(sys.argv[1])).uid, flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n")
    died = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=False)
    assert died.returncode == -signal.SIGKILL, died.stderr
    lease = uids.try_lease(int(died.stdout), tmp_path)
    assert lease is not None
    lease.release()


def test_graders_sharing_a_lock_folder_share_its_realm(tmp_path):
    names = {uids.lease_realm(tmp_path) for _ in range(3)}
    assert len(names) == 1 and len(names.pop()) == 32
    assert uids.lease_realm(tmp_path / "another") != uids.lease_realm(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["another", "realm"]  # no draft left
