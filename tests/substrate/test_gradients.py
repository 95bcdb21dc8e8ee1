"""Every differentiable op, checked against float64 central differences, and for dtype preservation.

One table of cases drives both checks; ``test_every_op_has_a_case`` fails when an op is added to
Tensor or functional without a case here (micrograd's tests never reached ``__rsub__``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor

NOT_DIFFERENTIABLE = {"__init__", "__repr__", "backward", "numpy", "detach", "item", "shape", "dtype", "ndim"}


@dataclass(frozen=True)
class Case:
    fn: Callable[..., Tensor]
    shapes: tuple[tuple[int, ...], ...]
    positive: bool = False  # inputs drawn from [0.5, 2]: for log, roots, division
    expected: Callable[..., np.ndarray] | None = None  # numpy forward; None: `fn` itself works on arrays


def const(x: Tensor, values: list | np.ndarray) -> np.ndarray:
    """A constant operand in ``x``'s dtype, so one case runs in float32 and float64."""
    return np.asarray(values).astype(x.dtype)


def numpy_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


MASK_23 = np.array([[True, False, False], [False, False, True]])
ROW_MASK = np.array([[False], [True]])

# Name: "<op>-<variant>"; the op part must be a Tensor method/dunder or a functional name.
CASES: dict[str, Case] = {
    "__add__-same": Case(lambda a, b: a + b, ((2, 3), (2, 3))),
    "__add__-broadcast": Case(lambda a, b: a + b, ((2, 1, 3), (4, 1))),
    "__add__-scalar": Case(lambda a: a + 1.5, ((2, 3),)),
    "__radd__-scalar": Case(lambda a: 2.5 + a, ((2, 3),)),
    "__radd__-ndarray": Case(lambda a: const(a, [1.0, -2.0, 3.0]) + a, ((2, 3),)),
    "__sub__-broadcast": Case(lambda a, b: a - b, ((2, 3), (3,))),
    "__sub__-self": Case(lambda a: a - a * a, ((3,),)),
    "__rsub__-scalar": Case(lambda a: 1.5 - a, ((2, 3),)),
    "__rsub__-ndarray": Case(lambda a: const(a, [[1.0], [2.0]]) - a, ((2, 3),)),
    "__mul__-broadcast": Case(lambda a, b: a * b, ((2, 3), (2, 1))),
    "__mul__-twice": Case(lambda a: a * a, ((4,),)),
    "__rmul__-scalar": Case(lambda a: 3 * a, ((2, 3),)),
    "__rmul__-ndarray": Case(lambda a: const(a, [2.0, -1.0, 0.5]) * a, ((2, 3),)),
    "__truediv__-broadcast": Case(lambda a, b: a / b, ((2, 3), (3,)), positive=True),
    "__truediv__-scalar": Case(lambda a: a / 4, ((2, 3),)),
    "__rtruediv__-scalar": Case(lambda a: 2.0 / a, ((2, 3),), positive=True),
    "__rtruediv__-ndarray": Case(lambda a: const(a, [1.0, 2.0, 3.0]) / a, ((2, 3),), positive=True),
    "__neg__": Case(lambda a: -a, ((2, 3),)),
    "__pow__-int": Case(lambda a: a**3, ((2, 3),)),
    "__pow__-root": Case(lambda a: a**0.5, ((2, 3),), positive=True),
    "__pow__-negative": Case(lambda a: a**-2, ((2, 3),), positive=True),
    "__matmul__-2d": Case(lambda a, b: a @ b, ((3, 4), (4, 2))),
    "__matmul__-batched": Case(lambda a, b: a @ b, ((2, 3, 4), (2, 4, 5))),
    "__matmul__-broadcast-batch": Case(lambda a, b: a @ b, ((2, 1, 3, 4), (3, 4, 2))),
    "__matmul__-matrix-right": Case(lambda a, b: a @ b, ((2, 3, 4), (4, 2))),
    "__matmul__-vector-left": Case(lambda a, b: a @ b, ((4,), (2, 4, 3))),
    "__matmul__-vector-right": Case(lambda a, b: a @ b, ((2, 3, 4), (4,))),
    "__matmul__-vector-vector": Case(lambda a, b: a @ b, ((4,), (4,))),
    "__rmatmul__-ndarray": Case(lambda a: const(a, np.arange(6.0).reshape(2, 3)) @ a, ((3, 2),)),
    "sum-all": Case(lambda a: a.sum(), ((2, 3, 4),)),
    "sum-axis": Case(lambda a: a.sum(axis=1), ((2, 3, 4),)),
    "sum-axes-keepdims": Case(lambda a: a.sum(axis=(0, 2), keepdims=True), ((2, 3, 4),)),
    "sum-negative-axis": Case(lambda a: a.sum(axis=-1, keepdims=True), ((2, 3, 4),)),
    "mean-all": Case(lambda a: a.mean(), ((2, 3, 4),)),
    "mean-axis": Case(lambda a: a.mean(axis=0), ((2, 3, 4),)),
    "mean-axes-keepdims": Case(lambda a: a.mean(axis=(1, 2), keepdims=True), ((2, 3, 4),)),
    "reshape-args": Case(lambda a: a.reshape(6, 4), ((2, 3, 4),)),
    "reshape-tuple": Case(lambda a: a.reshape((4, -1)), ((2, 3, 4),)),
    "transpose-outer": Case(lambda a: a.transpose(0, 2), ((2, 3, 4),), expected=lambda a: np.swapaxes(a, 0, 2)),
    "transpose-last-two": Case(lambda a: a.transpose(-1, -2), ((2, 3, 4),), expected=lambda a: np.swapaxes(a, -1, -2)),
    "unsqueeze-middle": Case(lambda a: a.unsqueeze(1), ((2, 3),), expected=lambda a: a[:, None]),
    "unsqueeze-last": Case(lambda a: a.unsqueeze(-1), ((2, 3),), expected=lambda a: a[..., None]),
    "squeeze": Case(lambda a: a.squeeze(1), ((2, 1, 3),), expected=lambda a: a[:, 0]),
    "__getitem__-int": Case(lambda a: a[1], ((3, 4),)),
    "__getitem__-slice": Case(lambda a: a[:, 1:3], ((3, 4),)),
    "__getitem__-step-ellipsis": Case(lambda a: a[..., ::2], ((2, 3, 4),)),
    "__getitem__-none": Case(lambda a: a[None, 0], ((3, 4),)),
    "__getitem__-repeated-index": Case(lambda a: a[np.array([0, 0, 2])], ((3, 4),)),
    "matmul": Case(lambda a, b: F.matmul(a, b), ((2, 3, 4), (4, 2)), expected=np.matmul),
    "tanh": Case(lambda a: F.tanh(a), ((2, 3),), expected=np.tanh),
    "exp": Case(lambda a: F.exp(a), ((2, 3),), expected=np.exp),
    "log": Case(lambda a: F.log(a), ((2, 3),), positive=True, expected=np.log),
    "softmax-last": Case(lambda a: F.softmax(a), ((2, 3, 4),), expected=numpy_softmax),
    "softmax-first": Case(lambda a: F.softmax(a, axis=0), ((2, 3, 4),), expected=lambda a: numpy_softmax(a, 0)),
    "softmax-minus-inf": Case(
        lambda a: F.softmax(F.masked_fill(a, MASK_23, -np.inf)),
        ((2, 3),),
        expected=lambda a: numpy_softmax(np.where(MASK_23, -np.inf, a)),
    ),
    "cat-last": Case(
        lambda a, b, c: F.cat([a, b, c]), ((2, 1), (2, 3), (2, 2)), expected=lambda *xs: np.concatenate(xs, -1)
    ),
    "cat-first": Case(
        lambda a, b: F.cat([a, b], axis=0), ((1, 3), (2, 3)), expected=lambda *xs: np.concatenate(xs, 0)
    ),
    "where": Case(lambda a, b: F.where(MASK_23, a, b), ((2, 3), (3,)), expected=lambda a, b: np.where(MASK_23, a, b)),
    "where-scalar": Case(lambda a: F.where(MASK_23, 0.5, a), ((2, 3),), expected=lambda a: np.where(MASK_23, 0.5, a)),
    "masked_fill": Case(
        lambda a: F.masked_fill(a, MASK_23, 0.25), ((2, 3),), expected=lambda a: np.where(MASK_23, 0.25, a)
    ),
    "masked_fill-broadcast-mask": Case(
        lambda a: F.masked_fill(a, ROW_MASK, -3.0), ((2, 3),), expected=lambda a: np.where(ROW_MASK, -3.0, a)
    ),
    "linear-bias": Case(
        lambda x, w, b: F.linear(x, w, b), ((2, 3, 4), (5, 4), (5,)), expected=lambda x, w, b: x @ w.T + b
    ),
    "linear-no-bias": Case(lambda x, w: F.linear(x, w), ((3, 4), (2, 4)), expected=lambda x, w: x @ w.T),
}


def draw_inputs(case: Case, seed: int, dtype: type) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    draw = (lambda s: rng.uniform(0.5, 2.0, s)) if case.positive else rng.standard_normal
    return [np.asarray(draw(shape)).astype(dtype) for shape in case.shapes]


def central_differences(loss: Callable[[], float], array: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d loss / d array, one element at a time, perturbing ``array`` in place."""
    grad = np.zeros_like(array)
    for index in np.ndindex(array.shape):
        kept = array[index]
        array[index] = kept + eps
        above = loss()
        array[index] = kept - eps
        below = loss()
        array[index] = kept
        grad[index] = (above - below) / (2 * eps)
    return grad


@pytest.mark.parametrize("name", CASES)
def test_forward_matches_numpy(name):
    case = CASES[name]
    arrays = draw_inputs(case, seed=len(name), dtype=np.float64)
    expected = (case.expected or case.fn)(*arrays)
    np.testing.assert_allclose(case.fn(*(Tensor(a) for a in arrays)).data, expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_central_differences(name):
    case = CASES[name]
    arrays = draw_inputs(case, seed=len(name), dtype=np.float64)
    inputs = [Tensor(array, requires_grad=True) for array in arrays]
    out = case.fn(*inputs)
    upstream = np.random.default_rng(1).standard_normal(out.shape)  # not all-ones: catches transposed grads
    (out * upstream).sum().backward()

    def loss() -> float:
        return float((case.fn(*(Tensor(a) for a in arrays)).data * upstream).sum())

    for position, (tensor, array) in enumerate(zip(inputs, arrays)):
        assert tensor.grad is not None, f"input {position} got no gradient"
        np.testing.assert_allclose(
            tensor.grad, central_differences(loss, array), rtol=1e-6, atol=1e-8, err_msg=f"input {position}"
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", CASES)
def test_every_op_keeps_the_dtype(name, dtype):
    case = CASES[name]
    inputs = [Tensor(array, requires_grad=True) for array in draw_inputs(case, seed=0, dtype=dtype)]
    out = case.fn(*inputs)
    assert out.dtype == dtype
    out.sum().backward()
    assert all(tensor.grad.dtype == dtype for tensor in inputs)


def is_public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def differentiable_ops() -> set[str]:
    tensor_ops = {name for name, member in vars(Tensor).items() if inspect.isfunction(member) and is_public(name)}
    functional_ops = {
        name
        for name, member in vars(F).items()
        if inspect.isfunction(member) and member.__module__ == F.__name__ and is_public(name)
    }
    return (tensor_ops | functional_ops) - NOT_DIFFERENTIABLE


def test_every_op_has_a_case():
    covered = {name.split("-")[0] for name in CASES}
    assert differentiable_ops() - covered == set()
    assert covered - differentiable_ops() == set(), "a case names an op that does not exist"


def test_inputs_without_requires_grad_get_no_gradient():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    constant = Tensor(np.full((2, 3), 2.0))
    out = F.tanh(x * constant).sum()
    assert out.requires_grad and not (constant * 2.0).requires_grad
    out.backward()
    assert constant.grad is None and x.grad is not None
