"""Run one command as a child subreaper, then report and kill whatever it left behind.

Why a separate process: a sandbox process that double-forks and calls setsid() is normally
re-parented to init, where nothing can tell it apart from other users' processes (other tests
on the machine run sandboxes of the same uid). With PR_SET_CHILD_SUBREAPER set here, every
orphan of the graded command is re-parented to this process instead, so "left behind by this
grade" is exactly "still a descendant of this process after the command exited".

Usage: python reaper.py RESULT_JSON GUARD_SECONDS [--stop-after SECONDS [--stop-signal NAME]] -- COMMAND...
RESULT_JSON gets {"returncode", "hung", "leftovers": [{"pid", "uid", "cmdline"}]}. GUARD_SECONDS
only stops a grade that never ends (recorded as "hung"); the grader's own limits should end it
long before. --stop-after sends the command SIGTERM once it has run that long, as a supervisor
stopping it would; --stop-signal another signal instead (KILL: the OOM killer, a supervisor's last
resort).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def descendants(root: int) -> list[dict]:
    """Every live process whose parent chain reaches ``root`` (zombies are not left running)."""
    parents: dict[int, int] = {}
    info: dict[int, dict] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = dict(line.split(":\t", 1) for line in (entry / "status").read_text().splitlines() if ":\t" in line)
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        if status.get("State", "").startswith("Z"):
            continue
        pid = int(entry.name)
        parents[pid] = int(status["PPid"])
        info[pid] = {"pid": pid, "uid": int(status["Uid"].split()[0]), "cmdline": cmdline}
    found = []
    for pid in info:
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, root):
            ancestor = parents.get(ancestor)
        if ancestor == root:
            found.append(info[pid])
    return found


def kill_and_reap(processes: list[dict]) -> None:
    for process in processes:
        try:
            os.kill(process["pid"], signal.SIGKILL)
        except ProcessLookupError:
            pass
    while True:
        try:
            if os.waitpid(-1, 0)[0] == 0:
                break
        except ChildProcessError:
            break


def main(argv: list[str]) -> int:
    result_path, guard, *rest = argv
    stop_after, stop_signal = None, signal.SIGTERM
    if rest[:1] == ["--stop-after"]:
        stop_after, rest = float(rest[1]), rest[2:]
    if rest[:1] == ["--stop-signal"]:
        stop_signal, rest = signal.Signals[f"SIG{rest[1]}"], rest[2:]
    separator, *command = rest or [""]
    if separator != "--" or not command:
        raise SystemExit(__doc__)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    child = subprocess.Popen(command)
    if stop_after is not None:
        try:
            child.wait(timeout=stop_after)
        except subprocess.TimeoutExpired:
            child.send_signal(stop_signal)
    hung = False
    try:
        returncode = child.wait(timeout=float(guard))
    except subprocess.TimeoutExpired:
        hung = True
        child.kill()
        returncode = child.wait()
    leftovers = descendants(os.getpid())
    kill_and_reap(leftovers)
    Path(result_path).write_text(json.dumps({"returncode": returncode, "hung": hung, "leftovers": leftovers}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
