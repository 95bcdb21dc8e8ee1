"""What of the course material a run can read (WarmRunner.mounts)."""

from __future__ import annotations

from grader.runner.results import Outcome

# Raised at import, so that the course tests' rows carry it: every file under /course.
LIST_COURSE = b"""
import os
raise RuntimeError(" ".join(sorted(os.path.join(folder, name) for folder, _, names in os.walk("/course")
                                   for name in names)))
"""


def test_of_the_fixtures_only_the_golden_values_are_there(runner_for) -> None:
    """Beside the golden values was the torch oracle that made them, a whole correct implementation,
    and a luong.py printed it into its course tests' messages (red team, round 29)."""
    results = runner_for(None).course_tests(LIST_COURSE, timeout=10.0, budget=30.0)
    seen = results[0].message
    assert results[0].outcome is Outcome.ERROR
    assert "/course/fixtures/L4.3/luong_torch.npz" in seen, seen
    assert "oracle" not in seen.replace("/course/reference/tests", ""), seen
