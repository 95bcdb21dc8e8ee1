"""Tensor: a numpy array that remembers how it was computed, so gradients can flow back.

Built like micrograd's ``engine.py``: every op computes its output and attaches a ``_backward``
closure that pushes the output's gradient to its inputs; ``backward()`` visits the graph in
reverse topological order and runs those closures.

Dtype rule (one rule, applied by every op, here and in ``functional``): a Tensor holds float32 or
float64. Python numbers, lists and integer/bool arrays become float32 when wrapped, and take the
other operand's dtype when used in an op with a Tensor (a scalar never upcasts). Two float operands
of different dtypes raise ``TypeError``: nothing is converted silently, so a float64 gradient check
really runs in float64.

Wrapping a float32/float64 array does not copy it (like ``torch.from_numpy``); ops never write
into their inputs.

Gradient rule: leaf tensors with ``requires_grad`` accumulate into ``.grad`` across ``backward()``
calls (call ``Module.zero_grad()`` between steps); an intermediate tensor's ``.grad`` holds the
gradient from the latest ``backward()`` call only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _as_float_array(data: Any) -> np.ndarray:
    """Wrap ``data`` without copying where possible, following the module's dtype rule."""
    if isinstance(data, Tensor):
        raise TypeError("Tensor() got a Tensor; use .detach() for a copy outside the graph")
    if isinstance(data, (np.ndarray, np.generic)):
        array = np.asarray(data)
        if array.dtype in FLOAT_DTYPES:
            return array
        if array.dtype.kind in "biu":
            return array.astype(np.float32)
        raise TypeError(f"unsupported dtype {array.dtype}: tinyllm computes in float32 or float64")
    return np.asarray(data, dtype=np.float32)


def _unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the axes numpy broadcast, so it matches the operand's ``shape`` again."""
    extra = grad.ndim - len(shape)
    if extra:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad


def _expand_reduced(
    grad: np.ndarray, shape: tuple[int, ...], axis: int | tuple[int, ...] | None, keepdims: bool
) -> np.ndarray:
    """Undo a reduction's shape change: put the reduced axes back and broadcast over them."""
    if not keepdims:
        axes = tuple(range(len(shape))) if axis is None else normalize_axis_tuple(axis, len(shape))
        grad = np.expand_dims(grad, axes)
    return np.broadcast_to(grad, shape)


def _no_backward() -> None:
    """Leaves and constants have nothing upstream to send a gradient to."""


class Tensor:
    """An n-dimensional float32/float64 array with reverse-mode automatic differentiation."""

    # Makes `ndarray + Tensor` defer to Tensor.__radd__ instead of building an object array.
    __array_ufunc__ = None

    def __init__(self, data: Any, requires_grad: bool = False) -> None:
        self.data: np.ndarray = _as_float_array(data)
        self.grad: np.ndarray | None = None
        self.requires_grad: bool = bool(requires_grad)
        self._prev: tuple[Tensor, ...] = ()
        self._backward: Callable[[], None] = _no_backward

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    def __repr__(self) -> str:
        flag = ", requires_grad=True" if self.requires_grad else ""
        return f"Tensor({self.data!r}{flag})"

    # -- graph plumbing ------------------------------------------------------------------------

    @staticmethod
    def _from_op(data: np.ndarray, parents: tuple[Tensor, ...]) -> Tensor:
        """An op's output: it needs a gradient only if one of its inputs does."""
        tracked = tuple(p for p in parents if p.requires_grad)
        out = Tensor(data, requires_grad=bool(tracked))
        out._prev = tracked
        return out

    def _coerce(self, other: Any) -> Tensor:
        """``other`` as a Tensor for an op with ``self``, by the module's dtype rule."""
        if isinstance(other, Tensor):
            tensor = other
        elif isinstance(other, (bool, int, float, np.number, np.bool_)):
            tensor = Tensor(np.asarray(other, dtype=self.dtype))
        elif isinstance(other, np.ndarray):
            weak = other.dtype.kind in "biu"  # integer/bool arrays, like scalars, take our dtype
            tensor = Tensor(other.astype(self.dtype) if weak else other)
        else:
            raise TypeError(f"cannot combine a Tensor with {type(other).__name__}")
        if tensor.dtype != self.dtype:
            raise TypeError(
                f"dtype mismatch: {self.dtype} and {tensor.dtype}; tinyllm never converts silently, "
                "so make both operands the same dtype (Module.to(dtype) casts a module)"
            )
        return tensor

    def _receive(self, grad: np.ndarray) -> None:
        """Add an upstream gradient, summed back over any axes the forward op broadcast."""
        if not self.requires_grad:
            return
        grad = _unbroadcast(grad, self.shape)
        if self.grad is None:
            self.grad = np.array(grad, dtype=self.dtype)  # a copy: one array may feed two parents
        else:
            self.grad = self.grad + grad

    def _topological_order(self) -> list[Tensor]:
        """Every tensor this one depends on, inputs before outputs (iterative: graphs can be deep)."""
        order: list[Tensor] = []
        visited: set[Tensor] = set()
        stack: list[tuple[Tensor, bool]] = [(self, False)]
        while stack:
            node, inputs_done = stack.pop()
            if inputs_done:
                order.append(node)
            elif node not in visited:
                visited.add(node)
                stack.append((node, True))
                stack.extend((parent, False) for parent in node._prev if parent not in visited)
        return order

    def backward(self, grad: Any = None) -> None:
        """Accumulate d(self)/d(leaf) · ``grad`` into every leaf that requires a gradient."""
        if not self.requires_grad:
            raise RuntimeError("backward() on a tensor that does not require grad")
        if grad is None:
            if self.data.size != 1:
                raise RuntimeError(
                    f"backward() without a grad needs a single-element tensor, not shape {self.shape}"
                )
            seed = np.ones_like(self.data)
        else:
            seed = np.asarray(grad.data if isinstance(grad, Tensor) else grad, dtype=self.dtype)
            if seed.shape != self.shape:
                raise ValueError(f"backward() grad has shape {seed.shape}, tensor has {self.shape}")
        order = self._topological_order()
        for node in order:
            if node._prev:
                node.grad = None  # intermediate grads describe this call only; leaves accumulate
        self._receive(seed)
        for node in reversed(order):
            if node.grad is not None:
                node._backward()

    # -- views of the value --------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """The underlying array (shared, not copied, like torch's ``.numpy()``)."""
        return self.data

    def detach(self) -> Tensor:
        """The same values outside the graph: no gradient flows through the result."""
        return Tensor(self.data)

    def item(self) -> float:
        if self.data.size != 1:
            raise ValueError(f"item() needs a single-element tensor, not shape {self.shape}")
        return float(self.data.reshape(()))

    # -- elementwise arithmetic ----------------------------------------------------------------

    def __add__(self, other: Any) -> Tensor:
        other = self._coerce(other)
        out = Tensor._from_op(self.data + other.data, (self, other))

        def _backward() -> None:
            self._receive(out.grad)
            other._receive(out.grad)

        out._backward = _backward
        return out

    def __mul__(self, other: Any) -> Tensor:
        other = self._coerce(other)
        out = Tensor._from_op(self.data * other.data, (self, other))

        def _backward() -> None:
            self._receive(out.grad * other.data)
            other._receive(out.grad * self.data)

        out._backward = _backward
        return out

    def __truediv__(self, other: Any) -> Tensor:
        other = self._coerce(other)
        out = Tensor._from_op(self.data / other.data, (self, other))

        def _backward() -> None:
            self._receive(out.grad / other.data)
            other._receive(-out.grad * out.data / other.data)  # d(a/b)/db = -a/b² = -out/b

        out._backward = _backward
        return out

    def __neg__(self) -> Tensor:
        out = Tensor._from_op(-self.data, (self,))

        def _backward() -> None:
            self._receive(-out.grad)

        out._backward = _backward
        return out

    def __pow__(self, exponent: int | float) -> Tensor:
        if isinstance(exponent, bool) or not isinstance(exponent, (int, float, np.integer, np.floating)):
            raise TypeError(f"Tensor ** needs a number as exponent, not {type(exponent).__name__}")
        exponent = exponent.item() if isinstance(exponent, np.generic) else exponent  # numpy scalars upcast
        out = Tensor._from_op(self.data**exponent, (self,))

        def _backward() -> None:
            if exponent == 0:  # x**0 is constant; avoid 0 * x**-1 = nan at x = 0
                return
            self._receive(out.grad * exponent * self.data ** (exponent - 1))

        out._backward = _backward
        return out

    def __sub__(self, other: Any) -> Tensor:
        return self + (-self._coerce(other))

    def __radd__(self, other: Any) -> Tensor:  # other + self
        return self + other

    def __rsub__(self, other: Any) -> Tensor:  # other - self
        return (-self) + other

    def __rmul__(self, other: Any) -> Tensor:  # other * self
        return self * other

    def __rtruediv__(self, other: Any) -> Tensor:  # other / self
        return self._coerce(other) / self

    # -- matrix product ------------------------------------------------------------------------

    def __matmul__(self, other: Any) -> Tensor:
        other = self._coerce(other)
        if self.ndim == 0 or other.ndim == 0:
            raise ValueError("matmul needs operands with at least one dimension, not scalars")
        out = Tensor._from_op(np.matmul(self.data, other.data), (self, other))

        def _backward() -> None:
            # Work in numpy's promoted shapes: a 1-D left operand is a row, a 1-D right one a column.
            a = self.data[None, :] if self.ndim == 1 else self.data
            b = other.data[:, None] if other.ndim == 1 else other.data
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            grad = out.grad.reshape(batch + (a.shape[-2], b.shape[-1]))  # numpy dropped only 1s
            if self.requires_grad:
                self._receive(_unbroadcast(grad @ np.swapaxes(b, -1, -2), a.shape).reshape(self.shape))
            if other.requires_grad:
                other._receive(_unbroadcast(np.swapaxes(a, -1, -2) @ grad, b.shape).reshape(other.shape))

        out._backward = _backward
        return out

    def __rmatmul__(self, other: Any) -> Tensor:  # other @ self
        return self._coerce(other) @ self

    # -- reductions ----------------------------------------------------------------------------

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        out = Tensor._from_op(self.data.sum(axis=axis, keepdims=keepdims), (self,))

        def _backward() -> None:
            self._receive(_expand_reduced(out.grad, self.shape, axis, keepdims))

        out._backward = _backward
        return out

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        out = Tensor._from_op(self.data.mean(axis=axis, keepdims=keepdims), (self,))
        count = self.data.size // max(out.data.size, 1)

        def _backward() -> None:
            self._receive(_expand_reduced(out.grad, self.shape, axis, keepdims) / count)

        out._backward = _backward
        return out

    # -- shape ---------------------------------------------------------------------------------

    def _same_values_new_shape(self, data: np.ndarray) -> Tensor:
        """Output of reshape/unsqueeze/squeeze: the gradient only needs the old shape back."""
        out = Tensor._from_op(data, (self,))

        def _backward() -> None:
            self._receive(out.grad.reshape(self.shape))

        out._backward = _backward
        return out

    def reshape(self, *shape: int | tuple[int, ...]) -> Tensor:
        """``t.reshape(2, 3)`` or ``t.reshape((2, 3))``; one dimension may be -1."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return self._same_values_new_shape(self.data.reshape(shape))

    def unsqueeze(self, axis: int) -> Tensor:
        return self._same_values_new_shape(np.expand_dims(self.data, axis))

    def squeeze(self, axis: int) -> Tensor:
        if self.shape[axis] != 1:
            raise ValueError(f"squeeze({axis}) needs a dimension of size 1, shape is {self.shape}")
        return self._same_values_new_shape(np.squeeze(self.data, axis))

    def transpose(self, a0: int, a1: int) -> Tensor:
        out = Tensor._from_op(np.swapaxes(self.data, a0, a1), (self,))

        def _backward() -> None:
            self._receive(np.swapaxes(out.grad, a0, a1))

        out._backward = _backward
        return out

    def __getitem__(self, index: Any) -> Tensor:
        if isinstance(index, Tensor):
            raise TypeError("index a Tensor with ints, slices or numpy arrays, not a Tensor")
        out = Tensor._from_op(self.data[index], (self,))

        def _backward() -> None:
            grad = np.zeros_like(self.data)
            np.add.at(grad, index, out.grad)  # add.at, not +=: a repeated index gets every contribution
            self._receive(grad)

        out._backward = _backward
        return out
