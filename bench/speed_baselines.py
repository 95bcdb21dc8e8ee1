"""The methods bench/mutation_speed.py compares the warm runner with, each timed as a user would run it.

Every method here runs unsandboxed in fresh processes of this venv's Python, on a throwaway
project under a temporary folder (never in the repository: ``mutmut run`` writes a ``mutants/``
folder into its working directory). Each returns a ``Timing``; a method that cannot run at all
(the reference fails its own suite, a tool crashes) raises ``MethodFailed`` with the tool's
output, so the benchmark can tell "slow" from "broken".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from grader.chapter import REPO_ROOT, Chapter

PYTEST_ARGS = ("-x", "-q", "-p", "no:cacheprovider")  # what a course grader typically runs per mutant
PYTEST_TIMEOUT_SECONDS = 120.0  # per mutant; only a hung mutant gets near it
MUTMUT_TIMEOUT_SECONDS = 1800.0  # the whole `mutmut run`
GRADE_TIMEOUT_SECONDS = 600.0  # one full grade
SUITE_FOLDER = "tests"  # the oracle suite's folder inside each throwaway project
BYTECODE_CACHE = "__pycache__"
MUTMUT_UNTESTED = {"not checked", "no tests", "skipped"}  # `mutmut results` statuses of mutants it never ran
MUTMUT_RATE = re.compile(r"([\d.]+) mutations/second")
# mutmut 3.8.1 reads this. It copies source_paths into its mutants/ folder and puts that folder
# first on sys.path, so the source path is the whole substrate package (luong.py imports its
# siblings), and only_mutate keeps every mutation inside luong.py.
MUTMUT_CONFIG = """\
[tool.mutmut]
source_paths = ["{package}"]
only_mutate = ["{module_file}"]
pytest_add_cli_args_test_selection = ["{tests}"]
"""


class MethodFailed(Exception):
    """A method could not produce a measurement (not: it was slow)."""


@dataclass(frozen=True)
class Timing:
    """One method's measurement: how many mutants it tested in how much wall time."""

    mutants: int  # mutants actually tested (for a sample: the sample size)
    killed: int
    wall_seconds: float
    note: str = ""

    @property
    def rate(self) -> float:
        return self.mutants / self.wall_seconds if self.wall_seconds > 0 else float("inf")


def _tail(text: str, limit: int = 3000) -> str:
    return text[-limit:].strip()


def _ignore_bytecode(_folder: str, names: list[str]) -> list[str]:
    return [name for name in names if name == BYTECODE_CACHE]


def _package_tree(chapter: Chapter, destination: Path, module_source: bytes) -> None:
    """The substrate under ``destination`` with ``module_source`` as its module, e.g. tinyllm/seq2seq/luong.py.

    Only the packages on the module's path are real folders; everything else is a symlink into
    the substrate, so its bytecode caches stay warm across mutants as in a reused checkout, while
    each mutant's own file gets its own cache (pyc files are validated by mtime and size, which
    two same-size mutants written in the same second would share).
    """
    *packages, leaf = chapter.student.module.split(".")
    source, target = chapter.substrate.parent, destination
    for depth, package in enumerate(packages):
        source, target = source / package, target / package
        target.mkdir()
        own = packages[depth + 1] if depth + 1 < len(packages) else f"{leaf}.py"  # never a link to write through
        for entry in source.iterdir():
            if entry.name not in (own, BYTECODE_CACHE):
                (target / entry.name).symlink_to(entry)
    (target / f"{leaf}.py").write_bytes(module_source)


def _pytest_once(chapter: Chapter, suite: Path, work: Path, name: str, source: bytes) -> tuple[bool, float]:
    """One fresh ``python -m pytest`` on one module: (killed, wall seconds of the process)."""
    project = work / name
    project.mkdir()
    _package_tree(chapter, project, source)
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", *PYTEST_ARGS, str(suite)], cwd=project,
                              env=_environment(PYTHONPATH=str(project)), capture_output=True, text=True,
                              timeout=PYTEST_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return True, time.monotonic() - started  # a hang is a kill, as in every mutation tool
    if done.returncode not in (0, 1, 2):  # 2: interrupted, e.g. the module does not import
        raise MethodFailed(f"pytest on {name} exited {done.returncode}:\n{_tail(done.stdout + done.stderr)}")
    return done.returncode != 0, time.monotonic() - started


def _environment(**extra: str) -> dict[str, str]:
    """numpy single-threaded, as inside the sandbox: every method gets one core per worker."""
    return {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", **extra}


def pytest_per_mutant(chapter: Chapter, *, reference: bytes, mutants: Mapping[str, bytes], workers: int) -> Timing:
    """Each mutant in its own ``python -m pytest -x`` process, ``workers`` at a time.

    The reference runs first, alone and untimed, to prove the setup (it must pass) and to warm
    the bytecode caches the mutants then share.
    """
    with tempfile.TemporaryDirectory(prefix="bench-pytest-") as scratch:
        work = Path(scratch)
        suite = work / SUITE_FOLDER
        shutil.copytree(chapter.oracle_suite, suite, ignore=_ignore_bytecode)
        if _pytest_once(chapter, suite, work, "reference", reference)[0]:
            raise MethodFailed("the oracle suite fails on the reference in the pytest-per-mutant setup")
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            runs = list(pool.map(lambda item: _pytest_once(chapter, suite, work, *item), mutants.items()))
        wall = time.monotonic() - started
    per_process = statistics.median(seconds for _, seconds in runs)
    return Timing(len(mutants), sum(killed for killed, _ in runs), wall,
                  f"median {per_process:.2f} s per pytest process")


def _mutmut_project(chapter: Chapter, root: Path, reference: bytes) -> None:
    package = chapter.substrate.name
    module_file = Path(*chapter.student.module.split(".")).with_suffix(".py")
    shutil.copytree(chapter.substrate, root / package, ignore=_ignore_bytecode)
    (root / module_file).write_bytes(reference)
    shutil.copytree(chapter.oracle_suite, root / SUITE_FOLDER, ignore=_ignore_bytecode)
    (root / "pyproject.toml").write_text(MUTMUT_CONFIG.format(package=package, module_file=module_file.as_posix(),
                                                              tests=SUITE_FOLDER))


def _mutmut(root: Path, *arguments: str, timeout: float) -> str:
    executable = Path(sys.executable).with_name("mutmut")
    if not executable.is_file():
        raise MethodFailed(f"mutmut is not installed beside {sys.executable} (see requirements-dev.txt)")
    try:
        done = subprocess.run([str(executable), *arguments], cwd=root, env=_environment(), capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise MethodFailed(f"mutmut {' '.join(arguments)} took more than {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise MethodFailed(f"mutmut {' '.join(arguments)} exited {done.returncode}:\n"
                           f"{_tail(done.stdout + done.stderr)}")
    return done.stdout


def mutmut_run(chapter: Chapter, *, reference: bytes, max_children: int) -> Timing:
    """The whole ``mutmut run`` (generation, stats, clean and forced-fail runs, mutants), timed.

    The count of mutants tested and killed is read back from mutmut's own ``mutmut results``,
    not from this script's idea of what mutmut should have done.
    """
    with tempfile.TemporaryDirectory(prefix="bench-mutmut-") as scratch:
        root = Path(scratch)
        _mutmut_project(chapter, root, reference)
        started = time.monotonic()
        output = _mutmut(root, "run", "--max-children", str(max_children), timeout=MUTMUT_TIMEOUT_SECONDS)
        wall = time.monotonic() - started
        statuses = Counter(line.rsplit(": ", 1)[-1].strip()
                           for line in _mutmut(root, "results", "--all", "true", timeout=60.0).splitlines()
                           if ": " in line)
    tested = sum(count for status, count in statuses.items() if status not in MUTMUT_UNTESTED)
    if not tested:
        raise MethodFailed(f"mutmut tested no mutants (its results: {dict(statuses)})")
    own_rate = MUTMUT_RATE.findall(output)
    note = f"its own rate, mutant phase only: {own_rate[-1]}/s" if own_rate else ""
    return Timing(tested, statuses["killed"], wall, note)


def full_grade_command(chapter: Chapter, backend: str) -> list[str]:
    """``grader check`` of the bundled correct example, or ``grader grade`` of a variant with the oracle suite."""
    example = REPO_ROOT / "examples" / chapter.id / "correct"
    command = [sys.executable, "-m", "grader"]
    if (example / chapter.student.impl).is_file():
        return [*command, "check", str(example), "--chapter", chapter.id, "--backend", backend]
    return [*command, "grade", "--impl", str(chapter.variants[0]), "--tests", str(chapter.oracle_suite),
            "--chapter", chapter.id, "--backend", backend]


@dataclass(frozen=True)
class GradeTiming:
    """One full grade: its wall time, the CPU the whole machine spent meanwhile, and the
    report's own timing of its phases (``timing`` of the JSON report)."""

    wall_seconds: float
    busy_cpu_seconds: float | None  # None where /proc/stat is missing
    phases: dict[str, float]


def full_grades(command: list[str], *, repeats: int) -> list[GradeTiming]:
    """``repeats`` full grades, each in a fresh process as a student runs it, reporting in JSON.

    Exit 0 (pass) and 1 (fail) are both finished grades; 2 (could not grade) or a crash is not.
    """
    grades = []
    for _ in range(repeats):
        busy_before = busy_cpu_seconds()
        started = time.monotonic()
        try:
            done = subprocess.run([*command, "--format", "json"], cwd=REPO_ROOT, capture_output=True, text=True,
                                  timeout=GRADE_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired as exc:
            raise MethodFailed(f"a full grade took more than {GRADE_TIMEOUT_SECONDS:.0f} s") from exc
        wall = time.monotonic() - started
        busy = None if busy_before is None else busy_cpu_seconds() - busy_before
        if done.returncode not in (0, 1):
            raise MethodFailed(f"{' '.join(command[1:])} exited {done.returncode}:\n{_tail(done.stdout + done.stderr)}")
        grades.append(GradeTiming(wall, busy, json.loads(done.stdout)["timing"]))
    return grades


def busy_cpu_seconds() -> float | None:
    """CPU time every core has spent not idle since boot (all processes, kernel included), or
    None where /proc/stat is missing."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            ticks = [int(field) for field in stat.readline().split()[1:]]
    except OSError:
        return None
    idle = ticks[3] + ticks[4]  # idle and iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")  # guest time is already in user
