"""What a request tells the zygote about test order (driver.WarmRunner, no sandbox started)."""

from __future__ import annotations

from grader.runner.driver import WarmRunner
from grader.sandbox import get_backend


def test_a_request_names_only_the_tests_that_killed(chapter):
    """Every request carries the order; naming all of a suite of thousands of tests made each one
    bigger than a pipe's buffer, and with both workers busy on long runs the driver gave up
    sending it (red team, round 7: an honest 3,354-test suite ended in a grade error). The child
    runs the tests not named after the named ones, in collection order, so it is the same order."""
    runner = WarmRunner(chapter=chapter, backend=get_backend("bwrap"), student_tests=None)
    runner.collected = tuple(f"test_many.py::test_case[{index}]" for index in range(5000))
    assert runner._killers_first() == []
    runner._kills.update({"test_many.py::test_case[7]": 1, "test_many.py::test_case[3]": 4,
                          "test_many.py::test_case[9]": 1})
    assert runner._killers_first() == ["test_many.py::test_case[3]", "test_many.py::test_case[7]",
                                       "test_many.py::test_case[9]"]
    assert runner.test_order()[:4] == [*runner._killers_first(), "test_many.py::test_case[0]"]
