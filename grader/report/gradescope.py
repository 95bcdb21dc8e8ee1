"""Gradescope's ``results.json``: one entry per course test, the trusted probes, one per pitfall
mutant, and the mutation score.

Gradescope shows each entry as a box with its points, so the entries mirror the two halves of the
grade: the implementation (course tests, 1 point each, and the trusted probes, PROBES_POINTS) and
the student's tests (each pitfall mutant caught, 1 point each; the mutation score, scaled to
``MUTATION_POINTS``). A course test's verdict comes from the student's own process, which can
write any verdict (docs/ARCHITECTURE.md), so its point counts only when the probes agree: else a
wrong module, or one that forges its course tests' records, scored as much as a correct one (red
team, round 15). The top-level score is their sum, given explicitly so Gradescope never has to
add it up itself. The schema written from Gradescope's specification is
``assets/gradescope-results.schema.json``.
"""

from __future__ import annotations

import json

from grader.report.model import (
    CourseTest,
    Implementation,
    MutantResult,
    Pitfall,
    Report,
    Tests,
    TestsVerdict,
    indented,
)
from grader.report.schemas import validator
from grader.report.text import render_text

COURSE_TEST_POINTS = 1.0
PROBES_POINTS = 5.0
UNTRUSTED_PASS = ("passed, but it counts only once the trusted probes agree with the reference too (see that "
                  "entry): a course test runs in your own process, so its verdict alone proves nothing")
PITFALL_POINTS = 1.0
MUTATION_POINTS = 10.0
VISIBLE = "visible"  # the student sees every entry at once: the grade is meant as feedback
PASSED, FAILED = "passed", "failed"


def validate(data: dict) -> None:
    """Raise jsonschema.ValidationError if ``data`` is not a results.json Gradescope accepts."""
    validator("assets/gradescope-results.schema.json").validate(data)


def render_gradescope(report: Report) -> str:
    data = results(report)
    validate(data)  # never hand Gradescope a file it would reject
    return json.dumps(data, indent=2) + "\n"


def results(report: Report) -> dict:
    """The results.json content for ``report`` (an error report scores 0 and says why)."""
    tests = _entries(report) if report.implementation is not None else []
    return {
        "score": round(sum(t["score"] for t in tests), 4),
        "execution_time": round(report.timing.get("total", 0.0), 3),
        "output": render_text(report),
        "output_format": "text",
        "visibility": VISIBLE,
        "stdout_visibility": "hidden",  # the grader's own log is for the course staff
        "extra_data": {"chapter": report.chapter, "verdict": report.verdict.value,
                       "pool_version": report.pool_version, "submission": report.submission},
        "tests": tests,
    }


def _entries(report: Report) -> list[dict]:
    implementation = report.implementation
    course = [_course_entry(test, implementation.probes_agree) for test in implementation.tests]
    mutants = {m.id: m for m in report.tests.mutants} if report.tests else {}
    pitfalls = [_pitfall_entry(p, mutants.get(p.id), report.tests) for p in report.pitfalls]
    return course + [_probes_entry(implementation)] + pitfalls + [_mutation_entry(report.tests)]


def _entry(name: str, points: float, max_points: float, output: str, tags: list[str]) -> dict:
    return {"name": name, "score": round(points, 4), "max_score": max_points,
            "status": PASSED if points >= max_points else FAILED, "output": output, "tags": tags,
            "visibility": VISIBLE}


def _course_entry(test: CourseTest, probes_agree: bool) -> dict:
    passed = test.outcome == PASSED
    output = ((UNTRUSTED_PASS if not probes_agree else "passed") if passed
              else indented(f"{test.outcome}: {test.message}".rstrip(": ")))
    return _entry(f"course test {test.name}", COURSE_TEST_POINTS if passed and probes_agree else 0.0,
                  COURSE_TEST_POINTS, output, ["implementation"])


def _probes_entry(implementation: Implementation) -> dict:
    agree = implementation.probes_agree
    output = "agree" if agree else "disagree:\n" + "\n".join(indented(f"- {line}", "  ")
                                                              for line in implementation.probe_disagreements)
    return _entry("trusted probes agree with the reference", PROBES_POINTS if agree else 0.0, PROBES_POINTS,
                  output, ["implementation"])


def _pitfall_entry(pitfall: Pitfall, mutant: MutantResult | None, tests: Tests | None) -> dict:
    name = f"your tests catch {pitfall.id}: {pitfall.pitfall}"
    reason = _ungraded_reason(tests)
    if reason is not None or mutant is None:
        return _entry(name, 0.0, PITFALL_POINTS, reason or "this pitfall's mutant was not run", ["tests"])
    if mutant.outcome.is_killed:
        caught = f"caught by {mutant.killed_by}" if mutant.killed_by else f"caught ({mutant.outcome.value})"
        return _entry(name, PITFALL_POINTS, PITFALL_POINTS, caught, ["tests"])
    return _entry(name, 0.0, PITFALL_POINTS, f"missed: {pitfall.when_missed}", ["tests"])


def _mutation_entry(tests: Tests | None) -> dict:
    name = "mutation score of your tests"
    reason = _ungraded_reason(tests)
    if reason is not None:
        return _entry(name, 0.0, MUTATION_POINTS, reason, ["tests"])
    output = (f"{tests.killed}/{tests.total} mutants killed, score {tests.score:.2f} ({tests.bar}): "
              f"{tests.verdict.value}")
    entry = _entry(name, MUTATION_POINTS * tests.score, MUTATION_POINTS, output, ["tests"])
    entry["status"] = PASSED if tests.verdict is TestsVerdict.PASS else FAILED
    return entry


def _ungraded_reason(tests: Tests | None) -> str | None:
    """Why the student's tests earn nothing here, or None when their kills count."""
    if tests is None:
        return "no tests submitted"
    if tests.verdict is TestsVerdict.INVALID:
        return indented(f"your tests are invalid, so their kills count for nothing: {tests.invalid_reason}")
    if tests.verdict is TestsVerdict.ERROR:
        return "your tests could not be run (the report's error says why)"
    return None
