"""How fast the warm runner grades by mutation, next to the usual ways of doing it, in one run.

    .venv/bin/python bench/mutation_speed.py [--quick] [--sample 40] [--grades 5] [--workers 2]

Workload, the same for every method: the reference luong.py, the instructor's oracle suite
(reference/oracle/L4.3, a student-style suite) and the mutants of the catalogue the grader loads
(the pitfall mutants and the frozen pool, mutants/L4.3). What each number means:

runner        The warm runner (grader/runner, bwrap sandbox, 2 workers): wall time of
              ``WarmRunner.mutation_pass`` over every mutant, which also runs the reference twice
              and each correct variant; mutants/s counts mutants only. Sandbox and zygote start-up
              is shown apart (it is paid once per grade, not per mutant).
runner/all    The same runner on every mutant mutmut's operators make (grader.pool.generate:
              mutmut's own mutant set, survivors and equivalents included): the like-for-like
              workload for the mutmut comparison, since the pool keeps only killable mutants,
              which stop at their first failing test. Skipped by --quick.
pytest/mutant The usual course-grader approach: each mutant written as tinyllm/seq2seq/luong.py
              into a fresh package tree (the rest symlinked to the substrate) and
              ``python -m pytest -x -q -p no:cacheprovider`` on the suite in a new process,
              2 at a time. Unfair in its favour: no sandbox at all. Measured on a seeded random
              sample of the mutants (the sample size is printed), so its rate carries sampling
              noise; the runner's kill verdicts on the same sample are compared with its own.
mutmut        ``mutmut run --max-children 2`` (mutmut 3.8.1) in a throwaway project holding the
              substrate, reference luong.py and the suite; mutants/s = the mutants it tested
              (from ``mutmut results``) over the wall time of the whole run, which includes its
              own generation, stats, clean and forced-fail phases (its own "mutations/second",
              the mutant phase alone, is printed beside it). Fair: same reference, suite and
              cores. Unfair both ways: mutmut tests its own mutant set (more mutants, survivors
              included: they run every covering test), runs only the tests that cover the mutated
              function (our runner runs the suite in kill-count order), and runs unsandboxed.
empty         The runner's own cost per run: as many runs as the runner row made, in the same
              zygote right after its pass, of a module that fails at import, so that no test runs
              (fork, the child's fences, the install, its exit, the zygote's and this driver's
              bookkeeping). A runner that forks a child per run cannot get below limit + empty.
limit         The physical limit: the in-process time of the tests up to the first failure,
              summed over every run of the runner's pass, divided by the workers. No method that
              runs these tests in full on these cores can beat it; the gap to it is the runner's
              own overhead (fork, install, pipe, scheduling). The tests' time is their CPU time
              (SuiteRun.test_cpu_seconds): their wall time (SuiteRun.test_seconds, the measure
              before 2026-11-29, printed beside it) also counts the moments a test waits for a core
              the zygote or the other worker holds, which flatters the ratio the more the runner
              crowds the cores. Both still count the copy-on-write faults a forked child pays and
              a single process running every test would not, so the limit is a generous one.
full grade    ``python -m grader check examples/L4.3/correct`` (course tests, probes, validity,
              the whole pool, and the runs alone that check its kills in a second sandbox),
              median wall of N fresh processes, bwrap; if the bundled example is missing,
              ``grader grade`` of the first correct variant with the oracle suite. Printed with
              the CPU the machine spent during each (/proc/stat) and the report's phases:
              that CPU spread over every core is the least a grade doing the same work takes.

Targets (PASS/MISS is printed, never asserted: the machine is shared and noisy): runner ÷
pytest/mutant >= 10, runner ÷ mutmut >= 2, runner wall ÷ limit <= 1.5, full grade <= 3 s. The
script exits non-zero only when a method failed to run (2), never because a target was missed.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from speed_baselines import (
    GradeTiming,
    MethodFailed,
    Timing,
    busy_cpu_seconds,
    full_grade_command,
    full_grades,
    mutmut_run,
    pytest_per_mutant,
)

from grader.chapter import Chapter, load_chapter
from grader.mutants import CatalogueError, load_catalogue
from grader.runner.driver import WarmRunner
from grader.runner.results import RunnerError, SuitePass, SuiteRun
from grader.sandbox import BACKEND_NAMES, SandboxUnavailable, get_backend

SEED = 20260
EMPTY_MODULE = b'raise ImportError("no module: the benchmark times a run without its tests")\n'
QUICK_SAMPLE, FULL_SAMPLE = 12, 40
QUICK_GRADES, FULL_GRADES = 2, 5
TARGET_VS_PYTEST, TARGET_VS_MUTMUT, TARGET_VS_LIMIT, TARGET_GRADE_SECONDS = 10.0, 2.0, 1.5, 3.0
T = TypeVar("T")


@dataclass(frozen=True)
class RunnerResult:
    timing: Timing  # the mutation pass: mutants only in the count, every run in the wall time
    suite_pass: SuitePass
    startup_seconds: float  # sandbox and zygote, once per grade
    workers: int
    busy_cpu_seconds: float | None  # CPU time the whole machine spent during the pass (/proc/stat)
    empty: Timing  # as many runs again, of a module that fails at import: the runner's own cost
    empty_runs: dict[str, SuiteRun]

    @property
    def limit(self) -> Timing:
        """The physical limit: every run's in-process test time (CPU), perfectly spread over the workers."""
        tests = sum(run.test_cpu_seconds for run in self.suite_pass.runs.values())
        return Timing(self.timing.mutants, self.timing.killed, tests / self.workers)

    @property
    def limit_by_wall(self) -> float:
        """The limit as measured before 2026-11-29: the tests' wall time (waits for a core included)."""
        return sum(run.test_seconds for run in self.suite_pass.runs.values()) / self.workers


def runner_pass(chapter: Chapter, backend: str, workers: int, reference: bytes,
                mutants: dict[str, bytes], variants: dict[str, bytes]) -> RunnerResult:
    """One fresh warm runner, one mutation pass, timed apart from the start-up."""
    started = time.monotonic()
    with WarmRunner(chapter=chapter, backend=get_backend(backend), student_tests=chapter.oracle_suite,
                    workers=workers, seed=SEED) as runner:
        startup = time.monotonic() - started
        if runner.workers != workers:
            raise MethodFailed(f"the runner fell back to {runner.workers} worker(s) (no Landlock on this kernel)")
        busy_before = busy_cpu_seconds()
        began = time.monotonic()
        suite_pass = runner.mutation_pass(reference=reference, variants=variants, mutants=mutants)
        wall = time.monotonic() - began
        busy = None if busy_before is None else busy_cpu_seconds() - busy_before
        empty, empty_runs = runs_without_tests(runner, len(suite_pass.runs), suite_pass.timeout)
    if not suite_pass.valid:
        raise MethodFailed("the oracle suite does not pass the reference and variants in the runner")
    return RunnerResult(Timing(len(mutants), len(suite_pass.killed), wall), suite_pass, startup, workers, busy, empty,
                        empty_runs)


def runs_without_tests(runner: WarmRunner, count: int, timeout: float) -> tuple[Timing, dict[str, SuiteRun]]:
    """``count`` runs through ``runner`` of a module that fails at import: everything a run costs
    but its tests."""
    began = time.monotonic()
    runs = runner.suite_runs([(f"empty{index}", EMPTY_MODULE) for index in range(count)], timeout=timeout)
    wall = time.monotonic() - began
    if not all(run.killed for run in runs.values()):
        raise MethodFailed("a module that fails at import survived the oracle suite")
    return Timing(count, count, wall), runs


def generated_mutants(reference: bytes) -> dict[str, bytes]:
    """Every mutant mutmut's operators make of the reference, as the pool generator enumerates them."""
    try:
        from grader.pool import PoolError, generate  # generate needs mutmut and libcst (requirements-dev.txt)

        return {candidate.id: candidate.source.encode() for candidate in generate(reference.decode())}
    except (ImportError, PoolError) as exc:
        raise MethodFailed(f"cannot enumerate mutmut's mutants: {exc}") from exc


def _median_and_total(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:8.1f} {sum(values):7.2f}"


def print_breakdown(ours: RunnerResult) -> None:
    """Where the runner's time goes, for whoever tunes it: inside the child, and between children.

    "other" = child wall - tests - install: fork, the child's fences (fds, Landlock, rlimit),
    exit, reap and the zygote's answer. pytest's per-item protocol (fixture setup and teardown)
    counts as "tests", so the limit below includes it. "child cpu" and "faults" come from the
    kernel's accounting of each child (wait4): page faults are mostly copy-on-write copies of the
    zygote's heap, and unlike times they do not change with the machine's load. The "empty" row
    is the runs of the table's empty row, which run no test.
    """
    runs = list(ours.suite_pass.runs.values())
    groups: dict[str, list[SuiteRun]] = {"all runs": runs, "killed": [r for r in runs if r.killed],
                                         "passed": [r for r in runs if not r.killed],
                                         "empty": list(ours.empty_runs.values())}
    print("\nrunner breakdown (each column: median ms per run, total s; faults: median per run):")
    print(f"  {'runs':<9}{'n':>5}  {'child wall':>16}  {'tests':>16}  {'install':>16}  {'other':>16}  "
          f"{'child cpu':>16}  {'faults':>6}")
    for label, group in groups.items():
        if not group:
            continue
        installs = [r.install_seconds or 0.0 for r in group]
        other = [r.seconds - r.test_seconds - (r.install_seconds or 0.0) for r in group]
        print(f"  {label:<9}{len(group):>5}  {_median_and_total([r.seconds for r in group])}  "
              f"{_median_and_total([r.test_seconds for r in group])}  {_median_and_total(installs)}  "
              f"{_median_and_total(other)}  {_median_and_total([r.cpu_seconds for r in group])}  "
              f"{statistics.median(r.page_faults for r in group):6.0f}")
    busy = sum(r.seconds for r in runs) / ours.workers
    idle = ours.timing.wall_seconds - busy
    print(f"  pass wall {ours.timing.wall_seconds:.2f} s = children's wall / workers {busy:.2f} s + "
          f"{idle:.2f} s with a worker idle (driver and pipe between children, "
          f"{idle * ours.workers / len(runs) * 1e3:.1f} ms per run)")
    if ours.busy_cpu_seconds is not None:
        cores = os.cpu_count() or 1
        children = sum(r.cpu_seconds for r in runs)
        tests = sum(r.test_seconds for r in runs)
        print(f"  pass CPU {ours.busy_cpu_seconds:.2f} s of {cores * ours.timing.wall_seconds:.2f} s the {cores} cores "
              f"had ({ours.busy_cpu_seconds / (cores * ours.timing.wall_seconds):.0%} busy): children {children:.2f} s "
              f"(their tests' wall {tests:.2f} s), everything else {ours.busy_cpu_seconds - children:.2f} s "
              f"(zygote forks and bookkeeping, this driver, the kernel)")
    killers: dict[str, list[float]] = {}
    for run in runs:
        if run.killed and run.node is not None:
            killers.setdefault(run.node, []).append(run.test_seconds)
    print("  first failing tests (kills, median ms of tests up to and including it):")
    for node, seconds in sorted(killers.items(), key=lambda item: -len(item[1]))[:6]:
        print(f"    {len(seconds):4d} {statistics.median(seconds) * 1e3:8.1f}  {node}")
    slowest = sorted(runs, key=lambda r: -r.seconds)[:3]
    print("  slowest runs: " + ", ".join(f"{r.id} {r.seconds * 1e3:.0f} ms ({r.outcome.value})" for r in slowest))


def print_full_grades(command: list[str], grades: list[GradeTiming]) -> None:
    """The full grades' wall times, the CPU they kept busy, and their phases (the report's
    ``timing``, median of each): which phases a faster grade must shorten, and whether the cores
    sat idle in it (a phase that runs one child at a time, for isolation) or were busy (then only
    less work helps)."""
    walls = [grade.wall_seconds for grade in grades]
    print(f"\nfull grade ({' '.join(command[2:])}): median {statistics.median(walls):.2f} s of "
          f"{', '.join(f'{seconds:.2f}' for seconds in walls)}")
    busy = [grade.busy_cpu_seconds for grade in grades if grade.busy_cpu_seconds is not None]
    if busy:
        cores = os.cpu_count() or 1
        share = statistics.median(b / (cores * w) for b, w in zip(busy, walls))
        print(f"  machine CPU during a grade: median {statistics.median(busy):.2f} s, {share:.0%} of the {cores} cores")
    phases = [name for name in grades[0].phases if name != "total"]
    print("  phases (median s; judge runs beside the others): " + ", ".join(
        f"{name} {statistics.median(grade.phases.get(name, 0.0) for grade in grades):.2f}" for name in phases))


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def print_table(rows: list[tuple[str, Timing | None, str]]) -> None:
    print(f"\n{'method':<14}{'mutants':>8}{'killed':>8}{'wall s':>9}{'mutants/s':>11}  note")
    for label, timing, note in rows:
        if timing is None:
            print(f"{label:<14}{'-':>8}{'-':>8}{'-':>9}{'-':>11}  {note}")
            continue
        print(f"{label:<14}{timing.mutants:>8}{timing.killed:>8}{timing.wall_seconds:>9.2f}{timing.rate:>11.1f}  "
              f"{'; '.join(part for part in (note, timing.note) if part)}")


def measure(label: str, failures: list[str], method: Callable[[], T]) -> T | None:
    """Run one method; a failure is recorded (it sets the exit code) and the other methods still run."""
    print(f"measuring {label} ...", file=sys.stderr, flush=True)
    try:
        return method()
    except (MethodFailed, RunnerError, SandboxUnavailable, OSError) as exc:
        failures.append(f"{label}: {exc}")
        return None


def sample_note(sample: dict[str, bytes], ours: RunnerResult | None, theirs: Timing | None) -> str:
    """The sample size and, as a check that both ran the same thing, both methods' kills on it."""
    note = f"sample of {len(sample)}"
    if ours is None or theirs is None:
        return note
    runner_killed = sum(ours.suite_pass.runs[name].killed for name in sample)
    return f"{note}; it killed {theirs.killed}, the runner {runner_killed} of them"


def print_ratio(label: str, value: float, target: str, ok: bool | None) -> None:
    print(f"  {label:<22}{value:7.2f}  {target:<18}{'' if ok is None else verdict(ok)}")


def print_ratios(ours: RunnerResult | None, everything: RunnerResult | None, per_mutant: Timing | None,
                 mutmut: Timing | None, grades: list[GradeTiming] | None) -> None:
    print("\nratios:")
    if ours and per_mutant:
        ratio = ours.timing.rate / per_mutant.rate
        print_ratio("runner ÷ pytest/mutant", ratio, f"x (target >= {TARGET_VS_PYTEST:g})",
                    ratio >= TARGET_VS_PYTEST)
    if ours and mutmut:
        ratio = ours.timing.rate / mutmut.rate
        print_ratio("runner ÷ mutmut", ratio, f"x (target >= {TARGET_VS_MUTMUT:g})", ratio >= TARGET_VS_MUTMUT)
    if everything and mutmut:
        print_ratio("runner/all ÷ mutmut", everything.timing.rate / mutmut.rate, "x (same mutants)", None)
    if ours:
        ratio = ours.timing.wall_seconds / ours.limit.wall_seconds
        print_ratio("runner wall ÷ limit", ratio, f"(target <= {TARGET_VS_LIMIT:g})", ratio <= TARGET_VS_LIMIT)
        print_ratio("  by the tests' wall", ours.timing.wall_seconds / ours.limit_by_wall, "(the former measure)", None)
        floor = (ours.limit.wall_seconds + ours.empty.wall_seconds) / ours.limit.wall_seconds
        print_ratio("  floor ÷ limit", floor, "(floor = limit + empty: no run costs less than empty)", None)
    if grades:
        median = statistics.median(grade.wall_seconds for grade in grades)
        print_ratio("full grade median", median, f"s (target <= {TARGET_GRADE_SECONDS:g} s)",
                    median <= TARGET_GRADE_SECONDS)
        busy = [grade.busy_cpu_seconds for grade in grades if grade.busy_cpu_seconds is not None]
        if busy:
            print_ratio("  CPU ÷ cores", statistics.median(busy) / (os.cpu_count() or 1),
                        "s (a grade's CPU spread over every core: no grade of the same work is faster)", None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small sample, 2 grades, no runner/all row")
    parser.add_argument("--sample", type=int,
                        help=f"mutants for pytest/mutant (default {FULL_SAMPLE}, --quick {QUICK_SAMPLE})")
    parser.add_argument("--grades", type=int,
                        help=f"full grades to time (default {FULL_GRADES}, --quick {QUICK_GRADES})")
    parser.add_argument("--workers", type=int, default=2, help="workers for every method (default 2)")
    parser.add_argument("--backend", default="bwrap", choices=BACKEND_NAMES,
                        help="sandbox backend of the runner and the grades (default bwrap)")
    options = parser.parse_args()
    sample_size = options.sample or (QUICK_SAMPLE if options.quick else FULL_SAMPLE)
    grades = options.grades or (QUICK_GRADES if options.quick else FULL_GRADES)
    workers = options.workers
    if min(sample_size, grades, workers) < 1:
        parser.error("--sample, --grades and --workers must be at least 1")

    chapter = load_chapter()
    try:
        catalogue = load_catalogue(chapter)
    except CatalogueError as exc:
        print(f"cannot benchmark: {exc}", file=sys.stderr)
        return 2
    reference = catalogue.reference
    mutants = {mutant.id: mutant.source for mutant in catalogue.mutants}
    sample = dict(random.Random(SEED).sample(sorted(mutants.items()), min(sample_size, len(mutants))))
    variants = {f"variant{number}": source for number, source in enumerate(catalogue.variants, start=1)}
    command = full_grade_command(chapter, options.backend)
    print(f"chapter {chapter.id}, pool {catalogue.pool.version}: {len(mutants)} mutants "
          f"({len(catalogue.pitfalls)} pitfalls), {len(variants)} variant(s); {workers} workers; {options.backend}; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before")

    failures: list[str] = []
    ours = measure("runner", failures, lambda: runner_pass(chapter, options.backend, workers, reference, mutants,
                                                           variants))
    everything = None if options.quick else measure("runner/all", failures, lambda: runner_pass(
        chapter, options.backend, workers, reference, generated_mutants(reference), {}))
    per_mutant = measure("pytest/mutant", failures, lambda: pytest_per_mutant(
        chapter, reference=reference, mutants=sample, workers=workers))
    mutmut = measure("mutmut", failures, lambda: mutmut_run(chapter, reference=reference, max_children=workers))
    full = measure("full grade", failures, lambda: full_grades(command, repeats=grades))

    print_table([
        ("runner", ours.timing if ours else None,
         f"+ {ours.startup_seconds:.2f} s sandbox and zygote start-up" if ours else ""),
        ("runner/all", everything.timing if everything else None,
         "skipped (--quick)" if options.quick else "mutmut's mutant set"),
        ("pytest/mutant", per_mutant, sample_note(sample, ours, per_mutant)),
        ("mutmut", mutmut, ""),
        ("empty", ours.empty if ours else None, "as many runs, none running a test: the runner's own cost"),
        ("limit", ours.limit if ours else None, "sum of the tests' CPU time / workers"),
    ])
    if full:
        print_full_grades(command, full)
    load = os.getloadavg()[0]
    crowded = ": other work competed for the cores, times are inflated" if load > (os.cpu_count() or 1) else ""
    print(f"(load average {load:.1f} after{crowded})")
    print_ratios(ours, everything, per_mutant, mutmut, full)
    if ours:
        print_breakdown(ours)
    for failure in failures:
        print(f"\nFAILED {failure}", file=sys.stderr)
    return 2 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
