"""Leasing a host uid per sandbox: never one a live sandbox holds, and free again once released."""

from __future__ import annotations

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
