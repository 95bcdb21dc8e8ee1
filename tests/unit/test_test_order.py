"""What a request tells the zygote about test order (driver.WarmRunner, no sandbox started)."""

from __future__ import annotations

from grader.runner.driver import MAX_ORDER_BYTES, WarmRunner
from grader.runner.inside.protocol import MAX_HEADER_BYTES, encode_frame
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


def test_the_order_stays_within_its_share_of_a_request(chapter):
    """A conftest made the zygote collect 16 tests named with 7,500 emoji each (30 KB, under the
    ready frame's 1 MB), and failed one run with each: JSON spells an emoji in 12 bytes, and once
    a dozen had killed every request outgrew the frame's limit, which crashed the grade with a
    traceback and no report (red team, round 24). The order keeps the killers that fit."""
    runner = WarmRunner(chapter=chapter, backend=get_backend("bwrap"), student_tests=None)
    runner.collected = tuple(f"test_x.py::test_{index}_" + "\U0001f600" * 7500 for index in range(16))
    runner._kills.update({node: 1 for node in runner.collected})
    order = runner._killers_first()
    assert order == []  # a name of 90 KB as JSON spells it: none fits
    runner.collected = tuple(f"test_x.py::test_{index}_" + "\U0001f600" * 300 for index in range(16))
    runner._kills.update({node: 1 for node in runner.collected})
    order = runner._killers_first()
    assert 0 < len(order) < 16 and order == list(runner.collected[:len(order)])
    assert len(encode_frame({"kind": "suite", "order": order})) <= MAX_ORDER_BYTES + 100 < MAX_HEADER_BYTES
