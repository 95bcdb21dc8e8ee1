"""What the sandbox cannot see, reach or change: network, host files, mounts, other sandboxes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from grader.chapter import REPO_ROOT
from grader.sandbox import Limits, Mount, SandboxBackend, Termination
from grader.sandbox._env import MACHINE_WIDE_PROC
from sandbox_helpers import read_line, run_python

CONNECT = """
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3)
    print("connected")
except OSError as error:
    print(type(error).__name__)
"""


@pytest.fixture
def tcp_server() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    yield server
    server.close()


def test_the_hosts_loopback_is_unreachable(backend: SandboxBackend, tcp_server: socket.socket) -> None:
    port = tcp_server.getsockname()[1]
    with socket.create_connection(("127.0.0.1", port)) as control:  # the server does accept connections
        tcp_server.accept()[0].close()
        control.close()
    run = run_python(backend, CONNECT.format(port=port))
    assert run.stdout.strip() != b"connected"
    with pytest.raises(BlockingIOError):
        tcp_server.accept()  # nothing reached it from the sandbox


def _redis_command(port: int, *words: str) -> bytes:
    request = f"*{len(words)}\r\n" + "".join(f"${len(w)}\r\n{w}\r\n" for w in words)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(request.encode())
        return connection.recv(4096)


@pytest.fixture
def redis_port(tmp_path: Path) -> Iterator[int]:
    """A real redis-server on a free loopback port, holding one key; polled until it answers."""
    server_path = shutil.which("redis-server")
    if server_path is None:
        pytest.fail("redis-server is missing: apt-get install -y redis-server")
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [server_path, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                if _redis_command(port, "PING") == b"+PONG\r\n":
                    break
            except OSError:
                assert server.poll() is None, "redis-server exited"
        assert _redis_command(port, "SET", "grade", "41") == b"+OK\r\n"
        yield port
    finally:
        server.kill()
        server.wait()


def test_a_redis_on_the_host_is_unreachable_and_keeps_its_key(backend: SandboxBackend, redis_port: int) -> None:
    attack = f"""
import socket
try:
    with socket.create_connection(("127.0.0.1", {redis_port}), timeout=3) as c:
        c.sendall(b"*3\\r\\n$3\\r\\nSET\\r\\n$5\\r\\ngrade\\r\\n$3\\r\\n100\\r\\n*1\\r\\n$8\\r\\nFLUSHALL\\r\\n")
        print("connected", c.recv(100))
except OSError as error:
    print(type(error).__name__)
"""
    run = run_python(backend, attack)
    assert not run.stdout.startswith(b"connected"), run.stdout
    assert _redis_command(redis_port, "GET", "grade") == b"$2\r\n41\r\n"


def test_no_network_interface_but_loopback(backend: SandboxBackend) -> None:
    run = run_python(backend, "import socket, json; print(json.dumps([n for _, n in socket.if_nameindex()]))")
    assert set(json.loads(run.stdout)) <= {"lo"}


HOST_PATHS = [
    str(REPO_ROOT),
    str(REPO_ROOT / "reference" / "L4.3" / "luong.py"),
    str(REPO_ROOT / "mutants"),
    str(REPO_ROOT / "grader"),
    "/work",
    "/root",
]
PROBE_PATHS = """
import json, os, sys
seen = {}
for path in json.loads(sys.stdin.read()):
    try:
        if os.path.isdir(path):
            seen[path] = os.listdir(path)
        else:
            with open(path, "rb") as handle:
                seen[path] = len(handle.read())
    except OSError:
        pass  # not reachable: what we want
print(json.dumps(seen))
"""


def test_the_host_is_not_visible(backend: SandboxBackend) -> None:
    for path in HOST_PATHS[:3]:
        assert Path(path).exists()  # the probe would be vacuous otherwise
    run = run_python(backend, PROBE_PATHS, stdin=json.dumps(HOST_PATHS).encode())
    assert run.exit.termination is Termination.EXITED, run.exit.stderr
    assert json.loads(run.stdout) == {}


NAMESPACE_AND_KEYRING = """
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
KEYCTL = {"x86_64": 250, "aarch64": 219}[platform.machine()]
tried = {"userns": lambda: libc.unshare(0x10000000),  # CLONE_NEWUSER
         "keyring": lambda: libc.syscall(KEYCTL, 0, -3, 0)}  # KEYCTL_GET_KEYRING_ID of the session's
print(" ".join(f"{what}:{'made' if attempt() >= 0 else 'refused'}" for what, attempt in tried.items()))
"""


@pytest.mark.parametrize("apart", [False, True], ids=["shared", "apart"])
def test_only_a_sandbox_keeping_runs_apart_lets_a_process_make_a_user_namespace(backend: SandboxBackend,
                                                                                apart: bool) -> None:
    """Each run of a sandbox that keeps its runs apart makes one of its own (inside/apart.py); no
    other sandbox needs one, and a nested namespace is kernel surface. Docker's profile for the
    former (docker.APART_SECCOMP) takes the place of the engine's, and still refuses what the
    engine's did that no process of the sandbox needs, the keyrings among them."""
    run = run_python(backend, NAMESPACE_AND_KEYRING, apart=apart)
    assert run.exit.termination is Termination.EXITED, run.exit.stderr
    made = dict(word.split(":") for word in run.stdout.decode().split())
    assert made["userns"] == ("made" if apart else "refused")
    if backend.name == "docker":  # bwrap adds no filter of its own: the zygote's refuses keyrings (tests/runner)
        assert made["keyring"] == "refused"


def test_the_user_is_not_root(backend: SandboxBackend) -> None:
    run = run_python(backend, "import os; print(os.getuid(), os.geteuid(), os.getgid())")
    assert all(int(number) != 0 for number in run.stdout.split())


def test_the_environment_holds_only_what_was_given(backend: SandboxBackend) -> None:
    run = run_python(
        backend,
        "import json, os; print(json.dumps([dict(os.environ), os.getcwd()]))",
        env={"COURSE_CHAPTER": "L4.3"},
    )
    environ, cwd = json.loads(run.stdout)
    assert cwd == "/scratch"
    assert environ["COURSE_CHAPTER"] == "L4.3"
    assert environ["HOME"] == environ["TMPDIR"] == "/scratch"
    assert environ["PYTHONHASHSEED"] == "0" and environ["PYTHONDONTWRITEBYTECODE"] == "1"
    allowed = {"COURSE_CHAPTER", "PATH", "HOME", "TMPDIR", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED",
               "HOSTNAME", "PWD"}  # HOSTNAME (docker) and PWD (bwrap's --chdir) describe the sandbox itself
    assert set(environ) <= allowed


WRITE_ATTEMPTS = """
import json, os
outcome = {}
for path in ("/course/substrate/module.py", "/course/substrate/new.py", "/opt/sandbox-env/new.py",
             "/usr/new.py", "/new.py", "/tmp/new.py", "/etc/new.py"):
    try:
        with open(path, "w") as handle:
            handle.write("pwned")
        outcome[path] = "written"
    except OSError as error:
        outcome[path] = type(error).__name__
with open("/scratch/mine.txt", "w") as handle:
    outcome["/scratch/mine.txt"] = handle.write("ok")
print(json.dumps(outcome))
"""


def test_dependencies_are_read_only_and_only_scratch_is_writable(backend: SandboxBackend, shared_dir: Path) -> None:
    run = run_python(backend, WRITE_ATTEMPTS, mounts=(Mount(shared_dir, "/course/substrate"),))
    outcome = json.loads(run.stdout)
    assert outcome.pop("/scratch/mine.txt") == 2
    assert "written" not in outcome.values(), outcome
    assert (shared_dir / "module.py").read_text() == "VALUE = 42\n"
    assert not (shared_dir / "new.py").exists()


def test_mounts_are_importable(backend: SandboxBackend, shared_dir: Path) -> None:
    run = run_python(backend, "import sys; sys.path.insert(0, '/course/substrate'); import module; print(module.VALUE)",
                     mounts=(Mount(shared_dir, "/course/substrate"),))
    assert run.stdout == b"42\n", run.exit.stderr


def test_scratch_is_private_to_each_sandbox(backend: SandboxBackend) -> None:
    writer_code = "open('/scratch/secret', 'w').write('s3cret'); print('written', flush=True); input()"
    with backend.spawn([backend.python, "-c", writer_code], mounts=(), limits=Limits()) as writer:
        assert read_line(writer) == b"written\n"
        reader = run_python(backend, "import os; print(os.listdir('/scratch'))")
        assert reader.stdout == b"[]\n"


HOLD_PIPE_PAGES = """
import fcntl, os, sys
pipes = []
try:
    while True:
        pipes.append(os.pipe())
        fcntl.fcntl(pipes[-1][1], fcntl.F_SETPIPE_SZ, 1 << 20)
except OSError:
    pass
print(os.getuid(), len(pipes), flush=True)
sys.stdin.read()
"""
PIPE_SIZE = "import fcntl, os; print(os.getuid(), fcntl.fcntl(os.pipe()[1], fcntl.F_GETPIPE_SZ))"


@pytest.mark.skipif(os.geteuid() != 0, reason="only a grader running as root gives each sandbox a uid of its own")
def test_each_sandbox_has_a_uid_and_per_user_counts_of_its_own(backend: SandboxBackend) -> None:
    """The kernel counts pipe pages per uid: a sandbox holding its uid's whole allowance leaves
    other sandboxes of that uid one-page pipes. A digest of the reference once crossed from one
    sandbox of a grade to the other by that count, and a concurrent grade could be starved."""
    assert int(Path("/proc/sys/fs/pipe-user-pages-soft").read_text()) > 0  # or nothing is counted
    with backend.spawn([backend.python, "-c", HOLD_PIPE_PAGES], mounts=(), limits=Limits()) as holder:
        holder_uid, held = map(int, read_line(holder).split())
        assert held < 120  # it stopped at the soft limit, not at the open-file limit
        uid, size = map(int, run_python(backend, PIPE_SIZE).stdout.split())
    assert 0 not in (uid, holder_uid) and uid != holder_uid
    assert size == 65536  # a full default pipe, as if no other sandbox held any


MACHINE_WIDE = """
import json, os, sys
shown = {}
for name in json.load(sys.stdin):
    try:
        if os.path.isdir(f"/proc/{name}"):
            if os.listdir(f"/proc/{name}"):
                shown[name] = "lists entries"
        else:
            with open(f"/proc/{name}", "rb") as handle:
                if handle.read(1):
                    shown[name] = "has content"
    except OSError:
        pass
print(json.dumps(shown), os.cpu_count())
"""


def test_proc_says_nothing_of_the_whole_machine(backend: SandboxBackend) -> None:
    """Memory, cache and slab sizes, CPU and I/O counters: a run could write into them (allocate,
    cache, spin) and a later run, or the other sandbox, read them back."""
    assert Path("/proc/meminfo").read_text()  # the host's is there to hide
    run = run_python(backend, MACHINE_WIDE, stdin=json.dumps(MACHINE_WIDE_PROC).encode())
    shown, cpus = run.stdout.decode().rsplit(" ", 1)
    assert json.loads(shown) == {}, run.exit.stderr
    assert int(cpus) >= 1  # what numpy and pytest need still works


def test_sys_shows_nothing(backend: SandboxBackend) -> None:
    """The container's cgroup counters (CPU used, peak memory, forks refused) and the machine's
    NUMA counters carried 3 to 8 bits from one run alone to the next, the machine's between the
    sandboxes too (red team, round 32): /sys is empty, as bwrap never mounts it."""
    run = run_python(backend, "import os; print(os.listdir('/sys') if os.path.isdir('/sys') else [])")
    assert run.stdout.strip() == b"[]", run.exit.stderr


WHICH_FILES = """
import json, os, sys
import numpy
print(json.dumps({path: os.stat(path).st_ino for path in
                  (os.path.realpath(sys.executable), os.__file__, numpy.__file__, "/data/module.py")}), flush=True)
sys.stdin.read()
"""


def test_a_private_sandbox_reads_none_of_the_files_others_read(backend: SandboxBackend, shared_dir: Path) -> None:
    """What the kernel caches of a file (its pages, the names looked up beside it) is shared by
    every sandbox that reads it, and one can tell by timing what another read: the sandbox that
    runs the student's suite warm is private, with its own copies of Python and of its mounts.
    All three live at once, so no inode number can have been freed and given again."""
    with ExitStack() as stack:
        inodes = []
        for private in (False, False, True):
            process = stack.enter_context(backend.spawn([backend.python, "-c", WHICH_FILES],
                                                        mounts=(Mount(shared_dir, "/data"),), limits=Limits(),
                                                        private=private))
            inodes.append(json.loads(read_line(process)))
    shared, again, private = inodes
    python_files = [path for path in shared if path != "/data/module.py"]
    assert all(shared[path] == again[path] for path in python_files)  # without it, the same files
    assert all(shared[path] != private[path] for path in shared), (shared, private)
