"""Hostile luong.py files, graded alone through `grader check`: contained, bounded, never a pass."""

from __future__ import annotations

import pytest

from hostile_helpers import CORRECT_IMPL, SUBMISSIONS, assert_contained, hostile_cases, hostile_impl

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


def test_forged_course_results_do_not_buy_a_pass(grade_hostile, sandbox_backend):
    """The module writes the runner's records itself, so every course test reads "passed"; its
    numbers are right, but it accepts any score, and the probes' contract case says so."""
    check = '            raise ValueError(f"unknown score {score!r}: use one of {KNOWN_SCORES}")'
    correct = CORRECT_IMPL.read_text(encoding="utf-8")
    assert check in correct
    source = correct.replace(check, "            pass") + "\n\n" + (SUBMISSIONS / "impl" / "forge_records.py").read_text()
    graded = grade_hostile(impl=source, backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert implementation["verdict"] == "fail" and not implementation["probes_agree"]
    assert any("should give ValueError naming the score, gave returned" in line
               for line in implementation["probe_disagreements"]), implementation["probe_disagreements"]


def test_a_probe_answer_that_would_inflate_in_the_grader_is_refused(grade_hostile, sandbox_backend):
    graded = grade_hostile(impl=hostile_impl("probe_answer_bomb"), backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert implementation["verdict"] == "fail" and not implementation["probes_agree"]
    [reason] = implementation["probe_disagreements"]
    assert reason.startswith("unreadable probe answer: compressed arrays are refused: case0.context.npy"), reason
