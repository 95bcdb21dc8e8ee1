"""Fixtures of the hostile suite: a real Redis to attack, backends, and one grade through the CLI.

Each grade runs `python -m grader check` inside reaper.py, which catches any process the grade
leaves behind; see hostile_helpers.py for what every grade must show.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from grader.chapter import REPO_ROOT
from grader.sandbox import SandboxUnavailable, get_backend
from hostile_helpers import GUARD_SECONDS, REAPER, Graded, Redis, RepoBuilder, host_addresses

CANARY_VARIABLE = "HOSTILE_TEST_CANARY"
# Tighter than the defaults so that every hang costs seconds, not minutes; the mechanisms are the same.
# The probes' time is well above a correct module's: their workload takes a correct module about 3 s
# on a slow day, and 4 s timed a module out in a CI run beside other work, where the test meant to
# see its answer refused (2026-12-02); a probe timeout is also a disagreement, so a tight one can
# pass a test that expects one for the wrong reason.
HOSTILE_SETTINGS = {"GRADER_COURSE_TIMEOUT": "4", "GRADER_COURSE_BUDGET": "8", "GRADER_PROBE_TIMEOUT": "20",
                    "GRADER_WALL_SECONDS": "120"}
DOCKER_LABEL = "org.l43-grader.sandbox"

collect_ignore_glob = ["submissions/*"]  # hostile student tests are data here, never collected


@dataclass(frozen=True)
class RedisServer:
    port: int
    client: Redis
    key: str
    value: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server on a free port, on every host address, holding one key."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = _free_port()
    server = subprocess.Popen([binary, "--port", str(port), "--bind", "0.0.0.0", "--save", "", "--appendonly", "no",
                               "--protected-mode", "yes"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = _connect_when_ready(server, port)
        key, value = "course:L4.3:gradebook", uuid.uuid4().hex
        assert client.command("SET", key, value) == "OK"
        yield RedisServer(port=port, client=client, key=key, value=value)
        client.close()
    finally:
        server.kill()
        server.wait()


def _connect_when_ready(server: subprocess.Popen, port: int) -> Redis:
    for _ in range(200):
        if server.poll() is not None:
            raise RuntimeError(f"redis-server exited with {server.returncode}")
        try:
            return Redis(port)
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not accept connections")


@pytest.fixture(scope="session")
def sandbox_backend():
    """sandbox_backend(name) -> name, or a skip saying why that backend cannot run here."""

    def usable(name: str) -> str:
        try:
            get_backend(name).check()
        except SandboxUnavailable as exc:
            pytest.skip(f"{name} sandbox unavailable: {exc}")
        return name

    return usable


@pytest.fixture(scope="session")
def repo_builder(tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer) -> RepoBuilder:
    marker = f"pwned-{uuid.uuid4().hex[:12]}"
    values = {
        "REDIS_PORT": str(redis_server.port),
        "HOST_ADDRESSES": ", ".join(repr(a) for a in host_addresses()),
        "MARKER": marker,
        "MARKER_LEN": str(len(marker)),
        "BOMB_BYTES": str(256 << 20),  # what probe_answer_bomb's answer inflates to; a few hundred kB packed
    }
    return RepoBuilder(root=tmp_path_factory.mktemp("hostile-repos"), values=values)


def _docker_sandboxes_since(started: float) -> list[str]:
    import docker

    client = docker.from_env()
    try:
        found = client.containers.list(all=True, filters={"label": DOCKER_LABEL})
        return [c.name for c in found if _created_after(c.attrs.get("Created", ""), started)]
    finally:
        client.close()


def _created_after(created: str, started: float) -> bool:
    stamp = datetime.fromisoformat(created[:26].rstrip("Z") + "+00:00") if created else None
    return stamp is not None and stamp.timestamp() >= started - 1.0


@pytest.fixture
def grade_hostile(repo_builder: RepoBuilder, tmp_path: Path) -> Iterator[Callable[..., Graded]]:
    """grade_hostile(impl=..., tests=..., backend=..., stop_after=None, stop_signal="TERM", settings=None)
    -> Graded, through the CLI and the reaper (which, with ``stop_after``, sends the grader
    ``stop_signal`` once it has run that long), with GRADER_* ``settings`` beside the hostile ones.
    The grades of one test share their TMPDIR."""
    # The grader's temporary files go here (a folder of this test's own, which the sandboxes' uids
    # can traverse, as they can /tmp), so what a grade leaves there is known to be its own.
    temporary = Path(tempfile.mkdtemp(prefix="hostile-tmp-"))
    temporary.chmod(0o755)

    def grade(*, impl: str, tests: dict[str, str] | None = None, backend: str,
              stop_after: float | None = None, stop_signal: str = "TERM",
              settings: dict[str, str] | None = None) -> Graded:
        repo, submitted = repo_builder.build(impl=impl, tests=tests)
        out, result = tmp_path / "report.json", tmp_path / "reaper.json"
        stdout, stderr = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
        canary = uuid.uuid4().hex
        command = [sys.executable, "-m", "grader", "check", str(repo), "--format", "json", "--out", str(out),
                   "--backend", backend]
        stop = [] if stop_after is None else ["--stop-after", str(stop_after), "--stop-signal", stop_signal]
        started = time.time()
        with stdout.open("wb") as out_file, stderr.open("wb") as err_file:
            subprocess.run([sys.executable, str(REAPER), str(result), str(GUARD_SECONDS), *stop, "--", *command],
                           stdout=out_file, stderr=err_file, cwd=REPO_ROOT, check=True,
                           env={**os.environ, **HOSTILE_SETTINGS, **(settings or {}), CANARY_VARIABLE: canary,
                                "TMPDIR": str(temporary)})
        reaped = json.loads(result.read_text())
        leftovers = reaped["leftovers"]
        if backend == "docker":
            leftovers += [{"container": name} for name in _docker_sandboxes_since(started)]
        return Graded(
            returncode=reaped["returncode"], stdout=stdout.read_text(errors="replace"),
            stderr=stderr.read_text(errors="replace"),
            report=json.loads(out.read_text()) if out.exists() else None,
            leftovers=leftovers, hung=reaped["hung"], canary=canary, submitted=submitted,
            temporary=temporary, temporary_left=sorted(path.name for path in temporary.iterdir()),
        )

    yield grade
    shutil.rmtree(temporary, ignore_errors=True)
