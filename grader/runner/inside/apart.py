"""Runs kept apart: each run in a pid and mount namespace of its own, on a scratch of its own.

Why: the clean sandbox runs one child at a time, and every counter those children share is a
channel from one run to the next. Two were exact and easy to move: the pid counter (start
threads until the next pid spells a code; the next run reads getpid()) and the scratch tmpfs's
inode counter (make files; the next run reads st_ino). A suite held every run alone to the first
module it met that reproduced the worked example, carried that way, and passed 3 grades of 6
beside a wrong implementation (red team, round 30); a luong.py can carry its own fingerprint
to the runs alone after it the same way (round 22). Here every run starts from the same
counters: it is pid 2 of a namespace of its own, on a tmpfs of its own mounted over the scratch
folder, with /proc (whose /proc/self names the outer pid) hidden under an empty tmpfs, everything
else read-only, and no call that reads or moves the machine's own counters exactly
(isolation.deny_counters_of_the_machine).

How: each child of the zygote makes a user namespace of its own, with a pid and a mount
namespace it owns, which gives it CAP_SYS_ADMIN over those and nothing else, and forks the
namespace's init, which mounts and forks the run itself. Both drop every capability before
anything of the student's runs, and the run may make no namespace of its own
(isolation.deny_counters_of_the_machine). A sandbox that keeps its runs apart lets its processes
make user namespaces (SandboxBackend.spawn), which the other sandboxes do not:

    zygote -> child (relays the run's status) -> init (pid 1: mounts, reaps) -> the run (pid 2)

The run is not pid 1 itself: an init ignores the signals it has no handler for, SIGXCPU of the
CPU limit among them, and a test's own kill() of itself. When the init exits the kernel kills
whatever is left in the namespace, so nothing of the run outlives it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import struct
from pathlib import Path

from . import isolation
from .isolation import _check, _libc  # one libc handle and one errno check for the package's syscalls

_CLONE_NEWNS, _CLONE_NEWPID, _CLONE_NEWUSER = 0x00020000, 0x20000000, 0x10000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_RDONLY, _MS_PRIVATE = 2, 4, 8, 1, 1 << 18
_SYS_MOUNT_SETATTR = 442  # the same number on x86_64 and aarch64 (generic syscall table)
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 1
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
# Under an empty read-only tmpfs in each run: /proc, whose /proc/self names the outer pid, and
# /dev/pts, the sandbox's own pty instance, whose ptmx takes the time of every write to a pty
# read-only mount or not (a run set it to a second, the next read 3 bits: red team, round 32).
_HIDDEN = (b"/proc", b"/dev/pts")
EXIT_NOT_APART = 71  # the namespaces could not be made: the run is a crash, never run unseparated

class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def can_keep_runs_apart(scratch: Path) -> str:
    """Why a child of this process could not keep its run apart ("" if it can): try it once, in
    a child that makes the namespaces and mounts what each run's init mounts. A sandbox that
    forbids it (a seccomp or AppArmor profile, a kernel without user namespaces) then fails at
    start with a reason, not as a crash of every run."""
    why_r, why_w = os.pipe()
    child = os.fork()
    if child == 0:
        code = 0
        try:
            os.close(why_r)
            _own_namespaces()
            _mount_own_scratch(scratch, scratch / "trial", scratch_bytes=1 << 16)
        except BaseException as exc:  # noqa: BLE001 - the answer is the reason, whatever it is
            os.write(why_w, str(exc).encode()[:500])
            code = 1
        os._exit(code)
    os.close(why_w)
    with os.fdopen(why_r, "rb") as why:
        reason = why.read().decode(errors="replace")
    _, status = os.waitpid(child, 0)
    return reason or ("" if status == 0 else f"the trial child ended with status {status}")


def _own_namespaces() -> None:
    """Unshare a user, a pid and a mount namespace, and map this process's ids into the user
    namespace as themselves (setgroups denied first, as the kernel asks of an unprivileged map).
    The zygote is not dumpable, which leaves /proc/self's files root's: the process is dumpable
    while it writes them, when nothing but the zygote can see it (a run is in a pid namespace of
    its own)."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(_CLONE_NEWUSER | _CLONE_NEWPID | _CLONE_NEWNS), "unshare")
    isolation.set_dumpable(True)
    try:
        for name, line in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as mapping:
                mapping.write(line)
    finally:
        isolation.set_dumpable(False)


def _drop_capabilities() -> None:
    """Give up every capability, for good: none permitted, none ambient. The bounding set keeps
    what the user namespace gave, but a process without privileges cannot regain it (its uid is
    not 0, and no_new_privs stops setuid and file capabilities at exec)."""
    _check(_libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "prctl(PR_CAP_AMBIENT)")
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    _check(_libc.capset(ctypes.byref(header), ctypes.byref((_CapData * 2)())), "capset")


def enter(scratch: Path, workdir: Path, *, scratch_bytes: int) -> None:
    """Return in the run's own process, pid 2 of a fresh namespace, with ``workdir`` made afresh
    on a tmpfs of its own over ``scratch``. The two processes above it never return."""
    status_r, status_w = os.pipe()
    _own_namespaces()
    init = os.fork()
    if init != 0:
        os.close(status_w)
        _relay(init, status_r)
    os.close(status_r)
    try:
        _mount_own_scratch(scratch, workdir, scratch_bytes)
        run = os.fork()
    except BaseException:  # noqa: BLE001 - the run must never start in the shared namespaces
        os._exit(EXIT_NOT_APART)
    if run == 0:
        os.close(status_w)
        return
    _reap_until(run, status_w)


def _mount_own_scratch(scratch: Path, workdir: Path, scratch_bytes: int) -> None:
    """Everything read-only but the run's own scratch: bwrap's /dev is a tmpfs of the sandbox's
    uid, where a run set an extended attribute, a time or a mode for the next to read, and reading
    a link there left its access time (red team, round 31: 4 grades of 5 passed through an
    attribute, 4 of 4 through access times)."""
    attributes = struct.pack("=QQQQ", _MOUNT_ATTR_RDONLY, 0, _MS_PRIVATE, 0)
    _check(_libc.syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, b"/", _AT_RECURSIVE, attributes, len(attributes)),
           "mount_setattr(/, read-only, private)")
    options = f"size={scratch_bytes},mode=0700".encode()
    _check(_libc.mount(b"tmpfs", bytes(scratch), b"tmpfs", _MS_NOSUID | _MS_NODEV, options), "mount the scratch")
    os.mkdir(workdir, 0o700)
    for hidden in _HIDDEN:
        _check(_libc.mount(b"tmpfs", hidden, b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY,
                           b"size=4k,mode=0555"), f"hide {hidden.decode()}")
    _drop_capabilities()
    isolation.deny_counters_of_the_machine()


def _reap_until(run: int, status_w: int) -> None:
    """The namespace's init: reap every process of the namespace until the run ends, hand its
    status up, and exit, which ends whatever it left behind."""
    code = EXIT_NOT_APART
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        while True:
            pid, status = os.wait()
            if pid == run:
                os.write(status_w, struct.pack("=i", status))
                code = 0
                break
    finally:
        os._exit(code)


def _relay(init: int, status_r: int) -> None:
    """Wait for the init and end as the run ended: the zygote reads the run's exit (a signal, a
    status) from this process's, and its CPU time too, as each parent waited for its child."""
    number = 0
    try:
        _drop_capabilities()  # it needs none from here on
        _, init_status = os.waitpid(init, 0)
        handed = os.read(status_r, 4)
        status = struct.unpack("=i", handed)[0] if len(handed) == 4 else init_status
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            if number not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
            os.kill(os.getpid(), number)
        code = os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + number
    except BaseException:  # noqa: BLE001 - whatever went wrong, this process must not go on
        code = EXIT_NOT_APART
    os._exit(code)
