"""Fixtures for the warm runner's tests: real zygotes in a real sandbox, per backend."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grader.chapter import Chapter
from grader.patches import apply_patch
from grader.runner.driver import WarmRunner
from grader.sandbox import Limits, SandboxBackend, SandboxUnavailable, get_backend


@pytest.fixture(scope="session")
def reference(chapter: Chapter) -> bytes:
    return chapter.reference_impl.read_bytes()


@pytest.fixture(scope="session")
def pitfalls(chapter: Chapter) -> dict[str, bytes]:
    """The seven pitfall mutants, rebuilt from their patches."""
    manifest = tomllib.loads(chapter.pitfalls.read_text())
    source = chapter.reference_impl.read_text()
    return {
        entry["id"]: apply_patch(source, (chapter.pitfalls.parent / entry["patch"]).read_text()).encode()
        for entry in manifest["mutants"]
    }


@pytest.fixture(scope="session", params=["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request: pytest.FixtureRequest) -> SandboxBackend:
    chosen = get_backend(request.param)
    try:
        chosen.check()
    except SandboxUnavailable as exc:
        pytest.skip(f"{request.param} sandbox unavailable: {exc}")
    return chosen


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder the unprivileged sandbox user can read (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="runner-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


@pytest.fixture
def suite_folder(shared_dir: Path) -> Callable[..., Path]:
    """Write a student test folder from {file name: source}; sources are dedented."""

    def write(files: dict[str, str]) -> Path:
        folder = shared_dir / "tests"
        folder.mkdir()
        for name, text in files.items():
            (folder / name).write_text(textwrap.dedent(text))
            (folder / name).chmod(0o644)
        folder.chmod(0o755)
        return folder

    return write


@pytest.fixture
def runner_for(chapter: Chapter, backend: SandboxBackend) -> Iterator[Callable[..., WarmRunner]]:
    """Start (and always close) a runner over a given student test folder."""
    started: list[WarmRunner] = []

    def start(student_tests: Path | None, **options) -> WarmRunner:
        runner = WarmRunner(chapter=chapter, backend=backend, student_tests=student_tests,
                            limits=options.pop("limits", Limits(wall_seconds=120.0)), **options)
        started.append(runner)
        runner.start()
        return runner

    yield start
    for runner in started:
        runner.close()


@pytest.fixture
def processes_with_cmdline() -> Callable[[str], list[int]]:
    """Host pids whose command line contains a marker (to prove nothing was left running)."""
    return lambda marker: _processes_where("cmdline", lambda text: marker.encode() in text)


@pytest.fixture
def processes_named() -> Callable[[str], list[int]]:
    """Host pids whose name (comm, which a process sets with prctl) is this one: a witness from
    outside the sandbox, for runs that may make no socket or pipe to be seen by."""
    return lambda name: _processes_where("comm", lambda text: text.rstrip(b"\n") == name.encode())


def _processes_where(field: str, matches: Callable[[bytes], bool]) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/{field}", "rb") as text:
                if matches(text.read()):
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found
