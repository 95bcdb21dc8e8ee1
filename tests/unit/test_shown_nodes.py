"""Which test ids from runs on the grader's implementations a report may show (grading.shown_node)."""

from __future__ import annotations

from grader.grading import HIDDEN_NODE, HIDDEN_PART, shown_node

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
