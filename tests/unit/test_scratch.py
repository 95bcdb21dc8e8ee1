"""A grade's temporary folders: removed with their grade, and swept once their grader died."""

from __future__ import annotations

import signal
import subprocess
import sys

from grader.chapter import REPO_ROOT
from grader.sandbox import scratch

HOLD_AND_DIE = """
import os, signal, sys
from grader.sandbox.scratch import HeldFolder
print(HeldFolder("submission", sys.argv[1]).path, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_held_folder_goes_with_its_grade(tmp_path):
    with scratch.held_folder("submission", tmp_path) as folder:
        assert folder.name.startswith("grader-submission-") and folder.parent == tmp_path
        assert folder.stat().st_mode & 0o777 == 0o755  # the sandboxes' uids read what is copied in
        (folder / "tests").mkdir()
        assert scratch.sweep_orphans(tmp_path, grace=0) == []  # its grade lives
    assert list(tmp_path.iterdir()) == []


def test_the_folder_of_a_grader_killed_outright_is_swept_and_only_it(tmp_path):
    died = subprocess.run([sys.executable, "-c", HOLD_AND_DIE, str(tmp_path)], capture_output=True, text=True,
                          check=False, cwd=REPO_ROOT)
    assert died.returncode == -signal.SIGKILL, died.stderr
    orphan = tmp_path / died.stdout.strip()
    (orphan / "tests").mkdir()
    (tmp_path / "grader-unleased").mkdir()  # no lease file: not a held folder, whatever its name
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / scratch.LEASE_FILE).write_text("")  # a lease file, but not a grader's name
    live = scratch.HeldFolder("private-mounts", tmp_path)
    try:
        assert scratch.sweep_orphans(tmp_path) == []  # the orphan's lease is younger than the grace
        assert scratch.sweep_orphans(tmp_path, grace=0) == [orphan]
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.path.name, "grader-unleased", "other"])
    finally:
        live.remove()
    live.remove()  # idempotent
