"""length_mask, the masked read, and L4.2's additive attention."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from test_gradients import central_differences
from tinyllm.autograd.tensor import Tensor
from tinyllm.random import PCG32
from tinyllm.seq2seq import AdditiveAttention, length_mask, masked_read

MASK = np.array([[True, True, False], [False, False, False], [True, True, True]])  # row 1 is all padding


def test_length_mask():
    assert length_mask([2, 0, 3], 3).tolist() == MASK.tolist()
    assert length_mask(np.array([1], np.int64), 2).dtype == np.bool_
    assert length_mask([], 4).shape == (0, 4)


@pytest.mark.parametrize(
    "lengths, max_len, problem",
    [
        ([1, -1], 3, "lengths"),
        ([1, 4], 3, "lengths"),
        ([1.0, 2.0], 3, "lengths"),
        ([[1, 2]], 3, "lengths"),
        ([1], -1, "max_len"),
        ([1], 2.0, "max_len"),
    ],
)
def test_length_mask_refuses_bad_input(lengths, max_len, problem):
    with pytest.raises(ValueError, match=problem):
        length_mask(lengths, max_len)


def read(dtype: type = np.float64) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    rng = np.random.default_rng(0)
    scores = Tensor(rng.standard_normal((3, 3)).astype(dtype), requires_grad=True)
    keys = Tensor(rng.standard_normal((3, 3, 2)).astype(dtype), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the empty row must not compute a nan anywhere
        context, weights = masked_read(scores, keys, MASK)
        (context.sum() + (weights * weights).sum()).backward()
    return scores, keys, context, weights


def test_masked_read_matches_the_formula_on_real_rows():
    scores, keys, context, weights = read()
    for row in (0, 2):
        real = MASK[row]
        e = np.exp(scores.data[row, real] - scores.data[row, real].max())
        np.testing.assert_allclose(weights.data[row, real], e / e.sum())
        np.testing.assert_allclose(context.data[row], weights.data[row] @ keys.data[row])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_padding_gets_exact_zero_weight_and_no_gradient(dtype):
    scores, keys, context, weights = read(dtype)
    assert weights.dtype == context.dtype == dtype
    assert np.all(weights.data[~MASK] == 0)
    assert np.all(scores.grad[~MASK] == 0)
    assert np.all(keys.grad[~MASK] == 0)
    assert np.all(np.isfinite(scores.grad)) and np.all(np.isfinite(keys.grad))


def test_an_all_padding_row_reads_nothing():
    scores, keys, context, weights = read()
    assert weights.data[1].tolist() == [0.0, 0.0, 0.0]
    assert context.data[1].tolist() == [0.0, 0.0]
    assert scores.grad[1].tolist() == [0.0, 0.0, 0.0]


def test_padding_stays_below_even_a_very_negative_real_score():
    scores = Tensor(np.array([[-3e9, -2e9]]))  # a finite fill such as -1e9 would outweigh the real token
    _, weights = masked_read(scores, Tensor(np.ones((1, 2, 1))), np.array([[True, False]]))
    assert weights.data.tolist() == [[1.0, 0.0]]


@pytest.mark.parametrize(
    "mask", [MASK.astype(int), MASK.tolist(), MASK[:, :2], MASK[None]], ids=["int", "list", "short", "3d"]
)
def test_masked_read_refuses_a_bad_mask(mask):
    with pytest.raises(ValueError, match="mask"):
        masked_read(Tensor(np.ones((3, 3))), Tensor(np.ones((3, 3, 2))), mask)


def test_masked_read_checks_scores_against_keys():
    with pytest.raises(ValueError, match="keys"):
        masked_read(Tensor(np.ones((3, 3))), Tensor(np.ones((3, 4, 2))), MASK)


def attention_inputs() -> tuple[AdditiveAttention, Tensor, Tensor]:
    attention = AdditiveAttention(d_query=3, d_key=2, d_attn=4, rng=PCG32(9)).to(np.float64)
    rng = np.random.default_rng(1)
    query = Tensor(rng.standard_normal((3, 3)), requires_grad=True)
    keys = Tensor(rng.standard_normal((3, 3, 2)), requires_grad=True)
    return attention, query, keys


def test_additive_scores_are_v_tanh_of_projected_query_plus_key():
    attention, query, keys = attention_inputs()
    w = attention.state_dict()
    expected = np.tanh((query.data @ w["query_proj.weight"].T)[:, None, :] + keys.data @ w["key_proj.weight"].T)
    np.testing.assert_allclose(attention.scores(query, keys).data, (expected @ w["v.weight"].T)[..., 0])
    proj = attention.project_keys(keys)
    np.testing.assert_array_equal(attention.scores(query, keys, proj).data, attention.scores(query, keys).data)


def test_additive_parameter_names_and_shapes():
    attention, _, _ = attention_inputs()
    shapes = [(name, p.shape) for name, p in attention.named_parameters()]
    assert shapes == [("query_proj.weight", (4, 3)), ("key_proj.weight", (4, 2)), ("v.weight", (1, 4))]


def test_additive_forward_gradients_match_central_differences():
    attention, query, keys = attention_inputs()
    upstream = np.random.default_rng(2).standard_normal((3, 2))

    def loss() -> float:
        context, weights = attention(Tensor(query.data), Tensor(keys.data), MASK)
        return float((context.data * upstream).sum() + weights.data.sum())

    context, weights = attention(query, keys, MASK)
    ((context * upstream).sum() + weights.sum()).backward()
    for tensor in (query, keys, *attention.parameters()):
        np.testing.assert_allclose(tensor.grad, central_differences(loss, tensor.data), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "query_shape, keys_shape, problem",
    [((3, 2), (3, 3, 2), "query"), ((3, 3), (3, 3, 3), "keys"), ((3, 3), (3, 2), "keys")],
)
def test_additive_refuses_wrong_widths(query_shape, keys_shape, problem):
    attention, _, _ = attention_inputs()
    with pytest.raises(ValueError, match=problem):
        attention(Tensor(np.ones(query_shape)), Tensor(np.ones(keys_shape)), MASK)
