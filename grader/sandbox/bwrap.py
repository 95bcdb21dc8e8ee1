"""The bubblewrap backend: the local default.

One sandbox is one process chain, each link exec'ing the next so the trusted side holds the pid:

    sh (joins the sandbox's cgroups) -> prlimit (rlimits) -> setpriv (drops to the leased uid)
        -> bwrap (new user, pid, net, mount, ipc, uts namespaces) -> pid 1 -> argv

bwrap runs unprivileged as a host uid leased for this sandbox alone (grader/sandbox/uids.py), so
its processes are that uid on the host too, and the user namespace maps it to itself. With
``--unshare-net`` the sandbox has only its own loopback, so nothing on the host is reachable.
Killing the namespace's pid 1 makes the kernel kill every process in the namespace, which is how
kill() and close() leave nothing.

Limits: memory and process count by per-sandbox cgroups when the host allows (root, cgroup v1);
otherwise RLIMIT_AS (per process) and RLIMIT_NPROC (per host uid). CPU by RLIMIT_CPU (SIGXCPU,
SIGKILL a second later). When the grader is not root the sandbox runs as the grader's own user
(no setpriv, no cgroups, no leased uid).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, cast

from grader.sandbox import Limits, Mount, SandboxUnavailable, Termination, _cgroup, open_files
from grader.sandbox._env import MACHINE_WIDE_PROC, SANDBOX_ENV_TARGET, SANDBOX_PYTHON, SCRATCH, sandbox_env
from grader.sandbox._outcome import SIGNAL_EXIT_BASE
from grader.sandbox._process import WatchedProcess
from grader.sandbox.runtime import (
    default_env_dir,
    env_is_current,
    make_world_readable,
    private_copy_dir,
    private_copy_is_current,
)
from grader.sandbox.scratch import HeldFolder
from grader.sandbox.uids import UidLease, lease_uid

SETUP_HINT = "run `python -m grader.sandbox.runtime` (as root) to create it"
MASKED = Path(__file__).with_name("masked")  # an empty file, bound over what /proc must not show
ROOT_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # merged-/usr symlinks or folders
# Joins every cgroup named before "--", then execs the rest of its arguments.
JOIN_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def _tool(name: str, package: str) -> str:
    path = shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
    if path is None:
        raise SandboxUnavailable(f"{name} is missing: apt-get install -y {package}")
    return path


def _readable_by_others(source: Path) -> bool:
    """Whether an unprivileged user can reach ``source`` and read everything under it."""
    for parent in source.parents:
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
    paths = [source] if not source.is_dir() else [source, *source.rglob("*")]
    for path in paths:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            continue
        needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        if mode & needed != needed:
            return False
    return True


class BwrapBackend:
    """Starts sandboxes with bubblewrap; see the module docstring for the layers."""

    name = "bwrap"
    python = SANDBOX_PYTHON
    keeps_runs_apart = True

    def __init__(self, env_dir: Path | None = None) -> None:
        self.env_dir = env_dir or default_env_dir()
        self._as_root = os.geteuid() == 0

    def check(self) -> None:
        for name, package in (("bwrap", "bubblewrap"), ("prlimit", "util-linux"), ("setpriv", "util-linux")):
            _tool(name, package)
        if not env_is_current(self.env_dir) or not private_copy_is_current(self.env_dir):
            raise SandboxUnavailable(f"the sandbox Python environment {self.env_dir} (or its private copy) is "
                                     f"missing or stale: {SETUP_HINT}")
        # Through spawn, so the probe gets the same cgroups and a leased uid as a real sandbox.
        with self.spawn(["/usr/bin/true"], mounts=(), limits=Limits(wall_seconds=60.0)) as probe:
            result = probe.wait()
        if result.termination is not Termination.EXITED or result.returncode != 0:
            raise SandboxUnavailable(f"bwrap cannot create namespaces here: {result.stderr.strip()}")

    def spawn(
        self,
        argv: Sequence[str],
        *,
        mounts: Sequence[Mount],
        limits: Limits,
        env: Mapping[str, str] | None = None,
        private: bool = False,
        apart: bool = False,
    ) -> BwrapProcess:
        if not argv:
            raise ValueError("argv must name a program to run inside the sandbox")
        for mount in mounts:
            self._check_source(mount)
        variables = sandbox_env(env)
        held = _Held(lease_uid() if self._as_root else None)
        try:
            if private:
                mounts = held.copy_of(mounts)
            cgroup = (
                _cgroup.SandboxCgroup.create(memory_bytes=limits.memory_bytes, processes=limits.processes)
                if _cgroup.available()
                else None
            )
            bwrap_args = self._bwrap_args(mounts, limits, variables, private, apart)
            return BwrapProcess(self._launcher(limits, cgroup, held.lease, apart), bwrap_args, list(argv), limits, cgroup,
                                held)
        except BaseException:
            held.release()
            raise

    def _check_source(self, mount: Mount) -> None:
        if not mount.source.exists():
            raise ValueError(f"mount source {mount.source} does not exist")
        if self._as_root and not _readable_by_others(mount.source):
            raise ValueError(
                f"mount source {mount.source} is not readable by others; the sandbox's own uid "
                "must reach it (folders o+rx, files o+r)"
            )

    def _launcher(self, limits: Limits, cgroup: _cgroup.SandboxCgroup | None, lease: UidLease | None,
                  apart: bool) -> list[str]:
        """The links before bwrap: cgroup join, rlimits, and the drop to the sandbox's uid."""
        chain: list[str] = []
        if cgroup is not None:
            chain += [_tool("sh", "dash"), "-c", JOIN_CGROUPS, "sh", *map(str, cgroup.procs_files), "--"]
        cpu = limits.cpu_seconds
        chain += [_tool("prlimit", "util-linux"), f"--cpu={cpu}:{cpu + 1}", "--core=0", f"--nofile={open_files(apart=apart)}"]
        if cgroup is None:
            chain += [f"--as={limits.memory_bytes}", f"--nproc={limits.processes}"]
        chain.append("--")
        if lease is not None:
            chain += [_tool("setpriv", "util-linux"), f"--reuid={lease.uid}", f"--regid={lease.uid}",
                      "--clear-groups", "--"]
        return chain

    def _bwrap_args(self, mounts: Sequence[Mount], limits: Limits, env: Mapping[str, str] | None,
                    private: bool, apart: bool) -> list[str]:
        python = private_copy_dir(self.env_dir) if private else None
        # --disable-userns keeps anything from nesting a user namespace in the sandbox's own
        # (--unshare-user), but where each run is to make its own: apart.py
        nesting = [] if apart else ["--disable-userns"]
        args = [
            _tool("bwrap", "bubblewrap"), "--unshare-all", "--unshare-user", *nesting,
            "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv", "--hostname", "sandbox",
            "--proc", "/proc", "--dev", "/dev", "--ro-bind", str(python / "usr") if python else "/usr", "/usr",
        ]
        for name in MACHINE_WIDE_PROC:
            if os.path.isdir(f"/proc/{name}"):
                args += ["--tmpfs", f"/proc/{name}"]
            elif os.path.exists(f"/proc/{name}"):  # not every kernel has every file
                args += ["--ro-bind", str(MASKED), f"/proc/{name}"]  # an empty file: /dev/null is nodev here
        for link in ROOT_LINKS:
            if python is not None and os.path.isdir(python / "usr" / link.lstrip("/")):
                args += ["--symlink", "usr" + link, link]  # the private copy is laid out as a merged /usr
            elif python is None and os.path.islink(link):
                args += ["--symlink", os.readlink(link), link]
            elif python is None and os.path.isdir(link):
                args += ["--ro-bind", link, link]
        args += ["--ro-bind", str(python / "env" if python else self.env_dir), SANDBOX_ENV_TARGET]
        for mount in mounts:
            args += ["--ro-bind", str(mount.source), mount.target]
        args += ["--size", str(limits.scratch_bytes), "--tmpfs", SCRATCH, "--chdir", SCRATCH]
        args += ["--remount-ro", "/"]  # bwrap's root is a tmpfs the sandbox user could write to
        for key, value in (env or {}).items():
            args += ["--setenv", key, value]
        return args


class _Held:
    """What a sandbox holds on the host while it lives: its leased uid, and the copies of its
    mounts when it is private (see BwrapBackend.spawn)."""

    def __init__(self, lease: UidLease | None) -> None:
        self.lease = lease
        self._copies: HeldFolder | None = None

    def copy_of(self, mounts: Sequence[Mount]) -> list[Mount]:
        """The mounts as copies of their own, readable by the sandbox's uid."""
        self._copies = HeldFolder("private-mounts")
        copied = []
        for index, mount in enumerate(mounts):
            copy = self._copies.path / str(index)
            if mount.source.is_dir():
                shutil.copytree(mount.source, copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(mount.source, copy)
            copied.append(Mount(copy, mount.target))
        make_world_readable(self._copies.path)
        return copied

    def release(self) -> None:
        if self.lease is not None:
            self.lease.release()
        if self._copies is not None:
            self._copies.remove()


class BwrapProcess(WatchedProcess):
    """One running bwrap sandbox (see BwrapBackend for how it is built)."""

    def __init__(
        self,
        launcher: list[str],
        bwrap_args: list[str],
        argv: list[str],
        limits: Limits,
        cgroup: _cgroup.SandboxCgroup | None,
        held: _Held,
    ) -> None:
        super().__init__(limits)
        self._cgroup = cgroup
        self._held = held
        status_read, status_write = os.pipe()
        try:
            self._proc = subprocess.Popen(
                [*launcher, *bwrap_args, "--json-status-fd", str(status_write), "--", *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(status_write,),
                start_new_session=True,
                env={},
                cwd="/",
            )
        except BaseException:
            os.close(status_read)
            self._remove_cgroup()
            raise
        finally:
            os.close(status_write)
        assert self._proc.stdin and self._proc.stdout and self._proc.stderr
        self.stdin = cast(BinaryIO, self._proc.stdin)
        self.stdout = cast(BinaryIO, self._proc.stdout)
        self._outer = os.pidfd_open(self._proc.pid)
        self._stderr_thread = threading.Thread(target=self._stderr.drain, args=(self._proc.stderr,), daemon=True)
        self._stderr_thread.start()
        # bwrap writes an exit record here at the end, so the pipe stays open until cleanup.
        self._status = os.fdopen(status_read, "rb")
        self._init = self._open_namespace_init()
        self._watch()

    def _open_namespace_init(self) -> int | None:
        """Read bwrap's first status record and hold the namespace's pid 1 by a pidfd.

        Only bwrap's own stderr can explain a failure here, so a start failure raises with it.
        """
        line = self._status.readline()
        if not line:
            self._proc.wait()
            self._stderr_thread.join()
            self._status.close()
            os.close(self._outer)
            self._remove_cgroup()
            raise SandboxUnavailable(f"bwrap could not start the sandbox: {self._stderr.text().strip()}")
        try:
            return os.pidfd_open(json.loads(line)["child-pid"])
        except ProcessLookupError:
            return None  # already gone: it exited before we looked

    def _reap(self) -> tuple[int, bool, float | None]:
        _, status, usage = os.wait4(self._proc.pid, 0)
        exit_code = os.waitstatus_to_exitcode(status)
        self._proc.returncode = exit_code  # keeps Popen from waiting on a reaped pid
        if exit_code < 0:  # bwrap itself was killed: report it like a signalled child
            exit_code = SIGNAL_EXIT_BASE - exit_code
        oom_killed = self._cgroup is not None and self._cgroup.oom_killed()
        return exit_code, oom_killed, usage.ru_utime + usage.ru_stime

    def kill(self) -> None:
        """Kill the namespace's pid 1: the kernel then kills the rest, and bwrap exits."""
        target = self._init if self._init is not None else self._outer
        try:
            signal.pidfd_send_signal(target, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _force_kill(self) -> None:
        try:
            signal.pidfd_send_signal(self._outer, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self._cgroup is not None:
            self._cgroup.kill_members()

    def _join_output(self) -> None:
        self._stderr_thread.join()

    def _cleanup(self) -> None:
        self._stderr_thread.join()
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr, self._status):
            try:
                stream.close()  # type: ignore[union-attr]
            except BrokenPipeError:
                pass
        for fd in (self._outer, self._init):
            if fd is not None:
                os.close(fd)
        self._remove_cgroup()
        self._held.release()  # nothing of the sandbox runs any more: its uid and copies can go

    def _remove_cgroup(self) -> None:
        """Remove the cgroups, killing any straggler first; polls because kills are asynchronous."""
        if self._cgroup is None:
            return
        while not self._cgroup.remove():
            self._cgroup.kill_members()
            threading.Event().wait(0.01)
