"""The sandbox suite runs once per backend: both must pass the same tests (DESIGN.md section 5).

Docker tests are skipped only when the engine is unreachable; a missing image is a failure,
because CI has the engine and must build the image (docker/sandbox/build.sh).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker.errors  # type: ignore[import-not-found]  # docker-py ships no type hints
import pytest

from grader.sandbox import SandboxBackend, SandboxUnavailable, get_backend
from grader.sandbox.docker import DockerBackend

BACKENDS = ["bwrap", pytest.param("docker", marks=pytest.mark.docker)]


def _docker_engine_reachable() -> str | None:
    """None if the engine answers, else the reason it does not."""
    try:
        DockerBackend().api().ping()
    except (SandboxUnavailable, docker.errors.DockerException) as error:
        return str(error)
    return None


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> SandboxBackend:
    if request.param == "docker" and (reason := _docker_engine_reachable()):
        pytest.skip(reason)
    chosen = get_backend(request.param)
    chosen.check()
    return chosen


@pytest.fixture(scope="session")
def docker_backend() -> DockerBackend:
    """The docker backend alone, for what only containers have."""
    if reason := _docker_engine_reachable():
        pytest.skip(reason)
    chosen = DockerBackend()
    chosen.check()
    return chosen


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder to mount that the sandbox user can read (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="sandbox-mount-"))
    folder.chmod(0o755)
    (folder / "module.py").write_text("VALUE = 42\n")
    (folder / "module.py").chmod(0o644)
    yield folder
    shutil.rmtree(folder)
