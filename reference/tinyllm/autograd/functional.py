"""Differentiable functions on Tensors (used as ``F``), beyond the Tensor's own operators.

Every function follows the dtype rule of ``tinyllm.autograd.tensor``: inputs of one float dtype in,
the same dtype out; scalars take the Tensor's dtype; mixed float dtypes raise ``TypeError``.
Masks are bool numpy arrays, never Tensors: they select, they are not differentiated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tinyllm.autograd.tensor import Tensor


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _check_mask(mask: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
    """A bool ndarray that broadcasts to ``shape`` without enlarging it, or a clear error."""
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        got = mask.dtype if isinstance(mask, np.ndarray) else type(mask).__name__
        raise TypeError(f"{name} must be a bool numpy array, got {got}")
    try:
        broadcast = np.broadcast_shapes(mask.shape, shape)
    except ValueError:
        broadcast = None
    if broadcast != shape:
        raise ValueError(f"{name} of shape {mask.shape} does not broadcast to shape {shape}")
    return mask


def _elementwise(
    x: Any, forward: Callable[[np.ndarray], np.ndarray], slope: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> Tensor:
    """An elementwise op whose derivative ``slope(x, y)`` is known in closed form."""
    x = _tensor(x)
    out = Tensor._from_op(forward(x.data), (x,))

    def _backward() -> None:
        x._receive(out.grad * slope(x.data, out.data))

    out._backward = _backward
    return out


def tanh(x: Any) -> Tensor:
    return _elementwise(x, np.tanh, lambda x, y: 1 - y * y)


def exp(x: Any) -> Tensor:
    return _elementwise(x, np.exp, lambda x, y: y)


def log(x: Any) -> Tensor:
    """Natural log; log(0) is -inf and a negative input is nan, as in numpy."""
    return _elementwise(x, np.log, lambda x, y: 1 / x)


def matmul(a: Any, b: Any) -> Tensor:
    """``a @ b`` with numpy's semantics: batched, broadcast, and 1-D operands as vectors."""
    return _tensor(a) @ b


def softmax(x: Any, axis: int = -1) -> Tensor:
    """Softmax along ``axis``, shifted by the maximum so large scores cannot overflow.

    Entries may be -inf (they get weight exactly 0 and gradient exactly 0). A slice that is -inf
    everywhere has no softmax: its output is nan, as in torch, so a masked read must handle an
    all-padding row itself (see ``tinyllm.seq2seq.additive.masked_read``).
    """
    x = _tensor(x)
    shifted = x.data - x.data.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    out = Tensor._from_op(e / e.sum(axis=axis, keepdims=True), (x,))

    def _backward() -> None:
        y, g = out.data, out.grad
        # Jacobian-vector product y * (g - <g, y>): exactly 0 wherever y is exactly 0.
        x._receive(y * (g - (g * y).sum(axis=axis, keepdims=True)))

    out._backward = _backward
    return out


def cat(tensors: Sequence[Tensor], axis: int = -1) -> Tensor:
    """Concatenate along ``axis``; every tensor must share one dtype."""
    if not tensors:
        raise ValueError("cat() needs at least one tensor")
    parts = [_tensor(t) for t in tensors]
    for part in parts[1:]:
        parts[0]._coerce(part)  # raises on a dtype mismatch
    out = Tensor._from_op(np.concatenate([p.data for p in parts], axis=axis), tuple(parts))
    boundaries = np.cumsum([p.shape[axis] for p in parts])[:-1]

    def _backward() -> None:
        for part, grad in zip(parts, np.split(out.grad, boundaries, axis=axis)):
            part._receive(grad)

    out._backward = _backward
    return out


def where(cond: np.ndarray, a: Any, b: Any) -> Tensor:
    """``a`` where ``cond`` is True, else ``b``; the gradient goes only to the side chosen."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError("where() needs at least one Tensor among a and b")
    a = a if isinstance(a, Tensor) else b._coerce(a)
    b = a._coerce(b)
    shape = np.broadcast_shapes(np.shape(cond), a.shape, b.shape)
    cond = _check_mask(cond, shape, "where() cond")
    out = Tensor._from_op(np.where(cond, a.data, b.data), (a, b))

    def _backward() -> None:
        a._receive(np.where(cond, out.grad, 0))
        b._receive(np.where(cond, 0, out.grad))

    out._backward = _backward
    return out


def masked_fill(x: Any, mask: np.ndarray, value: float) -> Tensor:
    """``x`` with ``value`` wherever ``mask`` is True (``value`` may be -inf).

    Filled positions no longer depend on ``x``, so they pass back exactly zero gradient.
    """
    x = _tensor(x)
    mask = _check_mask(mask, x.shape, "masked_fill() mask")
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"masked_fill() value must be a number, got {type(value).__name__}")
    out = Tensor._from_op(np.where(mask, x.dtype.type(value), x.data), (x,))

    def _backward() -> None:
        x._receive(np.where(mask, 0, out.grad))

    out._backward = _backward
    return out


def linear(x: Any, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias``, with ``weight`` stored ``[out, in]`` as in torch checkpoints."""
    x = _tensor(x)
    if weight.ndim != 2:
        raise ValueError(f"linear() weight must be 2-D [out, in], got shape {weight.shape}")
    if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear() input of shape {x.shape} does not end in in_features={weight.shape[1]}")
    out = x @ weight.transpose(0, 1)
    return out if bias is None else out + bias
