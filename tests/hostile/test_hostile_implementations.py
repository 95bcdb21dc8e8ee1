"""Hostile luong.py files, graded alone through `grader check`: contained, bounded, never a pass."""

from __future__ import annotations

import re

import pytest

from grader import probes
from grader.patches import apply_patch
from grader.runner.driver import MAX_COURSE_ROWS
from hostile_helpers import (
    CORRECT_IMPL,
    SUBMISSIONS,
    assert_contained,
    assert_nothing_left,
    hostile_cases,
    hostile_impl,
)

# Cases that end quickly; hangs cost whole course-test and probe timeouts, so they are slow.
QUICK = ["exit_at_import", "memory_hog", "output_flood", "fs_hunt", "terminal_escapes"]
SLOW = ["fork_storm", "loop_at_import", "loop_in_forward"]
DOCKER_TOO = {"memory_hog", "fork_storm", "fs_hunt"}




@pytest.mark.parametrize("name,backend_name", hostile_cases(QUICK, SLOW, DOCKER_TOO))
def test_hostile_implementation_is_contained(name, backend_name, sandbox_backend, grade_hostile):
    graded = grade_hostile(impl=hostile_impl(name), backend=sandbox_backend(backend_name))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    if implementation is not None:
        assert implementation["verdict"] == "fail"
        assert not implementation["probes_agree"]


@pytest.mark.parametrize("name", ["patch_numpy", "patch_pytest"])
def test_a_module_that_fakes_the_course_tests_is_caught_by_the_probes(name, grade_hostile, sandbox_backend):
    graded = grade_hostile(impl=hostile_impl(name), backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert implementation["verdict"] == "fail"
    assert not implementation["probes_agree"]
    assert "s07" in implementation["behaves_like"]  # the probes saw the real (scaled-dot) behaviour


def _on_the_correct_example(name: str, correct: str | None = None) -> str:
    """The tail ``submissions/impl/<name>.py`` appended to ``correct`` (the correct example's
    luong.py unless given): what it shows needs numbers that are right everywhere else."""
    correct = CORRECT_IMPL.read_text(encoding="utf-8") if correct is None else correct
    return correct + "\n\n" + (SUBMISSIONS / "impl" / f"{name}.py").read_text()


def test_forged_course_results_do_not_buy_a_pass(grade_hostile, sandbox_backend):
    """The module writes the runner's records itself, so every course test reads "passed"; its
    numbers are right, but it accepts any score, and the probes' contract case says so."""
    check = '            raise ValueError(f"unknown score {score!r}: use one of {KNOWN_SCORES}")'
    correct = CORRECT_IMPL.read_text(encoding="utf-8")
    assert check in correct
    source = _on_the_correct_example("forge_records", correct.replace(check, "            pass"))
    graded = grade_hostile(impl=source, backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert implementation["verdict"] == "fail" and not implementation["probes_agree"]
    assert any("should raise ValueError naming the score, but returned" in line
               for line in implementation["probe_disagreements"]), implementation["probe_disagreements"]


def test_a_course_run_that_reports_no_test_is_no_pass(grade_hostile, sandbox_backend):
    """The module ends its course run without reporting any test (its numbers are right, so the
    probes agree): an empty table of course tests passed. Every test the course files define
    must come back."""
    graded = grade_hostile(impl=_on_the_correct_example("forge_no_course_tests"), backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert implementation["verdict"] == "fail" and implementation["probes_agree"]
    assert len(implementation["tests"]) == 11, implementation["tests"]
    assert all(test["outcome"] == "error" and "no result" in test["message"] for test in implementation["tests"])


# Wrong only where no course test looks, so every course test passes on each (found by red-team
# helpers): the probes must see it. Each is a patch to the correct example (see the README there).
UNLOOKED = SUBMISSIONS / "impl" / "unlooked"


@pytest.mark.parametrize("name", sorted(path.stem for path in UNLOOKED.glob("*.patch")))
def test_wrong_where_the_course_tests_do_not_look_is_caught_by_the_probes(name, grade_hostile, sandbox_backend):
    wrong = apply_patch(CORRECT_IMPL.read_text(encoding="utf-8"), (UNLOOKED / f"{name}.patch").read_text())
    graded = grade_hostile(impl=wrong, backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert all(test["outcome"] == "passed" for test in implementation["tests"]), implementation["tests"]
    assert implementation["verdict"] == "fail" and not implementation["probes_agree"]
    # caught by comparing its answers: a probe run that timed out would fail it too, for no reason shown
    assert probes.compared(implementation["probe_disagreements"]), implementation["probe_disagreements"]


def test_a_cached_projection_that_loses_its_gradient_is_caught(grade_hostile, sandbox_backend):
    """Every course test passes (none calls forward with ``proj``); the probes backpropagate
    through the decoder's forward(..., proj=project_keys(keys)) too, and see the lost gradient."""
    graded = grade_hostile(impl=_on_the_correct_example("detach_proj"), backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert all(test["outcome"] == "passed" for test in implementation["tests"]), implementation["tests"]
    assert implementation["verdict"] == "fail" and not implementation["probes_agree"]
    disagreements = implementation["probe_disagreements"]
    numbers_cases = len(probes.NUMBERS) * len(probes.SCORES)
    # the resized reads too (the cached one, and the inference read through proj), but for a
    # one-token source: its softmax passes no gradient to the score; and the read in a model
    keys = re.compile(r"differs in grad_keys \((reads with_proj:, (with_proj:resized_, )?with_proj:next_, in_a_model:"
                      r"|every read but first, next_, resized_, with_proj:again_)\)")
    assert len(disagreements) == numbers_cases and all(keys.search(line) for line in disagreements), disagreements


def test_a_wrong_projection_behind_forged_records_is_caught(grade_hostile, sandbox_backend):
    """``project_keys`` reads with W_a^T (general) and the query half of W_a (concat), and forward
    ignores the ``proj`` it is given, so every output and gradient is right; the two course tests
    that look at the projection are forged to pass. The probes compare the projection itself and
    the scores read from it (red team, round 9: both were left to the forgeable course tests)."""
    patch = (SUBMISSIONS / "impl" / "wrong_projection.patch").read_text()
    wrong = apply_patch(CORRECT_IMPL.read_text(encoding="utf-8"), patch)
    graded = grade_hostile(impl=_on_the_correct_example("forge_records", wrong), backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert implementation["verdict"] == "fail" and not implementation["probes_agree"]
    disagreements = implementation["probe_disagreements"]
    assert all("differs in proj, scores_from_proj (every read)" in line  # the reads through proj give them
               for line in disagreements if not line.startswith("dot")), disagreements


@pytest.mark.parametrize(("name", "reason"), [
    ("probe_answer_bomb", "compressed arrays are refused: case0.context.npy"),
    ("huge_shape", "case0.context.npy: a header declaring <f8 (35184372088832,) does not fit a member of 128 bytes"),
])
def test_a_probe_answer_that_would_take_more_memory_than_came_out_is_refused(name, reason, grade_hostile,
                                                                              sandbox_backend):
    graded = grade_hostile(impl=hostile_impl(name), backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert implementation["verdict"] == "fail" and not implementation["probes_agree"]
    [line] = implementation["probe_disagreements"]
    assert line.startswith(f"unreadable probe answer: {reason}"), line


def test_rows_reported_without_end_fail_the_implementation_within_bounds(grade_hostile, sandbox_backend):
    graded = grade_hostile(impl=_on_the_correct_example("course_row_bomb"), backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert implementation["verdict"] == "fail"
    assert len(implementation["tests"]) <= MAX_COURSE_ROWS + 1 + 11, len(implementation["tests"])
    assert any(test["name"] == "<report>" and "more than the" in test["message"] for test in implementation["tests"])
    assert len(graded.stdout) < 1_000_000, len(graded.stdout)


def test_folders_past_path_max_do_not_end_the_grade_nor_reach_the_report(grade_hostile, sandbox_backend):
    """A correct luong.py that leaves such folders in each run's folder is graded, and passes."""
    graded = grade_hostile(impl=_on_the_correct_example("deep_folders"), backend=sandbox_backend("bwrap"))
    assert_nothing_left(graded)
    assert graded.report is not None and graded.report["verdict"] == "pass", graded.stdout[-2000:]
    assert "LEAKED" not in graded.surface()


def test_a_luong_py_that_changes_the_substrate_for_everyone_else_fails(grade_hostile, sandbox_backend):
    graded = grade_hostile(impl=_on_the_correct_example("tempered_softmax"), backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert implementation["verdict"] == "fail"
    assert all("changed tinyllm.autograd.functional.softmax at import" in test["message"]
               for test in implementation["tests"]), implementation["tests"]
