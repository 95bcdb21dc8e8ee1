"""The masking behaviour the attention chapters rely on: -inf scores, exact zeros, no nan."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor

REAL = np.array([[True, True, False, False], [True, False, True, True]])


def masked_softmax_grads(dtype: type) -> tuple[Tensor, Tensor]:
    x = Tensor(np.linspace(-2, 2, 8).reshape(2, 4).astype(dtype), requires_grad=True)
    weights = F.softmax(F.masked_fill(x, ~REAL, -np.inf))
    (weights * np.arange(8.0).reshape(2, 4).astype(dtype)).sum().backward()
    return x, weights


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_minus_inf_scores_get_exact_zero_weight_and_gradient(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "invalid value" on the way: nothing nan was computed
        x, weights = masked_softmax_grads(dtype)
    assert np.all(weights.data[~REAL] == 0)
    assert np.all(x.grad[~REAL] == 0)
    assert np.all(np.isfinite(x.grad)) and np.all(np.isfinite(weights.data))
    np.testing.assert_allclose(weights.data.sum(axis=-1), 1, rtol=1e-6)


def test_softmax_does_not_overflow_on_large_scores():
    weights = F.softmax(Tensor(np.array([1000.0, 1001.0, -1000.0])))
    np.testing.assert_allclose(weights.data, [1 / (1 + np.e), np.e / (1 + np.e), 0.0])


def test_softmax_of_an_all_minus_inf_row_is_nan_like_torch():
    with np.errstate(invalid="ignore"):
        weights = F.softmax(Tensor(np.full((1, 3), -np.inf)))
    assert np.isnan(weights.data).all()


def test_masked_fill_broadcasts_the_mask_and_keeps_the_dtype():
    x = Tensor(np.ones((2, 3), np.float32))
    out = F.masked_fill(x, np.array([[True], [False]]), -np.inf)
    assert out.dtype == np.float32
    assert out.data.tolist() == [[-np.inf] * 3, [1.0] * 3]


@pytest.mark.parametrize(
    "mask, error",
    [
        (np.ones((2, 3), int), TypeError),
        ([[True, False, True]] * 2, TypeError),
        (np.ones((3, 2), bool), ValueError),
        (np.ones((1, 2, 3), bool), ValueError),
    ],
)
def test_masked_fill_refuses_a_bad_mask(mask, error):
    with pytest.raises(error, match="mask"):
        F.masked_fill(Tensor(np.ones((2, 3))), mask, 0.0)


def test_where_sends_gradient_only_to_the_chosen_side():
    cond = np.array([True, False, True])
    a = Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    b = Tensor(np.array([np.inf, 5.0, np.nan]), requires_grad=True)
    out = F.where(cond, a, b)
    out.sum().backward()
    assert out.data.tolist() == [1.0, 5.0, 3.0]
    assert a.grad.tolist() == [1.0, 0.0, 1.0]
    assert b.grad.tolist() == [0.0, 1.0, 0.0]


def test_where_needs_a_bool_condition_and_a_tensor():
    with pytest.raises(TypeError, match="cond"):
        F.where(np.array([1, 0]), Tensor(np.ones(2)), 0.0)
    with pytest.raises(TypeError, match="Tensor"):
        F.where(np.array([True, False]), 1.0, 0.0)


def test_cat_checks_its_input():
    with pytest.raises(ValueError, match="at least one"):
        F.cat([])


def test_linear_checks_widths():
    with pytest.raises(ValueError, match="in_features=4"):
        F.linear(Tensor(np.ones((2, 3))), Tensor(np.ones((5, 4))))
    with pytest.raises(ValueError, match="2-D"):
        F.linear(Tensor(np.ones((2, 3))), Tensor(np.ones(3)))


def test_linear_is_x_times_weight_transposed_plus_bias():
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3)), rng.standard_normal(4)
    np.testing.assert_allclose(F.linear(Tensor(x), Tensor(w), Tensor(b)).data, x @ w.T + b)
