"""The runs alone after the fast pass: at most the limit of its timeouts, drawn afresh (the rest
survive), and a sample of its kills, drawn then.

The runner here is a stand-in that records what it was asked to run: what is tested is the
grader's own choice of runs, not the sandbox (tests/hostile runs the real thing).
"""

from __future__ import annotations

import math

import pytest

from grader import scoring
from grader.grading import _after_the_pass
from grader.mutants import load_catalogue
from grader.report.model import MutantOutcome, MutantResult
from grader.runner.results import REFERENCE, Outcome, SuitePass, SuiteRun
from grader.settings import Settings


class RecordingRunner:
    """Answers every run alone with a failed test, as a suite that kills everything alone would."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def suite_runs(self, runs, *, timeout, compiled):
        self.asked.append([run_id for run_id, _ in runs])
        return {run_id: SuiteRun(run_id, Outcome.PASSED if "again" in run_id else Outcome.FAILED,
                                 None if "again" in run_id else "test_x", "", "", 0.1, 0.1, 0.0)
                for run_id, _ in runs}


def timed_out_pass(mutant_ids: list[str]) -> SuitePass:
    runs = {m: SuiteRun(m, Outcome.TIMEOUT, "test_x", "", "", 2.0, 2.0, 0.0) for m in mutant_ids}
    runs[REFERENCE] = SuiteRun(REFERENCE, Outcome.PASSED, None, "", "", 0.1, 0.1, 0.0)
    return SuitePass(timeout=2.0, runs=runs, variants=(), mutants=tuple(mutant_ids))


def test_only_the_limit_of_timed_out_mutants_is_settled_and_the_rest_survive(chapter):
    catalogue = load_catalogue(chapter)
    pool = [m.id for m in catalogue.mutants if not m.pitfall][:20]
    suite, nothing_alone = timed_out_pass(pool), SuitePass(timeout=10.0, runs={}, variants=(), mutants=())
    runner = RecordingRunner()
    alone = _after_the_pass(runner, catalogue, suite, nothing_alone, {}, Settings(settle_limit=8))
    [asked] = runner.asked
    settled = [run_id for run_id in asked if run_id in pool]
    assert len(settled) == 8 and len(asked) == 8 + 1 + len(catalogue.variants)  # the correct ones again
    results = scoring.settle_timeouts(
        [MutantResult(id=m, pitfall=False, outcome=MutantOutcome.TIMEOUT, killed_by="test_x") for m in pool],
        {m: scoring.AloneRun(MutantOutcome.KILLED, 0.1) for m in alone.mutants})
    assert sorted(r.id for r in results if r.outcome.is_killed) == sorted(settled)
    again = RecordingRunner()  # drawn afresh: the same 8 of 20 twice once in 125,970 grades
    _after_the_pass(again, catalogue, suite, nothing_alone, {}, Settings(settle_limit=8))
    assert set(again.asked[0]) != set(asked)


def test_every_timeout_is_settled_under_the_limit(chapter):
    catalogue = load_catalogue(chapter)
    pool = [m.id for m in catalogue.mutants if not m.pitfall][:3]
    runner = RecordingRunner()
    _after_the_pass(runner, catalogue, timed_out_pass(pool), SuitePass(10.0, {}, (), ()), {}, Settings(settle_limit=8))
    assert set(pool) <= set(runner.asked[0])


def test_a_sample_of_the_kills_is_run_alone_again_drawn_after_the_pass(chapter):
    """The sample run alone before the pass is a check only if the fast zygote cannot learn it;
    one drawn after the pass cannot have been learnt."""
    catalogue = load_catalogue(chapter)
    pool = [m.id for m in catalogue.mutants if not m.pitfall][:30]
    runs = {m: SuiteRun(m, Outcome.FAILED, "test_x", "", "", 0.1, 0.1, 0.0) for m in pool}
    runs[REFERENCE] = SuiteRun(REFERENCE, Outcome.PASSED, None, "", "", 0.1, 0.1, 0.0)
    suite = SuitePass(timeout=2.0, runs=runs, variants=(), mutants=tuple(pool))
    already = SuitePass(timeout=10.0, runs={pool[0]: runs[pool[0]]}, variants=(), mutants=(pool[0],))
    draws = []
    for _ in range(2):
        runner = RecordingRunner()
        _after_the_pass(runner, catalogue, suite, already, {}, Settings(recheck_sample=6))
        [asked] = runner.asked
        draws.append({run_id for run_id in asked if run_id in pool})
        assert len(draws[-1]) == 6 and pool[0] not in draws[-1]  # not one that already ran alone
    assert draws[0] != draws[1]  # the same 6 of 29 twice once in 475,020 grades


def test_a_suite_far_above_the_bar_is_rechecked_the_least_and_one_just_above_it_nearly_whole():
    least = {"least": 6, "most": 60, "miss_odds": 0.05}
    assert scoring.kills_to_recheck(0, 162, 218, 12, **least) == 6  # below the bar: nothing to buy
    assert scoring.kills_to_recheck(44, 204, 218, 12, **least) == 6  # the bundled example's margin
    assert scoring.kills_to_recheck(1, 162, 218, 12, **least) == 60  # the limit
    assert scoring.kills_to_recheck(1, 40, 218, 12, **least) == 38  # (40 - 38) / 40 of 1 - 12 / 218 missed
    assert scoring.kills_to_recheck(1, 40, 218, 12, least=6, most=60, miss_odds=1e-9) == 40  # all, at most
    assert scoring.kills_to_recheck(5, 3, 218, 12, **least) == 3


@pytest.mark.parametrize("margin", [3, 10, 20, 30])
def test_the_recheck_misses_fakes_that_buy_a_pass_at_most_at_the_odds_asked(margin):
    """Counted exactly: the pool sample before the pass, then the draw of the kills after it."""
    drawn = scoring.kills_to_recheck(margin, 170, 218, 12, least=6, most=200, miss_odds=0.05)
    missed = math.comb(218 - margin, 12) / math.comb(218, 12) * math.comb(170 - margin, drawn) / math.comb(170, drawn)
    fewer = math.comb(218 - margin, 12) / math.comb(218, 12) * math.comb(170 - margin, drawn - 1) / math.comb(170, drawn - 1)
    assert missed <= 0.05 and (drawn == 6 or fewer > 0.05)


def test_the_kills_needed_are_those_grade_tests_passes_with():
    assert scoring.kills_needed(0.8, 225) == 180 and scoring.kills_needed(0.8, 5) == 4
    assert 179 / 225 < 0.8 <= 180 / 225
