"""Hostile luong.py files, graded alone through `grader check`: contained, bounded, never a pass."""

from __future__ import annotations

import pytest

from hostile_helpers import assert_contained, hostile_cases, hostile_impl

# Cases that end quickly; hangs cost whole course-test and probe timeouts, so they are slow.
QUICK = ["exit_at_import", "memory_hog", "output_flood", "fs_hunt"]
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
