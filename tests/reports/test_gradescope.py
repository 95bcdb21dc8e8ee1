"""Gradescope results.json from real grades, checked against the schema written from Gradescope's spec."""

from __future__ import annotations

import json

import jsonschema
import pytest

from grader.report.gradescope import (
    COURSE_TEST_POINTS,
    MUTATION_POINTS,
    PITFALL_POINTS,
    PROBES_POINTS,
    render_gradescope,
    validate,
)
from grader.report.model import Report, Verdict

pytestmark = pytest.mark.slow


def results_of(report: Report) -> dict:
    data = json.loads(render_gradescope(report))
    validate(data)
    return data


def test_a_passing_grade_has_one_entry_per_course_test_pitfall_and_the_score(passing_report: Report):
    data = results_of(passing_report)
    names = [t["name"] for t in data["tests"]]
    assert len(names) == 11 + 1 + 7 + 1
    assert names[:11] == [f"course test {t.name}" for t in passing_report.implementation.tests]
    assert names[11] == "trusted probes agree with the reference"
    assert [n.split(":")[0] for n in names[12:19]] == [f"your tests catch s0{i}" for i in range(1, 8)]
    assert names[-1] == "mutation score of your tests"
    assert all(t["status"] == "passed" for t in data["tests"])
    tests = passing_report.tests
    assert data["tests"][-1]["score"] == pytest.approx(MUTATION_POINTS * tests.score, abs=1e-3)
    assert data["score"] == pytest.approx(sum(t["score"] for t in data["tests"]), abs=1e-3)
    assert data["score"] == pytest.approx(11 * COURSE_TEST_POINTS + PROBES_POINTS + 7 * PITFALL_POINTS
                                          + MUTATION_POINTS * tests.score, abs=1e-3)
    assert data["execution_time"] > 0
    assert data["extra_data"]["pool_version"] == passing_report.pool_version


def test_a_failing_implementation_loses_the_course_tests_it_fails(pitfall_report: Report):
    data = results_of(pitfall_report)
    failed = {t["name"].removeprefix("course test ") for t in data["tests"][:11] if not t["output"].startswith("passed")}
    assert failed == {t.name for t in pitfall_report.implementation.tests if t.outcome != "passed"}
    assert "test_hand_example_attentional_order" in failed
    assert all(t["score"] == 0 and t["status"] == "failed" and t["output"] for t in data["tests"][:11])
    assert data["score"] < 11 * COURSE_TEST_POINTS + PROBES_POINTS + 7 * PITFALL_POINTS + MUTATION_POINTS
    probes = data["tests"][11]
    assert probes["score"] == 0 and probes["status"] == "failed" and probes["output"].startswith("disagree:\n- ")
    # a course test's own verdict counts only when the probes agree: it came from the student's process
    passed = [t for t in data["tests"][:11] if t["name"].removeprefix("course test ") not in failed]
    assert passed and all(t["score"] == 0 and t["output"].startswith("passed, but it counts only once") for t in passed)


def test_the_schema_rejects_what_gradescope_would():
    with pytest.raises(jsonschema.ValidationError):
        validate({"tests": [{"name": "no score anywhere"}]})
    with pytest.raises(jsonschema.ValidationError):
        validate({"score": 1, "tests": [{"score": 1, "status": "ok"}]})
    with pytest.raises(jsonschema.ValidationError):
        validate({"score": 1, "visibility": "sometimes"})


def test_an_error_report_scores_zero_and_says_why():
    report = Report(chapter="L4.3", verdict=Verdict.ERROR, implementation=None, tests=None, pool_version="",
                    pitfalls=(), backend="bwrap", submission="", error="luong.py: not found",
                    timing={"total": 0.1})
    data = results_of(report)
    assert data["score"] == 0 and data["tests"] == []
    assert "luong.py: not found" in data["output"]
