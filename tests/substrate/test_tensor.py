"""Tensor: the dtype rule, gradient accumulation, and the errors a caller gets for misuse."""

from __future__ import annotations

import numpy as np
import pytest

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor


@pytest.mark.parametrize(
    "data, dtype",
    [
        (1.5, np.float32),
        (3, np.float32),
        ([[1, 2], [3, 4]], np.float32),
        (np.arange(3), np.float32),
        (np.array([True, False]), np.float32),
        (np.zeros(2, np.float32), np.float32),
        (np.zeros(2, np.float64), np.float64),
        (np.float64(2.0), np.float64),
    ],
)
def test_construction_follows_the_dtype_rule(data, dtype):
    tensor = Tensor(data)
    assert tensor.dtype == dtype
    assert tensor.shape == np.shape(data) and tensor.ndim == np.ndim(data)
    assert tensor.grad is None and not tensor.requires_grad


@pytest.mark.parametrize("data", [np.zeros(2, np.float16), np.zeros(2, np.complex64), Tensor(1.0)])
def test_construction_refuses_other_dtypes_and_tensors(data):
    with pytest.raises(TypeError):
        Tensor(data)


@pytest.mark.parametrize(
    "combine",
    [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a * b,
        lambda a, b: a / b,
        lambda a, b: a @ b,
        lambda a, b: a + b.data,
        lambda a, b: b.data - a,
        lambda a, b: b.data @ a,
        lambda a, b: F.cat([a, b]),
        lambda a, b: F.where(np.ones((2, 2), bool), a, b),
        lambda a, b: F.linear(a, b),
    ],
)
def test_mixed_float_dtypes_raise_instead_of_converting(combine):
    a = Tensor(np.ones((2, 2), np.float32))
    b = Tensor(np.ones((2, 2), np.float64))
    with pytest.raises(TypeError, match="float32 and float64|float64 and float32"):
        combine(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scalars_and_integer_arrays_take_the_tensors_dtype(dtype):
    x = Tensor(np.ones(3, dtype))
    for result in (x + 1, 2.5 * x, x / np.float64(3.0), x - np.arange(3), np.int64(2) * x, x ** np.float64(2.0)):
        assert result.dtype == dtype


def test_tensor_used_twice_gets_both_contributions():
    x = Tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    (x * x + x).sum().backward()
    np.testing.assert_array_equal(x.grad, 2 * x.data + 1)


def test_leaf_gradients_accumulate_across_backward_calls():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, 3.0 + 2 * x.data)


def test_backward_twice_on_one_graph_accumulates_leaves_but_not_intermediates():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    hidden = x * 2.0
    loss = (hidden * hidden).sum()
    loss.backward()
    first = hidden.grad.copy()
    loss.backward()
    np.testing.assert_array_equal(hidden.grad, first)
    np.testing.assert_array_equal(x.grad, 2 * 8 * x.data)


def test_backward_seed_defaults_to_one_for_a_single_element_only():
    x = Tensor(np.array([[2.0]]), requires_grad=True)
    (x * 5.0).backward()
    assert x.grad.tolist() == [[5.0]]
    with pytest.raises(RuntimeError, match="single-element"):
        Tensor(np.ones(2), requires_grad=True).backward()


def test_backward_with_an_explicit_gradient():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x * 3.0).backward(np.array([1.0, -1.0]))
    assert x.grad.tolist() == [3.0, -3.0]
    with pytest.raises(ValueError, match="shape"):
        (x * 3.0).backward(np.ones(3))


def test_backward_without_requires_grad_is_an_error():
    with pytest.raises(RuntimeError, match="does not require grad"):
        Tensor(1.0).backward()


def test_a_deep_graph_does_not_hit_the_recursion_limit():
    x = Tensor(np.array(1.0), requires_grad=True)
    y = x
    for _ in range(5000):
        y = y + 1.0
    y.backward()
    assert x.grad == 1.0


def test_detach_cuts_the_graph():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x.detach() * x).sum().backward()
    np.testing.assert_array_equal(x.grad, x.data)
    assert not x.detach().requires_grad


def test_numpy_and_item():
    x = Tensor(np.array([[4.0]]))
    assert x.numpy() is x.data
    assert x.item() == 4.0 and isinstance(x.item(), float)
    with pytest.raises(ValueError, match="single-element"):
        Tensor([1.0, 2.0]).item()


def test_operators_accept_ndarrays_on_the_left():
    x = Tensor(np.array([1.0, 2.0]))
    result = np.array([10.0, 20.0]) - x
    assert isinstance(result, Tensor)
    assert result.data.tolist() == [9.0, 18.0]


@pytest.mark.parametrize(
    "misuse, error",
    [
        (lambda x: x ** Tensor(2.0), TypeError),
        (lambda x: x + "a", TypeError),
        (lambda x: x[Tensor(0.0)], TypeError),
        (lambda x: x.squeeze(0), ValueError),
        (lambda x: x @ 2.0, ValueError),
    ],
)
def test_misuse_raises_a_clear_error(misuse, error):
    with pytest.raises(error):
        misuse(Tensor(np.ones((2, 3))))
