"""JUnit XML from real grades, read back with junitparser as a CI system would."""

from __future__ import annotations

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from grader.chapter import load_chapter
from grader.mutants import load_catalogue
from grader.report.junit import render_junit
from grader.report.model import Report, Verdict

pytestmark = pytest.mark.slow


def parsed(report: Report, tmp_path) -> JUnitXml:
    path = tmp_path / "junit.xml"
    path.write_text(render_junit(report), encoding="utf-8")
    return JUnitXml.fromfile(str(path))


def cases(xml: JUnitXml, suite_name: str) -> dict:
    suite = next(s for s in xml if s.name == suite_name)
    return {case.name: case for case in suite}


def test_a_passing_grade_has_a_testcase_per_course_test_validity_run_and_mutant(passing_report: Report, tmp_path):
    xml = parsed(passing_report, tmp_path)
    tests = passing_report.tests
    assert [s.name for s in xml] == ["L4.3.implementation", "L4.3.validity", "L4.3.mutants"]
    implementation = cases(xml, "L4.3.implementation")
    assert len(implementation) == 11 + 1
    assert all(case.is_passed for case in implementation.values())
    # reference, variant, every decoy, reference again last; reference, variant and two decoys each
    # run alone before the mutation pass, reference and variant again among the runs alone after it
    catalogue = load_catalogue(load_chapter())
    runs = 9 + len(catalogue.decoys) + len(catalogue.shape_decoys)
    assert len(cases(xml, "L4.3.validity")) == len(tests.validity) == runs
    mutants = cases(xml, "L4.3.mutants")
    assert len(mutants) == tests.total + 1  # every mutant and the bar
    survivors = [name for name, case in mutants.items() if any(isinstance(r, Failure) for r in case.result)]
    assert len(survivors) == tests.total - tests.killed
    assert mutants["mutation score reaches the bar"].is_passed
    assert xml.tests == 12 + runs + tests.total + 1
    assert xml.failures == tests.total - tests.killed


def test_a_failing_course_test_is_a_failure_with_its_message(pitfall_report: Report, tmp_path):
    implementation = cases(parsed(pitfall_report, tmp_path), "L4.3.implementation")
    case = implementation["test_hand_example_attentional_order"]
    assert not case.is_passed
    (failure,) = case.result
    assert isinstance(failure, (Failure, Error)) and failure.text
    assert not implementation["trusted probes agree with the reference"].is_passed


def test_an_error_report_is_one_erroring_testcase(tmp_path):
    report = Report(chapter="L4.3", verdict=Verdict.ERROR, implementation=None, tests=None, pool_version="",
                    pitfalls=(), backend="bwrap", submission="", error="sandbox unavailable")
    xml = parsed(report, tmp_path)
    ((case,),) = [list(suite) for suite in xml]
    assert isinstance(case.result[0], Error) and "sandbox unavailable" in case.result[0].message
    assert xml.errors == 1 and not any(isinstance(r, Skipped) for r in case.result)
