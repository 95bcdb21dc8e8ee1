"""JUnit XML for CI systems: one testcase per course test, per validity run and per mutant.

Each testcase asks one yes/no question a CI page can show red or green: did this course test pass,
did the student's tests pass on this correct implementation, did they kill this mutant. A surviving
mutant is a failure of that question even when the grade passes (the score bar allows some), so
a ``mutation score`` testcase carries the bar itself. The CI gate is the exit code, not this file.
"""

from __future__ import annotations

from xml.etree import ElementTree

from grader.report.model import (
    MutantResult,
    Report,
    Tests,
    TestsVerdict,
    ValidityRun,
    headline,
    indented,
)
from grader.report.survivors import survivor_note

PASSED, SKIPPED = "passed", "skipped"
FAILED_OUTCOMES = frozenset({"failed"})  # the test ran and its assertion failed; anything else is an error


def render_junit(report: Report) -> str:
    root = ElementTree.Element("testsuites", name=f"grader {report.chapter}",
                               time=_seconds(report.timing.get("total", 0.0)))
    if report.error is not None:
        suite = _suite(root, "grading", report)
        _case(suite, "grade", "grading", error=report.error)
    if report.implementation is not None:  # an error that stopped the tests alone keeps it
        _implementation_suite(root, report)
        if report.tests is not None and report.error is None:
            _validity_suite(root, report, report.tests)
            _mutant_suite(root, report, report.tests)
    _count(root)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _suite(root: ElementTree.Element, name: str, report: Report) -> ElementTree.Element:
    return ElementTree.SubElement(root, "testsuite", name=f"{report.chapter}.{name}")


def _case(suite: ElementTree.Element, name: str, classname: str, *, failure: str | None = None,
          error: str | None = None, skipped: str | None = None, out: str = "") -> None:
    case = ElementTree.SubElement(suite, "testcase", name=name, classname=classname)
    for tag, message in (("failure", failure), ("error", error), ("skipped", skipped)):
        if message is not None:
            element = ElementTree.SubElement(case, tag, message=headline(message) or tag)
            element.text = indented(message)
    if out:
        ElementTree.SubElement(case, "system-out").text = out


def _implementation_suite(root: ElementTree.Element, report: Report) -> None:
    suite = _suite(root, "implementation", report)
    classname = f"{report.chapter}.course_tests"
    for test in report.implementation.tests:
        message = f"{test.outcome}: {test.message}" if test.message else test.outcome
        if test.outcome == PASSED:
            _case(suite, test.name, classname)
        elif test.outcome == SKIPPED:
            _case(suite, test.name, classname, skipped=message)
        elif test.outcome in FAILED_OUTCOMES:
            _case(suite, test.name, classname, failure=message)
        else:
            _case(suite, test.name, classname, error=message)
    implementation = report.implementation
    disagreement = "; ".join(implementation.probe_disagreements) or "the probes disagree with the reference"
    _case(suite, "trusted probes agree with the reference", f"{report.chapter}.probes",
          failure=None if implementation.probes_agree else disagreement)


def _validity_suite(root: ElementTree.Element, report: Report, tests: Tests) -> None:
    suite = _suite(root, "validity", report)
    for run in tests.validity:
        _case(suite, f"your tests pass on the {run.implementation}", f"{report.chapter}.validity",
              failure=None if run.outcome == PASSED else _validity_failure(run))


def _validity_failure(run: ValidityRun) -> str:
    test = run.failed_test or "the test run"
    return f"{test} {run.outcome} on the {run.implementation}, a correct implementation. {run.message}".strip()


def _mutant_suite(root: ElementTree.Element, report: Report, tests: Tests) -> None:
    suite = _suite(root, "mutants", report)
    pitfalls = {p.id: p for p in report.pitfalls}
    for mutant in tests.mutants:
        kind = "pitfall" if mutant.pitfall else "pool"
        title = f"{mutant.id}: {pitfalls[mutant.id].pitfall}" if mutant.id in pitfalls else mutant.id
        _mutant_case(suite, f"your tests kill {title}", f"{report.chapter}.mutants.{kind}", mutant, tests,
                     survivor_note(mutant, report))
    bar = f"score {tests.score:.2f} ({tests.killed}/{tests.total} killed); {tests.bar}"
    missed = f"; pitfalls missed: {', '.join(tests.pitfalls_missed)}" if tests.pitfalls_missed else ""
    _case(suite, "mutation score reaches the bar", f"{report.chapter}.mutants",
          failure=None if tests.verdict is TestsVerdict.PASS else f"{tests.verdict.value}: {bar}{missed}",
          out=bar)


def _mutant_case(suite: ElementTree.Element, name: str, classname: str, mutant: MutantResult, tests: Tests,
                 survived: str) -> None:
    if tests.verdict is TestsVerdict.INVALID:
        _case(suite, name, classname, skipped=f"not counted: your tests are invalid ({tests.invalid_reason})")
    elif mutant.outcome.is_killed:
        _case(suite, name, classname, out=f"{mutant.outcome.value} by {mutant.killed_by or 'the run'}")
    else:
        _case(suite, name, classname, failure=f"survived: {survived}")


def _count(root: ElementTree.Element) -> None:
    """The tests/failures/errors/skipped totals that JUnit readers show, per suite and overall."""
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        counts = {"tests": len(cases), "failures": sum(c.find("failure") is not None for c in cases),
                  "errors": sum(c.find("error") is not None for c in cases),
                  "skipped": sum(c.find("skipped") is not None for c in cases)}
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))


def _seconds(value: float) -> str:
    return f"{value:.3f}"
