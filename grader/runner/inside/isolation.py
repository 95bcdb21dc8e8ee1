"""Kernel-level fences for the zygote and each child: prctl, rlimits, fds and Landlock.

Runs with the sandbox's unprivileged uid, so it can only restrict itself. Everything here is
plain syscalls through ctypes (standard library only).

Why Landlock: the zygote runs several children at once under the same uid in the same /scratch.
Without a fence, a test could leave a file for a sibling, read a sibling's working dir, or
signal a sibling (or the zygote), so one run could learn about, or spoil, another. Each child
therefore confines itself: it may write only inside its own working dir, may not list or read
anything else under the scratch root, and (Landlock ABI >= 6) may not signal or reach abstract
unix sockets outside its own process tree.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import resource
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38

_SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on x86_64 and aarch64 (generic syscall table)
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

# Filesystem access rights by the ABI version that introduced them.
_FS_READ = (1 << 0) | (1 << 2) | (1 << 3)  # execute, read file, read dir
_FS_ALL_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_FS_WRITE_FILE = 1 << 1
_NET_ALL = (1 << 0) | (1 << 1)  # bind and connect TCP (ABI >= 4)
_SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets and signals (ABI >= 6)

_libc = ctypes.CDLL(None, use_errno=True)

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_SECCOMP_DATA_NR, _SECCOMP_DATA_ARCH, _SECCOMP_DATA_ARGS = 0, 4, 16  # offsets in struct seccomp_data
_BPF_LD_W_ABS, _BPF_JEQ_K, _BPF_JGE_K, _BPF_JSET_K, _BPF_RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_AUDIT_ARCH_X86_64, _AUDIT_ARCH_AARCH64 = 0xC000003E, 0xC00000B7
_X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class _SyscallTable:
    arch: int
    denied: tuple[int, ...]  # refused whatever their arguments
    self_only: dict[int, tuple[int, ...]]  # allowed only with these arguments 0 (this process)
    by_argument: dict[int, tuple[int, tuple[int, ...]]]  # refused when argument i is one of these
    by_flag: dict[int, tuple[int, int]]  # refused when argument i has any of these bits
    missing: tuple[int, ...] = ()  # answered ENOSYS, so that libc falls back to an older call


# fcntl's lock, lease and directory-notice commands: F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK,
# F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE, F_NOTIFY.
_FCNTL_DENIED = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)
# madvise's advice that reclaims pages of a file's page cache: MADV_COLD, MADV_PAGEOUT.
_MADVISE_DENIED = (20, 21)
# mmap's flags: MAP_SHARED (in MAP_SHARED_VALIDATE too).
_MAP_SHARED = 0x01
# By the kernel's table for each machine. Denied: SysV shm/sem/msg, POSIX mq_*, add_key/
# request_key/keyctl, ioprio_set, flock, inotify_init/init1/add_watch, fanotify_init,
# io_uring_setup, fadvise64, readahead, mincore, preadv2/pwritev2, process_madvise, cachestat,
# sysinfo, memfd_create, memfd_secret, perf_event_open, bpf, utime/utimes/futimesat/utimensat,
# chown/fchown/lchown/fchownat. Self only: prlimit64 and
# sched_setparam/setscheduler/setaffinity/setattr (pid), setpriority (which, who). By flag: mmap
# (MAP_SHARED).
_SECCOMP_TABLES = {
    "x86_64": _SyscallTable(_AUDIT_ARCH_X86_64,
                            (29, 30, 31, 67, 64, 65, 66, 220, 68, 69, 70, 71, 240, 241, 242, 243, 244, 245, 248, 249, 250,
                             251, 73, 253, 294, 254, 300, 425, 221, 187, 27, 327, 328, 440, 451, 99, 319,
                             447, 298, 321, 132, 235, 261, 280, 92, 93, 94, 260),
                            {302: (0,), 142: (0,), 144: (0,), 203: (0,), 314: (0,), 141: (0, 1)},
                            {72: (1, _FCNTL_DENIED), 28: (2, _MADVISE_DENIED)},
                            {9: (3, _MAP_SHARED)}),
    "aarch64": _SyscallTable(_AUDIT_ARCH_AARCH64,
                             (194, 195, 196, 197, 190, 191, 192, 193, 186, 187, 188, 189, 180, 181, 182, 183, 184, 185, 217,
                              218, 219, 30, 32, 26, 27, 262, 425, 223, 213, 232, 286, 287, 440, 451, 179, 279,
                              447, 241, 280, 88, 55, 54),
                             {261: (0,), 118: (0,), 119: (0,), 122: (0,), 274: (0,), 140: (0, 1)},
                             {25: (1, _FCNTL_DENIED), 233: (2, _MADVISE_DENIED)},
                             {222: (3, _MAP_SHARED)}),
}


# What a run kept apart (apart.py) is refused besides: the calls that read or move a counter of the
# whole machine exactly. pidfd_open and clone's CLONE_PIDFD give a pidfd, whose inode number counts
# every process and thread the machine has made (a run moved it with threads, the next read it).
# pipe, pipe2, socket, socketpair, userfaultfd and io_setup each make an inode numbered from one
# counter handed to each CPU in batches of 1024: a run that waited to be on CPU 0 left 7 bits
# there that the next run read exactly, 11 hand-offs of 11 (red team, round 31). Nothing else a
# run can make draws from it (memfd_create, mq_open and io_uring are refused to every run), so the
# zygote's record and output pipes, made before the fork, are the only ones a run holds: FIFOs on
# the zygote's own scratch, numbered by that tmpfs and not by this counter (pipes.py).
# Nor may a run make namespaces (unshare, setns, clone's CLONE_NEW* flags): the sandbox lets its
# processes make them so that each run gets its own (apart.py), and a run's own would be kernel
# surface to no purpose. clone3 takes its flags in memory a filter cannot read: ENOSYS, and libc
# falls back to clone.
_CLONE_PIDFD = 0x1000
_CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_RUN_TABLES = {
    "x86_64": _SyscallTable(_AUDIT_ARCH_X86_64, (434, 22, 293, 41, 53, 323, 206, 272, 308), {}, {},
                            {56: (0, _CLONE_PIDFD | _CLONE_NEW_ANY)}, (435,)),
    "aarch64": _SyscallTable(_AUDIT_ARCH_AARCH64, (434, 59, 198, 199, 282, 0, 97, 268), {}, {},
                             {220: (0, _CLONE_PIDFD | _CLONE_NEW_ANY)}, (435,)),
}


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def _prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl({option})")


def set_dumpable(dumpable: bool) -> None:
    """Whether a process of the same uid may read this one's memory and fds, and own /proc/self."""
    _prctl(_PR_SET_DUMPABLE, int(dumpable))


def harden_zygote() -> None:
    """Keep children out of the zygote's memory, fds and inherited state, adopt every orphan they
    leave, and take away the kernel objects that would outlive a run.

    Not dumpable: a child (same uid) cannot open /proc/<zygote>/mem or /proc/<zygote>/fd.
    Subreaper: a grandchild that escapes its process group with setsid() is re-parented to the
    zygote when its parent dies, so the zygote can still find and kill it.
    Seccomp: see deny_state_shared_between_runs.
    """
    set_dumpable(False)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    deny_state_shared_between_runs()


def deny_state_shared_between_runs() -> None:
    """Refuse (EPERM), for this process and everything it forks, the system calls that let one
    run leave data for the next outside the files Landlock fences.

    SysV IPC, POSIX message queues and keyrings name an object by a key every process of the
    sandbox can reach, and the object lives on after the process that made it: shared memory, a
    queue or a key left by one run is there for the next. A process's limits, priorities and CPU
    affinity are inherited by its children, and a child of the same user may set its parent's:
    a run that wrote into the zygote's soft limits (prlimit on its parent) was read back by every
    later run. So those are allowed on the calling process only; ioprio_set, which can reach every
    process of the user, not at all. Without this, a suite could store the behaviour of the first
    implementation it meets (the reference) and hold every later one to it: a valid suite that
    kills mutants without one expectation of its own.

    File locks, leases and notices (flock, fcntl's lock commands, inotify, fanotify, dnotify) are
    taken on an inode, and the sandboxes share their read-only files: the fast zygote, which sees
    every module, spelled the reference out in lock ranges on the student's own conftest, and the
    runs alone in the other sandbox read it back. io_uring goes too: its operations do not pass
    through this filter.

    The page cache of those files is shared too: a run alone emptied a page of a big library with
    fadvise(DONTNEED) and read it back with preadv2(RWF_NOWAIT), so the fast zygote learnt which
    mutants were sampled to run alone (a suite honest on those alone passed, 0.92). fadvise,
    readahead, mincore, cachestat, preadv2/pwritev2 and madvise's reclaiming advice go, which
    leaves the page cache to be read by timing only; so does sysinfo, which tells the whole
    machine's free memory (what /proc shows of the machine is hidden by the sandbox backends).
    Memory mapped shared (mmap's MAP_SHARED) goes too: a mapping the fast zygote made while it
    collected the suite is the same memory in every run forked from it, and a suite kept the
    reference's behaviour there, the first run's, for every later run to be held to (red team,
    round 23). No run needs one: numpy, pytest and Python's own imports map files privately.
    memfd_create goes too: a memfd's inode number comes from one counter for the whole machine,
    which a run can read exactly and move at will (a suite told the fast zygote the sample through
    it, 10 grades of 13). A perf event's id comes from one such counter too, which a run may open
    on its own process (perf_event_paranoid 2): 8 bits went from each run alone to the next, 11 of
    11, and between the sandboxes both ways (red team, round 32); perf_event_open goes, and bpf,
    whose objects are numbered alike where unprivileged bpf is on. Pipes and sockets number their
    inodes from such a counter too, handed to each CPU in batches; a run kept apart may make
    neither (_RUN_TABLES), a run of the fast zygote may.

    Setting a file's times goes too (utime, utimes, futimesat, utimensat), and its owner (chown,
    fchown, lchown, fchownat). bwrap's /dev binds the machine's own device nodes, writable, and
    anyone who may write a node may set its times to now: a run of the fast zygote touched
    /dev/zero and /dev/full at chosen moments, and every run alone after the pass read 8 bits from
    their times, 18 of 18, as would any later grade (red team, round 33). A chown to the owner it
    has (-1, -1) needs no ownership and sets the change time: 16 bits, 54 of 54 (round 34). Those
    are the only changes a process that does not own a file may make to it (a mode, an attribute
    or a flag needs the owner). A read-only mount would stop them all, but bwrap mounts no device
    read-only, and a run alone could already make them only to its own scratch's files, which no
    test needs.

    Calls made through another ABI (i386, x32) are refused outright, so the numbers below cannot
    be dodged.
    """
    _install_filter(_SECCOMP_TABLES[platform.machine()])


def deny_counters_of_the_machine() -> None:
    """Refuse, for this process and everything it forks, the calls of _RUN_TABLES: a run kept
    apart has counters of its own, and these would read or move the machine's."""
    _install_filter(_RUN_TABLES[platform.machine()])


def _install_filter(table: _SyscallTable) -> None:
    deny = _SECCOMP_RET_ERRNO | errno.EPERM
    program = _Program()
    program.emit(_BPF_LD_W_ABS, _SECCOMP_DATA_ARCH)
    program.jump_unless(table.arch, "deny")
    program.emit(_BPF_LD_W_ABS, _SECCOMP_DATA_NR)
    if table.arch == _AUDIT_ARCH_X86_64:
        program.emit(_BPF_JGE_K, _X32_SYSCALL_BIT, true="deny")
    for number in table.denied:
        program.emit(_BPF_JEQ_K, number, true="deny")
    for number in table.self_only:
        program.emit(_BPF_JEQ_K, number, true=f"self {number}")
    for number in table.by_argument:
        program.emit(_BPF_JEQ_K, number, true=f"argument {number}")
    for number in table.by_flag:
        program.emit(_BPF_JEQ_K, number, true=f"flag {number}")
    for number in table.missing:
        program.emit(_BPF_JEQ_K, number, true="missing")
    program.emit(_BPF_RET_K, _SECCOMP_RET_ALLOW)
    if table.missing:
        program.label("missing")
        program.emit(_BPF_RET_K, _SECCOMP_RET_ERRNO | errno.ENOSYS)
    for number, (index, bits) in table.by_flag.items():
        program.label(f"flag {number}")
        program.emit(_BPF_LD_W_ABS, _SECCOMP_DATA_ARGS + 8 * index)  # flags: an int, the low half
        program.emit(_BPF_JSET_K, bits, true="deny")
        program.emit(_BPF_RET_K, _SECCOMP_RET_ALLOW)
    for number, (index, values) in table.by_argument.items():
        program.label(f"argument {number}")
        program.emit(_BPF_LD_W_ABS, _SECCOMP_DATA_ARGS + 8 * index)  # an int: the low half of the argument
        for value in values:
            program.emit(_BPF_JEQ_K, value, true="deny")
        program.emit(_BPF_RET_K, _SECCOMP_RET_ALLOW)
    for number, arguments in table.self_only.items():
        program.label(f"self {number}")
        for index in arguments:  # each argument's 64 bits must be 0: the kernel truncates a pid
            for half in (0, 4):
                program.emit(_BPF_LD_W_ABS, _SECCOMP_DATA_ARGS + 8 * index + half)
                program.jump_unless(0, "deny")
        program.emit(_BPF_RET_K, _SECCOMP_RET_ALLOW)
    program.label("deny")
    program.emit(_BPF_RET_K, deny)
    packed = ctypes.create_string_buffer(program.assemble())
    fprog = _SockFprog(len(program), ctypes.cast(packed, ctypes.c_void_p))
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    _check(_libc.prctl(_PR_SET_SECCOMP, ctypes.c_ulong(_SECCOMP_MODE_FILTER), ctypes.byref(fprog), 0, 0),
           "prctl(PR_SET_SECCOMP)")


class _Program:
    """A classic BPF program with forward jumps to labels, resolved when assembled."""

    def __init__(self) -> None:
        self._instructions: list[tuple[int, int, str | None]] = []  # (code, k, label jumped to if true)
        self._labels: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._instructions)

    def emit(self, code: int, k: int, *, true: str | None = None) -> None:
        self._instructions.append((code, k, true))

    def jump_unless(self, k: int, label: str) -> None:
        """Go on when the accumulator equals ``k``, else jump to ``label``."""
        self._instructions.append((_BPF_JEQ_K, k, "!" + label))

    def label(self, name: str) -> None:
        self._labels[name] = len(self._instructions)

    def assemble(self) -> bytes:
        packed = []
        for index, (code, k, target) in enumerate(self._instructions):
            jt = jf = 0
            if target is not None:
                offset = self._labels[target.lstrip("!")] - index - 1
                if not 0 <= offset <= 255:
                    raise ValueError(f"a jump of {offset} instructions does not fit classic BPF")
                jt, jf = (0, offset) if target.startswith("!") else (offset, 0)
            packed.append(struct.pack("=HBBI", code, jt, jf, k))
        return b"".join(packed)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is missing or blocked (seccomp)."""
    result = _libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION))
    return max(result, 0)


def _fs_rights(abi: int) -> int:
    return _FS_ALL_BY_ABI[max(v for v in _FS_ALL_BY_ABI if v <= abi)]


def readable_roots(scratch_root: Path) -> list[Path]:
    """Every path a child may read: all of the filesystem except the scratch root's contents.

    Landlock rules only grant, so "everything but X" is spelled as the siblings of each
    directory on the way down from / to X.
    """
    roots: list[Path] = []
    keep = scratch_root.resolve()
    for parent in reversed(keep.parents):
        below = keep.parts[len(parent.parts)]
        roots.extend(parent / name for name in sorted(os.listdir(parent)) if name != below)
    return roots


@dataclass(frozen=True)
class ReadRules:
    """The read grants every child of a zygote adds to its ruleset, prepared once in the zygote:
    each root opened (O_PATH, left open for the zygote's lifetime; a child closes its copies once
    confined) and its rule packed, so a child spends one syscall per rule."""

    rules: tuple[bytes, ...]  # packed landlock_path_beneath_attr, each naming an fd opened here


def read_rules(abi: int, scratch_root: Path) -> ReadRules:
    rules = []
    for path in readable_roots(scratch_root):
        access = _FS_READ | _FS_WRITE_FILE if path == Path("/dev") else _FS_READ
        opened = _path_rule(path, access & _fs_rights(abi))
        if opened is not None:
            rules.append(opened[0])
    return ReadRules(tuple(rules))


def _path_rule(path: Path, access: int) -> tuple[bytes, int] | None:
    """(packed rule, its open fd) granting ``access`` beneath ``path``; None if it cannot be opened."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None  # vanished or unreadable: nothing to grant
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        access &= _FS_READ | _FS_WRITE_FILE | (1 << 14)  # only file rights apply to a file
        access &= ~(1 << 3)
    return struct.pack("=Qi", access, fd), fd


def confine(abi: int, *, readable: ReadRules, writable: Path) -> None:
    """Restrict this process (and what it forks) to reading ``readable`` and writing ``writable``."""
    rights = _fs_rights(abi)
    attr = struct.pack("QQQ", rights, _NET_ALL if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)
    size = len(attr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = _check(_libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.c_char_p(attr[:size]),
                                   ctypes.c_size_t(size), ctypes.c_uint32(0)), "landlock_create_ruleset")
    own = _path_rule(writable, rights)
    if own is None:
        raise OSError(f"cannot open the run's own directory {writable}")
    try:
        for rule in (*readable.rules, own[0]):
            _check(_libc.syscall(_SYS_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, rule, 0),
                   "landlock_add_rule")
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _check(_libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(own[1])
        os.close(ruleset)


def limit_cpu(seconds: float) -> None:
    """RLIMIT_CPU as the inner timeout layer: SIGXCPU at the soft limit, SIGKILL a second later.

    Never above the sandbox's own hard limit (an unprivileged process cannot raise it).
    """
    _, ceiling = resource.getrlimit(resource.RLIMIT_CPU)
    hard = max(2, int(seconds) + 2)
    if ceiling != resource.RLIM_INFINITY:
        hard = min(hard, ceiling)
    resource.setrlimit(resource.RLIMIT_CPU, (max(1, hard - 1), hard))


def close_fds_except(keep: int) -> None:
    """Close every inherited fd above stderr but ``keep``: the zygote's protocol pipe, siblings'
    pipes, the read rules' roots (close_range(2): one syscall, whatever the count)."""
    top = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    os.closerange(3, keep)
    os.closerange(keep + 1, top if top != resource.RLIM_INFINITY else 1 << 20)


@dataclass(frozen=True)
class OpenedFile:
    """A file of the tests folder the zygote holds open for reading, as a child reopens it."""

    fd: int
    path: str
    inheritable: bool


def files_open_under(folder: Path) -> tuple[OpenedFile, ...]:
    """The regular files under ``folder`` this process holds open read-only: data a test module
    opened at import time and reads later (``np.load`` of an .npz reads its archive lazily).
    close_fds_except closes them in a child, and sharing the zygote's opening would share its
    offset between runs, so each child opens each again (reopen)."""
    found = []
    for entry in os.listdir("/proc/self/fd"):
        fd = int(entry)
        if fd <= 2:
            continue  # a child's own stdin, stdout and stderr, whatever they were here
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            regular = stat.S_ISREG(os.fstat(fd).st_mode)
        except OSError:
            continue  # the listing's own fd, closed by now
        if regular and flags & os.O_ACCMODE == os.O_RDONLY and Path(path).is_relative_to(folder):
            found.append(OpenedFile(fd, path, os.get_inheritable(fd)))
    return tuple(found)


def offsets(files: tuple[OpenedFile, ...]) -> dict[int, int]:
    """Where each file's reading stands (read in a child before close_fds_except)."""
    return {file.fd: os.lseek(file.fd, 0, os.SEEK_CUR) for file in files}


def reopen(files: tuple[OpenedFile, ...], at: dict[int, int]) -> None:
    """Open each file again under its fd number, at its offset: the same file to the tests, but
    an opening of this child's own (under its Landlock rules, which let it read the folder)."""
    for file in files:
        opened = os.open(file.path, os.O_RDONLY | os.O_CLOEXEC)
        if opened != file.fd:
            os.dup2(opened, file.fd, inheritable=file.inheritable)
            os.close(opened)
        os.lseek(file.fd, at[file.fd], os.SEEK_SET)
