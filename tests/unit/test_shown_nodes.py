"""What a report may show of runs on the grader's implementations: which test ids
(grading.shown_node) and which message (grading.trusted_run_message, grading.validity_rows,
grading.trusted_run_hint); and how a message of the student's own runs is tidied."""

from __future__ import annotations

from grader.grading import (
    AGAIN,
    ALONE,
    CHANCE_HINT,
    FAST_ONLY_HINT,
    HIDDEN_NODE,
    HIDDEN_PART,
    ORDER_HINT,
    SHARED_MISTAKE_HINT,
    STRICTER_THAN_ASKED_HINT,
    TRUSTED_RUN_HINT,
    UNDEFINED_HINT,
    UNSWAPPABLE_HINT,
    YOURS,
    shown_node,
    trusted_run_hint,
    trusted_run_message,
    validity_rows,
    yours_message,
)
from grader.report.model import ValidityRun, Verdict
from grader.runner.inside.loader import UNDEFINED, UNSWAPPABLE
from grader.runner.results import REFERENCE, REFERENCE_AGAIN, Outcome, SuitePass, SuiteRun

COLLECTED = frozenset({"test_a.py::test_plain", "test_a.py::test_cases[0]", "test_a.py::test_cases[1]"})


def test_ids_collected_before_any_implementation_are_shown_as_they_are():
    assert shown_node("test_a.py::test_plain", COLLECTED) == "test_a.py::test_plain"
    assert shown_node("test_a.py::test_cases[1]", COLLECTED) == "test_a.py::test_cases[1]"
    assert shown_node(None, COLLECTED) is None


def test_a_parameter_id_that_was_not_collected_is_cut():
    assert shown_node("test_a.py::test_cases[Scores a decoder state]", COLLECTED) == f"test_a.py::test_cases[{HIDDEN_PART}]"
    assert shown_node("test_a.py::test_plain[renamed]", COLLECTED) == f"test_a.py::test_plain[{HIDDEN_PART}]"


def test_a_test_that_was_not_collected_is_not_shown():
    assert shown_node("test_a.py::test_Scores_a_decoder_state", COLLECTED) == HIDDEN_NODE
    assert shown_node("anything at all", frozenset()) == HIDDEN_NODE


def _run(outcome: Outcome, message: str) -> SuiteRun:
    return SuiteRun("reference", outcome, "test_a.py::test_plain", message, "", 0.1, 0.1, 0.0)


def test_a_trusted_run_never_shows_its_own_message():
    assert trusted_run_message(_run(Outcome.FAILED, "AssertionError: the reference's docstring")) == TRUSTED_RUN_HINT
    assert trusted_run_message(_run(Outcome.PASSED, "")) == ""


def test_the_placeholder_rule_is_explained_in_the_grader_s_own_words():
    """The tests are collected against a stand-in for the graded module; a test that kept a name
    where the runner cannot swap each run's in passes under plain pytest and fails only here,
    so the report says why (in fixed text: the run's message is still not shown)."""
    message = f"test_a.py:3: RuntimeError: x.Secret was used at import time or {UNSWAPPABLE} (...)"
    shown = trusted_run_message(_run(Outcome.ERROR, message))
    assert shown == UNSWAPPABLE_HINT and "Secret" not in shown


def test_a_reference_that_fails_only_in_the_runner_s_order_is_explained():
    """The first run keeps the files' order; later ones put the killers first. A suite whose
    tests depend on running in file order passed the first and failed the last reference run,
    and the report only said to run the test against one's own luong.py, where it passes."""
    runs = {REFERENCE: _run(Outcome.PASSED, ""), REFERENCE_AGAIN: _run(Outcome.FAILED, "AssertionError")}
    collected = frozenset({"test_a.py::test_plain"})
    rows = validity_rows(SuitePass(timeout=1.0, runs=runs, variants=(), mutants=()), collected)
    assert [row.message for row in rows] == ["", ORDER_HINT]
    runs[REFERENCE] = _run(Outcome.FAILED, "AssertionError")
    rows = validity_rows(SuitePass(timeout=1.0, runs=runs, variants=(), mutants=()), frozenset())
    assert [row.message for row in rows] == [TRUSTED_RUN_HINT, TRUSTED_RUN_HINT]


def test_a_reference_that_fails_only_where_the_tests_are_collected_once_is_explained():
    """A directory made at module level (tempfile.mkdtemp) is the zygote's, where no run may write:
    such a suite passed alone and failed the fast pass, and the report said to run the test
    against one's own luong.py, where it passes (red team, round 9)."""
    runs = {REFERENCE: _run(Outcome.FAILED, "PermissionError"), "variant 1": _run(Outcome.FAILED, "PermissionError")}
    suite = SuitePass(timeout=1.0, runs=runs, variants=("variant 1",), mutants=())
    rows = validity_rows(suite, frozenset(), passed_alone=frozenset({REFERENCE}))
    assert [row.message for row in rows] == [FAST_ONLY_HINT, TRUSTED_RUN_HINT]


def test_an_implementation_that_failed_once_and_passed_once_alone_is_explained_by_chance():
    """A test drawing a width with an unseeded generator failed variant 1 alone and passed it alone
    again after the pass; the report blamed import-time state or exact floats (red team, round 17)."""
    runs = {"variant 1": _run(Outcome.FAILED, "AssertionError"), "variant 1" + AGAIN: _run(Outcome.PASSED, ""),
            REFERENCE: _run(Outcome.PASSED, ""), REFERENCE + AGAIN: _run(Outcome.FAILED, "AssertionError")}
    suite = SuitePass(timeout=1.0, runs=runs, variants=("variant 1", REFERENCE + AGAIN, "variant 1" + AGAIN), mutants=())
    rows = validity_rows(suite, frozenset(), ALONE)
    assert {row.implementation: row.message for row in rows} == {
        "variant 1 (run alone)": CHANCE_HINT, "variant 1, again (run alone)": "",
        "reference (run alone)": "", "reference, again (run alone)": CHANCE_HINT}


def test_a_name_the_implementation_lacks_is_explained():
    message = f"test_a.py:3: AttributeError: tinyllm.seq2seq.luong.helper {UNDEFINED}"
    assert trusted_run_message(_run(Outcome.FAILED, message)) == UNDEFINED_HINT


def test_the_words_for_a_failed_correct_implementation_follow_the_run_on_the_student_s_own():
    """A test that fails a correct implementation is explained by the run on the student's own
    luong.py where that run failed too; where it passed, that line has nothing to show. Tests that
    passed on a luong.py failing the chapter's checks most likely share its mistake: they were told
    of tolerances and pointed to the passing line (red team, round 27)."""
    failed = ValidityRun(implementation=YOURS, outcome="failed", failed_test="test_a.py::test_plain", message="x")
    passed = ValidityRun(implementation=YOURS, outcome="passed", failed_test=None, message="")
    assert trusted_run_hint(failed, Verdict.FAIL) == trusted_run_hint(failed, Verdict.PASS) == TRUSTED_RUN_HINT
    assert trusted_run_hint(passed, Verdict.FAIL) == SHARED_MISTAKE_HINT
    assert trusted_run_hint(passed, Verdict.PASS) == STRICTER_THAN_ASKED_HINT
    assert "on your luong.py" not in SHARED_MISTAKE_HINT + STRICTER_THAN_ASKED_HINT
    runs = {REFERENCE: _run(Outcome.FAILED, "AssertionError")}
    rows = validity_rows(SuitePass(timeout=1.0, runs=runs, variants=(), mutants=()), frozenset(),
                         hint=SHARED_MISTAKE_HINT)
    assert [row.message for row in rows] == [SHARED_MISTAKE_HINT]


def test_a_test_reading_the_module_s_source_is_told_there_is_none_to_read():
    """inspect.getsource(luong) fails on every luong.py here, the student's own too: the line "on
    your luong.py" says why, where the invalid reason spoke of float tolerances (honest students,
    round 30). Other failures, and the skips of a pass, are shown as the run wrote them."""
    no_source = _run(Outcome.FAILED, "inspect.py:1073: OSError: source code not available")
    assert yours_message(no_source) == ("inspect.py:1073: OSError: source code not available: every luong.py is run "
                                        "here from memory, with no source to read; test what it computes, not how "
                                        "it is written")
    assert yours_message(_run(Outcome.FAILED, "AssertionError: 1 != 2")) == "AssertionError: 1 != 2"
    assert yours_message(_run(Outcome.PASSED, "")) == ""


def test_pytest_s_explanation_of_an_assert_is_tidied_so_a_regrade_gives_the_same_report():
    """pytest named numpy's functions by their address, which changes from run to run (red team, round 27)."""
    from grader.grading import _course_test
    from grader.runner.results import TestOutcome

    message = ("test_luong.py:204: AssertionError: dot: padding weights are not exactly 0\nassert np.False_\n"
               " +  where np.False_ = <function all at 0x7f3a2c1b9e40>(array([0.1]) == 0.0)")
    row = _course_test(TestOutcome("test_luong.py::test_masked_weights_are_exactly_zero", Outcome.FAILED, message, 0.1),
                       ["test_masked_weights_are_exactly_zero"])
    assert row.message == ("test_luong.py:204: AssertionError: dot: padding weights are not exactly 0\nassert False\n"
                           " +  where False = <function all>(array([0.1]) == 0.0)")


def test_a_luong_py_importing_a_package_the_sandbox_lacks_is_told_what_it_holds():
    """'No module named torch' on each course test said nothing of why (honest students, round 30)."""
    from grader.grading import _course_test
    from grader.runner.results import TestOutcome

    def row(message: str) -> str:
        return _course_test(TestOutcome("test_luong.py::test_validation", Outcome.FAILED, message, 0.1),
                            ["test_validation"]).message

    assert row("the module failed to import: ModuleNotFoundError: No module named 'torch'") == (
        "the module failed to import: ModuleNotFoundError: No module named 'torch' in the sandbox, which has "
        "Python, numpy, pytest and the tinyllm substrate only")
    assert row("the module failed to import: RuntimeError: broken") == "the module failed to import: RuntimeError: broken"


def test_once_the_order_is_shown_to_matter_every_failed_run_of_the_pass_says_so():
    """A module-scoped fixture one test changed: the reference passed in the files' order and
    failed last, and fourteen variants that failed in the same pass (and passed alone) were
    told of import-time state (red team, round 28)."""
    runs = {REFERENCE: _run(Outcome.PASSED, ""), "variant 1": _run(Outcome.FAILED, "AssertionError"),
            REFERENCE_AGAIN: _run(Outcome.FAILED, "AssertionError")}
    suite = SuitePass(timeout=1.0, runs=runs, variants=("variant 1",), mutants=())
    rows = validity_rows(suite, frozenset(), passed_alone=frozenset({"variant 1"}))
    assert [row.message for row in rows] == ["", ORDER_HINT, ORDER_HINT]
