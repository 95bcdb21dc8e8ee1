"""Records a module forges on its record pipe, against a real zygote: whatever they say, the zygote
answers the run, within the driver's schema, as a crash (the course tests then end in an error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.runner.driver import MAX_COURSE_ROWS
from grader.runner.results import Outcome

# Appended to the reference: at import, in the course run's child, write the frames of FORGERIES[...]
# (evaluated there: some are larger than a module may be) to the child's record pipe.
FORGE = """
import json as _json, os as _os, stat as _stat

def _end(node="x", message="", seconds=1.0):
    return _json.dumps({"e": "end", "node": node, "outcome": "passed", "message": message, "seconds": seconds,
                        "cpu_seconds": 0.0, "blobs": []}).encode()

def _forge(bodies):
    fd = next(fd for fd in map(int, _os.listdir("/proc/self/fd"))
              if fd > 2 and _os.path.exists(f"/proc/self/fd/{fd}") and _stat.S_ISFIFO(_os.fstat(fd).st_mode))
    for body in bodies:
        _os.write(fd, len(body).to_bytes(4, "big") + body)

_forge(%s)
"""
FORGERIES = {
    "a time too large for a float": "[_end(), _end(seconds=10**400)]",
    "a negative time": "[_end(seconds=-1.0)]",
    "a message over the answer's limit": "[_end(message='m' * 5000)]",
    "an event named by a list": """[b'{"e": [], "blobs": []}']""",
    "arrays nested past the recursion limit": """[b'{"e":"done","blobs":[],"x":' + b"[" * 200_000 + b"]" * 200_000 + b"}"]""",
    "records that make an answer over the frame cap": "[_end(node='n' * 4000, message='m' * 2000)] * 300",
    "times that sum to more than the answer's limit": "[_end(seconds=9e5)] * 2",
    "more records than any suite writes": """[b'{"e":"installed","seconds":0.0,"blobs":[]}'] * 70_000""",
}


@pytest.mark.parametrize("bodies", FORGERIES.values(), ids=FORGERIES.keys())
def test_forged_records_make_a_crash_not_a_dead_zygote(runner_for, reference, bodies) -> None:
    forger = reference + (FORGE % bodies).encode()
    results = runner_for(None).course_tests(forger, timeout=10.0, budget=30.0)
    crashed = [test for test in results if test.node == "<collection>"]
    assert [test.outcome for test in crashed] == [Outcome.ERROR], results
    assert "invalid record" in crashed[0].message, crashed[0].message


# Appended to the reference: in each course run, 150 rows of tests no file defines, with ids of
# 2,000 characters, and the run ended unfinished (red team, round 29; the hostile suite grades it whole).
ROW_BOMB = Path(__file__).parents[1] / "hostile/submissions/impl/course_row_bomb.py"


def test_a_module_that_reports_rows_without_end_fails_within_bounds(runner_for, reference) -> None:
    """Many rows made a 44 MB report; long ids a rerun's request over the frame's limit, and the
    implementation went ungraded. Now a bounded list with an error at its end."""
    results = runner_for(None).course_tests(reference + b"\n\n" + ROW_BOMB.read_bytes(), timeout=10.0, budget=30.0)
    assert len(results) <= MAX_COURSE_ROWS + 1
    assert results[-1].node == "<report>" and results[-1].outcome is Outcome.ERROR, results[-1]
    assert f"more than the {MAX_COURSE_ROWS}" in results[-1].message
