"""A grade stopped from outside (SIGTERM: a supervisor, ``docker stop``, ``kill``) in the middle:
it ends at once with the signal's exit status and no report, and takes its sandboxes with it."""

from __future__ import annotations

import pytest

from hostile_helpers import CORRECT_IMPL, assert_nothing_left, hostile_tests

STOP_AFTER = 8.0  # seconds: both sandboxes are up by then, and this suite's grade runs far longer
SIGTERM_STATUS = 128 + 15


@pytest.mark.parametrize("backend_name", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_stopped_grade_leaves_nothing_behind(backend_name, grade_hostile, sandbox_backend):
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests("loop_in_test"),
                           backend=sandbox_backend(backend_name), stop_after=STOP_AFTER)
    assert_nothing_left(graded)
    assert graded.returncode == SIGTERM_STATUS, (graded.returncode, graded.stdout[-2000:], graded.stderr[-2000:])
    assert "stopped (SIGTERM)" in graded.stderr and graded.report is None
