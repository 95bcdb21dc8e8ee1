"""Running the grader as users and CI do: `python -m grader ...` in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from grader.chapter import REPO_ROOT


def run_grader(*args: str, cwd: Path = REPO_ROOT, env: dict[str, str] | None = None,
               timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "COLUMNS": "160", **(env or {})}, timeout=timeout)
