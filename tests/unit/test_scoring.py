"""The grading rules: what invalidates a suite, what counts as a kill, what passes the bar."""

from __future__ import annotations

import pytest

from grader.report.model import Implementation, MutantOutcome, MutantResult, TestsVerdict, ValidityRun, Verdict
from grader.scoring import AloneRun, grade_tests, implementation_verdict, overall_verdict

REQUIRED = ("s01", "s02")
VALID = (ValidityRun("reference", "passed"), ValidityRun("variant 1", "passed"))


def mutants(pitfalls_killed=("s01", "s02"), pool_killed=8, pool_total=10):
    rows = [MutantResult(p, True, MutantOutcome.KILLED if p in pitfalls_killed else MutantOutcome.SURVIVED,
                         "t" if p in pitfalls_killed else None) for p in REQUIRED]
    rows += [MutantResult(f"m{i}", False, MutantOutcome.TIMEOUT if i < pool_killed else MutantOutcome.SURVIVED)
             for i in range(pool_total)]
    return tuple(rows)


TIMEOUT = 1.0  # the fast pass's per-run timeout
KILLED, SURVIVED, TIMED_OUT = MutantOutcome.KILLED, MutantOutcome.SURVIVED, MutantOutcome.TIMEOUT


def grade(validity=VALID, rows=None, threshold=0.8, alone=None, everyone_alone=True):
    """``alone``: {id: outcome or (outcome, seconds)} of runs alone; every other mutant's run alone
    agrees with the pass, unless not ``everyone_alone``."""
    rows = rows if rows is not None else mutants()
    alone = ({row.id: row.outcome for row in rows} if everyone_alone else {}) | (alone or {})
    runs = {i: AloneRun(*(run if isinstance(run, tuple) else (run, 0.01))) for i, run in alone.items()}
    return grade_tests(validity=validity, mutants=rows, threshold=threshold, required_pitfalls=REQUIRED,
                       alone=runs, timeout=TIMEOUT)


def test_a_suite_over_the_bar_with_every_pitfall_passes():
    result = grade()
    assert (result.verdict, result.killed, result.total, result.score) == (TestsVerdict.PASS, 10, 12, 0.8333)
    assert result.pitfalls_missed == ()


def test_timeouts_and_crashes_count_as_kills():
    rows = (MutantResult("s01", True, MutantOutcome.CRASHED), MutantResult("s02", True, MutantOutcome.TIMEOUT))
    assert grade(rows=rows).verdict is TestsVerdict.PASS


def test_a_missed_pitfall_fails_even_over_the_threshold():
    result = grade(rows=mutants(pitfalls_killed=("s01",), pool_killed=10))
    assert result.verdict is TestsVerdict.FAIL
    assert result.pitfalls_missed == ("s02",)


def test_under_the_threshold_fails():
    assert grade(rows=mutants(pool_killed=7)).verdict is TestsVerdict.FAIL  # 9/12 = 0.75


def test_a_required_pitfall_that_was_not_run_counts_as_missed():
    rows = tuple(m for m in mutants() if m.id != "s02")
    assert grade(rows=rows).pitfalls_missed == ("s02",)


@pytest.mark.parametrize(("outcome", "said"), [("failed", "failed"), ("error", "ended in an error"),
                                               ("timeout", "timed out"), ("crashed", "crashed")])
def test_a_suite_that_does_not_pass_on_a_correct_implementation_is_invalid(outcome, said):
    validity = (ValidityRun("reference", "passed"), ValidityRun("variant 1", outcome, "test_x", "boom"))
    result = grade(validity=validity)
    assert result.verdict is TestsVerdict.INVALID
    assert result.invalid_reason == f"test test_x {said} on variant 1, a correct implementation: boom"


def test_the_invalid_reason_quotes_the_reference_s_row_first():
    """A student knows the reference; the grader's variants are only numbered (red team, round 28)."""
    validity = (ValidityRun("variant 1", "failed", "test_x", "order"),
                ValidityRun("reference (run again last)", "failed", "test_x", "order"))
    assert grade(validity=validity).invalid_reason.startswith("test test_x failed on the reference (run again last), ")


def test_the_invalid_reason_counts_the_other_correct_implementations_failed():
    validity = (ValidityRun("reference", "failed", "test_x", "boom"), ValidityRun("variant 1", "passed"),
                ValidityRun("variant 2", "failed", "test_y", "bang"), ValidityRun("variant 3", "error", "test_x"))
    assert grade(validity=validity).invalid_reason == (
        "test test_x failed on the reference, a correct implementation (and 2 other runs on correct "
        "implementations did not pass: see their rows): boom")
    assert "(and 1 other run on" in grade(validity=validity[:3]).invalid_reason


def test_a_kill_that_does_not_happen_alone_makes_the_suite_invalid():
    result = grade(alone={"s01": KILLED, "s02": SURVIVED, "m1": TIMED_OUT})
    assert result.verdict is TestsVerdict.INVALID
    assert "killed s02 only when run after other implementations" in result.invalid_reason
    assert "m1" not in result.invalid_reason


def test_a_survivor_killed_alone_is_also_a_disagreement():
    result = grade(alone={"m9": KILLED})  # m9 survived the pass (pool_killed=8)
    assert result.verdict is TestsVerdict.INVALID
    assert "killed m9 when run alone but not among the others" in result.invalid_reason
    # an honest suite drawing its inputs without a seed got this for a kill that came and went, and
    # was told only of state left behind by earlier runs (red team, round 24)
    assert "random inputs without a seed" in result.invalid_reason


def test_agreeing_runs_alone_change_nothing():
    assert grade(alone={"s01": KILLED, "m9": SURVIVED}).verdict is TestsVerdict.PASS


def test_a_timeout_that_passes_alone_slowly_is_a_survivor_and_no_disagreement():
    """m0..m7 timed out in the pass (mutants()): a slow mutant is slow alone too, whichever side
    of the clock it lands, so that is no evidence against the suite; but no kill either."""
    result = grade(alone={"m1": (SURVIVED, 0.6 * TIMEOUT)})
    assert result.invalid_reason is None and (result.verdict, result.killed) == (TestsVerdict.FAIL, 9)
    assert next(m for m in result.mutants if m.id == "m1") == MutantResult("m1", False, SURVIVED, None)


def test_a_timeout_that_passes_alone_quickly_makes_the_suite_invalid():
    """A test that stalls only among the others passes quickly alone."""
    result = grade(alone={"m1": (SURVIVED, 0.05)})
    assert result.verdict is TestsVerdict.INVALID and "killed m1 only when run after" in result.invalid_reason


def test_a_timeout_counts_only_as_its_run_alone_came_out():
    """A suite that stalls every mutant's run among the others, and passes slowly alone, kills
    nothing; a timeout never run alone is no kill either."""
    stalled = {f"m{i}": (SURVIVED, 0.6 * TIMEOUT) for i in range(8)}
    assert grade(alone=stalled).killed == 2
    assert grade(alone={"s01": KILLED, "s02": KILLED}, everyone_alone=False).killed == 2
    assert grade(alone={"m3": (KILLED, 0.2), "m4": (TIMED_OUT, 2 * TIMEOUT)}, everyone_alone=False).killed == 4


def test_a_timeout_alone_of_a_survivor_is_not_held_against_the_suite():
    assert grade(alone={"m9": (TIMED_OUT, 2 * TIMEOUT)}).verdict is TestsVerdict.PASS


def test_a_failing_correct_implementation_is_reported_before_disagreements():
    invalid = (ValidityRun("reference", "failed", "t.py::t"),)
    result = grade(validity=invalid, alone={"s02": SURVIVED})
    assert result.invalid_reason.startswith("test t.py::t failed on the reference")


def test_implementation_needs_course_tests_and_probes():
    assert implementation_verdict(["passed"] * 11, True) is Verdict.PASS
    assert implementation_verdict(["passed"] * 11, False) is Verdict.FAIL
    assert implementation_verdict(["passed"] * 10 + ["failed"], True) is Verdict.FAIL


def implementation(verdict):
    return Implementation(verdict, (), verdict is Verdict.PASS, (), ())


@pytest.mark.parametrize(
    ("impl", "tests", "expected"),
    [
        (Verdict.PASS, None, Verdict.PASS),
        (Verdict.PASS, TestsVerdict.PASS, Verdict.PASS),
        (Verdict.PASS, TestsVerdict.FAIL, Verdict.FAIL),
        (Verdict.PASS, TestsVerdict.INVALID, Verdict.FAIL),
        (Verdict.PASS, TestsVerdict.ERROR, Verdict.ERROR),
        (Verdict.FAIL, TestsVerdict.PASS, Verdict.FAIL),
    ],
)
def test_overall_verdict(impl, tests, expected):
    graded = None if tests is None else grade()
    if graded is not None:
        graded = type(graded)(**{**graded.__dict__, "verdict": tests})
    assert overall_verdict(implementation(impl), graded) is expected
