"""Scoring: from run outcomes to the verdicts, with the chapter's bar.

Pure functions over the report model, so the rules (what invalidates a suite, what counts as a
kill, what passes the bar) are in one place and unit-testable without running anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from math import comb

from grader.report.model import (
    Implementation,
    MutantOutcome,
    MutantResult,
    Tests,
    TestsVerdict,
    ValidityRun,
    Verdict,
)


def tests_not_graded(threshold: float, required_pitfalls: Sequence[str]) -> Tests:
    """The tests' part of a report whose suite could not be run to the end (the sandbox died or
    ran out of time): verdict error, nothing killed; the report's error says why."""
    return Tests(verdict=TestsVerdict.ERROR, score=0.0, threshold=threshold, killed=0, total=0, mutants=(),
                 pitfalls_missed=tuple(required_pitfalls), validity=())


def implementation_verdict(course_outcomes: Sequence[str], probes_agree: bool) -> Verdict:
    """Passes only if every course test passed AND the trusted probes agree with the reference."""
    return Verdict.PASS if probes_agree and all(o == "passed" for o in course_outcomes) else Verdict.FAIL


def invalid_reason(validity: Sequence[ValidityRun]) -> str | None:
    """Why the suite's kills prove nothing, or None: every correct implementation must pass it.
    The first run that did not pass is quoted; the others are counted, so that a student who
    mends that one test knows whether more is wrong (each has a row of its own in the report)."""
    # the reference's first: a student knows it, and the grader's variants are only numbered
    failed = sorted((run for run in validity if run.outcome != "passed"),
                    key=lambda run: not run.implementation.startswith("reference"))
    if not failed:
        return None
    run, others = failed[0], len(failed) - 1
    test = f"test {run.failed_test}" if run.failed_test else "the test run"
    detail = f": {run.message}" if run.message else ""
    outcome = {"error": "ended in an error", "timeout": "timed out"}.get(run.outcome, run.outcome)
    more = (f" (and {others} other run{'s' if others > 1 else ''} on correct implementations did not pass: "
            "see their rows)") if others else ""
    article = "the " if run.implementation.startswith("reference") else ""  # "on variant 1", not "on the variant 1"
    return f"{test} {outcome} on {article}{run.implementation}, a correct implementation{more}{detail}"


@dataclass(frozen=True)
class AloneRun:
    """A mutant's run alone, as the comparison needs it."""

    outcome: MutantOutcome
    seconds: float


def alone_reason(mutants: Sequence[MutantResult], alone: Mapping[str, AloneRun], timeout: float) -> str | None:
    """Why the mutation pass cannot be believed, or None: each mutant also run alone (a fresh
    process that saw no other implementation) must come out as it did among the others. A test
    that decides by what earlier runs left behind, rather than by behaviour, shows up here.

    Clocks are not behaviour: a mutant that timed out among the others (``timeout``) is not
    contradicted by a run alone that passed but took at least half as long, since the two passes'
    budgets differ a little (settle_timeouts then counts it as a survivor); and a kill alone by a
    timeout never counts against the suite. A test that stalls on purpose among the others still
    shows, because alone it passes quickly."""
    together = {m.id: m.outcome for m in mutants}

    def killed_only_together(run_id: str, run: AloneRun) -> bool:
        outcome = together.get(run_id)
        if outcome is None or not outcome.is_killed or run.outcome.is_killed:
            return False
        return not (outcome is MutantOutcome.TIMEOUT and run.seconds >= timeout / 2)

    only_together = sorted(i for i, run in alone.items() if killed_only_together(i, run))
    only_alone = sorted(i for i, run in alone.items() if together.get(i) is MutantOutcome.SURVIVED
                        and run.outcome in (MutantOutcome.KILLED, MutantOutcome.CRASHED))
    parts = []
    if only_together:
        parts.append(f"killed {', '.join(only_together)} only when run after other implementations: run alone, "
                     "in a fresh process, the same tests let them survive")
    if only_alone:
        parts.append(f"killed {', '.join(only_alone)} when run alone but not among the others")
    if not parts:
        return None
    return "; ".join(parts) + (". Tests must judge each implementation by its behaviour alone, not by what "
                               "earlier runs left behind (files, memory, the runner's own state), nor by chance: "
                               "a test that draws random inputs without a seed (np.random.randn with no "
                               "np.random.seed, np.random.default_rng() with none) kills a mutant in one run and "
                               "not in another; give it a seed, as the course tests do")


def settle_timeouts(mutants: Sequence[MutantResult], alone: Mapping[str, AloneRun]) -> tuple[MutantResult, ...]:
    """Each mutant that timed out among the others, as its run alone came out; a survivor if it
    has none.

    The student's code holds the fast zygote's clock: it can stall any run there until it times
    out, and clocks being noisy, a run alone that passes slowly cannot prove that wrong. So a
    timeout among the others is no kill by itself (grading runs some of them alone, up to a limit,
    and that run decides); a failing test among the others is, as far as the runs alone sampled
    agree."""
    def settled(mutant: MutantResult) -> MutantResult:
        run = alone.get(mutant.id)
        if mutant.outcome is not MutantOutcome.TIMEOUT or (run is not None and run.outcome.is_killed):
            return mutant
        return replace(mutant, outcome=MutantOutcome.SURVIVED, killed_by=None)

    return tuple(settled(mutant) for mutant in mutants)


def kills_needed(threshold: float, total: int) -> int:
    """The fewest kills of ``total`` whose score passes ``threshold``, as grade_tests compares it."""
    return next((k for k in range(total + 1) if total and k / total >= threshold), total + 1)


def kills_to_recheck(margin: int, unchecked: int, pool: int, pool_checked: int, *, least: int, most: int,
                     miss_odds: float) -> int:
    """How many of the fast pass's ``unchecked`` kills (none yet run alone) to run alone after it.

    A suite ``margin`` kills above the bar passes by faking only if it faked at least ``margin``
    kills, and none of them was among the ``pool_checked`` of ``pool`` pool mutants run alone
    before the pass nor is among those drawn now. Since the fast zygote is the student's process
    once their conftest ran, it can fake only where no correct implementation is hit (red team,
    round 26: an honest 0.77 suite faking 7 kills passed 7 grades of 10 with a fixed draw of 6).
    So the draw grows until those odds are at most ``miss_odds``, from ``least`` up to ``most``:
    a suite far above the bar (``margin`` in the tens) is drawn ``least``, one just above it
    nearly every kill."""
    ceiling = min(most, unchecked)
    drawn = min(least, ceiling)
    if margin <= 0:  # below the bar: faking more would only be caught more
        return drawn
    missed_before = comb(max(pool - margin, 0), pool_checked) / comb(pool, pool_checked) if pool else 1.0
    while drawn < ceiling and missed_before * comb(max(unchecked - margin, 0), drawn) / comb(unchecked, drawn) > \
            miss_odds:
        drawn += 1
    return drawn


def grade_tests(
    *,
    validity: Sequence[ValidityRun],
    mutants: Sequence[MutantResult],
    threshold: float,
    required_pitfalls: Sequence[str],
    alone: Mapping[str, AloneRun],
    timeout: float,
) -> Tests:
    """The mutation grade: killed / total, and the bar (threshold and every required pitfall)."""
    reason = invalid_reason(validity) or alone_reason(mutants, alone, timeout)
    mutants = settle_timeouts(mutants, alone)
    killed = sum(1 for m in mutants if m.outcome.is_killed)
    total = len(mutants)
    score = killed / total if total else 0.0
    survivors = {m.id for m in mutants if not m.outcome.is_killed}
    missed = tuple(p for p in required_pitfalls if p in survivors or p not in {m.id for m in mutants})
    if reason is not None:
        verdict = TestsVerdict.INVALID
    elif score >= threshold and not missed:
        verdict = TestsVerdict.PASS
    else:
        verdict = TestsVerdict.FAIL
    return Tests(
        verdict=verdict,
        score=round(score, 4),
        threshold=threshold,
        killed=killed,
        total=total,
        mutants=tuple(mutants),
        pitfalls_missed=missed,
        validity=tuple(validity),
        invalid_reason=reason,
    )


def overall_verdict(implementation: Implementation, tests: Tests | None) -> Verdict:
    """Pass iff the implementation passes and, when tests were submitted, they pass the bar."""
    if implementation.verdict is not Verdict.PASS:
        return implementation.verdict
    if tests is None or tests.verdict is TestsVerdict.PASS:
        return Verdict.PASS
    return Verdict.ERROR if tests.verdict is TestsVerdict.ERROR else Verdict.FAIL
