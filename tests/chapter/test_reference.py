"""The reference luong.py: the chapter's hand example, its own input checks, and the course tests.

Everything graded is measured against this file, so it is checked here beyond what the course
tests ask of any implementation: the hand example rounded to the chapter's 6 decimals in both
dtypes, and the reference's stricter validation (which the course tests leave loose on purpose).
"""

from __future__ import annotations

import numpy as np
import pytest

from grader.chapter import load_chapter
from tinyllm.autograd.tensor import Tensor
from tinyllm.random import PCG32

CHAPTER = load_chapter("L4.3")
HAND_MASK = np.array([[True, True, False]])
HAND_CONTEXT = np.array([[np.e, 1.0]]) / (np.e + 1.0)  # softmax of the scores (1, 0), exactly


def six_decimals(tensor: Tensor) -> np.ndarray:
    """Rounded as the chapter prints it (in float64, where 0.731059 is the nearest value)."""
    return np.round(tensor.numpy().astype(np.float64), 6)


def hand_example(luong, dtype, combine: np.ndarray):
    """Section 3 of the chapter; returns the module, its inputs and (context, weights, attentional)."""
    module = luong.LuongAttention(2, "dot").to(dtype)
    module.load_state_dict({"combine.weight": combine})
    query = Tensor(np.array([[1.0, 0.0]], dtype=dtype), requires_grad=True)
    keys = Tensor(np.array([[[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]], dtype=dtype), requires_grad=True)
    context, weights = module(query, keys, HAND_MASK)
    return module, query, keys, (context, weights, module.attentional(query, context))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hand_example_to_six_decimals(reference_luong, dtype):
    eye = np.eye(2)
    module, query, keys, outputs = hand_example(reference_luong, dtype, np.hstack([eye, eye]))
    context, weights, attentional = outputs
    assert np.array_equal(six_decimals(weights), [[0.731059, 0.268941, 0.0]])
    assert np.array_equal(six_decimals(context), [[0.731059, 0.268941]])
    assert np.array_equal(six_decimals(attentional), [[0.939181, 0.262640]])
    (attentional.sum() + weights.sum()).backward()
    for array in (context, weights, attentional, query.grad, keys.grad, *(p.grad for p in module.parameters())):
        assert array.dtype == dtype
    assert not keys.grad[0, 2].any(), "the padded key must get no gradient"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_context_half_comes_first(reference_luong, dtype):
    *_, (_, _, attentional) = hand_example(reference_luong, dtype, np.hstack([np.eye(2), np.zeros((2, 2))]))
    assert np.array_equal(six_decimals(attentional), np.round(np.tanh(HAND_CONTEXT), 6))


def test_course_tests_pass_on_the_reference(course_test_failures):
    assert course_test_failures(CHAPTER.reference_impl) == set()


def test_shared_rng_gives_reproducible_and_distinct_layers(reference_luong):
    first = reference_luong.LuongAttention(3, "concat", rng=PCG32(5)).state_dict()
    again = reference_luong.LuongAttention(3, "concat", rng=PCG32(5)).state_dict()
    assert all(np.array_equal(first[name], again[name]) for name in first)
    default = reference_luong.LuongAttention(3, "general").state_dict()
    assert not np.array_equal(default["score_proj.weight"], default["combine.weight"][:, :3])


@pytest.mark.parametrize(
    ("d", "score", "message"),
    [
        (0, "dot", "d must be a positive int"),
        (2.0, "dot", "d must"),
        (True, "dot", "d must"),
        (3, "Dot", "unknown score 'Dot'"),
    ],
)
def test_constructor_refuses_bad_arguments(reference_luong, d, score, message):
    with pytest.raises(ValueError, match=message):
        reference_luong.LuongAttention(d, score)


def test_inputs_are_checked_with_messages_that_name_them(reference_luong):
    module = reference_luong.LuongAttention(3, "concat")
    query, keys = Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones((2, 4, 3), np.float32))
    mask = np.ones((2, 4), dtype=bool)
    bad_calls = [
        (lambda: module(np.ones((2, 3), np.float32), keys, mask), "query must be a Tensor"),
        (lambda: module(query, Tensor(np.ones((3, 4, 3), np.float32)), mask), r"keys .*B=2"),
        (lambda: module(query, keys, mask.tolist()), "mask must be a bool numpy array"),
        (lambda: module(query, keys, mask, proj=Tensor(np.ones((2, 4, 2), np.float32))), "proj"),
        (lambda: module.project_keys(Tensor(np.ones((2, 4), np.float32))), "keys"),
        (lambda: module.attentional(query, Tensor(np.ones((1, 3), np.float32))), "context"),
    ]
    for call, message in bad_calls:
        with pytest.raises(ValueError, match=message):
            call()


def test_an_empty_row_reads_nothing_in_every_score(reference_luong):
    rng = np.random.default_rng(0)
    mask = np.array([[True, False, False], [False, False, False]])
    for score in reference_luong.SCORES:
        module = reference_luong.LuongAttention(3, score)
        keys = Tensor(rng.standard_normal((2, 3, 3)).astype(np.float32), requires_grad=True)
        query = Tensor(rng.standard_normal((2, 3)).astype(np.float32), requires_grad=True)
        context, weights = module(query, keys, mask)
        module.attentional(query, context).sum().backward()
        assert np.array_equal(weights.numpy(), [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), score
        assert not context.numpy()[1].any() and not keys.grad[1].any(), score
        assert np.isfinite(query.grad).all(), score
