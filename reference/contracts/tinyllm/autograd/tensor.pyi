# Contract of tinyllm.autograd.tensor (course module L0.1).
#
# Dtype rule: a Tensor holds float32 or float64. Python numbers, lists and int/bool arrays become
# float32 when wrapped and take the other operand's dtype in an op (scalars never upcast); two
# float operands of different dtypes raise TypeError. Leaf gradients accumulate across backward().
from typing import Any, ClassVar

import numpy as np

FLOAT_DTYPES: tuple[np.dtype[Any], ...]  # (float32, float64): the only dtypes a Tensor holds

# Anything an operator accepts on its other side.
_Operand = Tensor | float | int | np.ndarray | np.number[Any] | np.bool_
_Axis = int | tuple[int, ...] | None

class Tensor:
    __array_ufunc__: ClassVar[None]  # `ndarray op Tensor` defers to the Tensor's reflected operator
    data: np.ndarray
    grad: np.ndarray | None  # same shape and dtype as data, after backward()
    requires_grad: bool
    def __init__(self, data: Any, requires_grad: bool = False) -> None: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def ndim(self) -> int: ...
    def backward(self, grad: Any = None) -> None: ...  # grad defaults to 1 for a single element
    def numpy(self) -> np.ndarray: ...  # shares memory with the tensor
    def detach(self) -> Tensor: ...  # same values, outside the graph
    def item(self) -> float: ...  # single-element tensors only
    def sum(self, axis: _Axis = None, keepdims: bool = False) -> Tensor: ...
    def mean(self, axis: _Axis = None, keepdims: bool = False) -> Tensor: ...
    def reshape(self, *shape: int | tuple[int, ...]) -> Tensor: ...  # reshape(2, 3) or reshape((2, 3))
    def transpose(self, a0: int, a1: int) -> Tensor: ...  # swaps axes a0 and a1
    def unsqueeze(self, axis: int) -> Tensor: ...
    def squeeze(self, axis: int) -> Tensor: ...  # the axis must have size 1
    def __getitem__(self, index: Any) -> Tensor: ...  # ints, slices, None, Ellipsis, int arrays
    def __add__(self, other: _Operand) -> Tensor: ...
    def __radd__(self, other: _Operand) -> Tensor: ...
    def __sub__(self, other: _Operand) -> Tensor: ...
    def __rsub__(self, other: _Operand) -> Tensor: ...  # other - self
    def __mul__(self, other: _Operand) -> Tensor: ...
    def __rmul__(self, other: _Operand) -> Tensor: ...
    def __truediv__(self, other: _Operand) -> Tensor: ...
    def __rtruediv__(self, other: _Operand) -> Tensor: ...  # other / self
    def __neg__(self) -> Tensor: ...
    def __pow__(self, exponent: int | float) -> Tensor: ...  # a Python number, not a Tensor
    def __matmul__(self, other: Tensor | np.ndarray) -> Tensor: ...  # numpy matmul: batched, 1-D operands
    def __rmatmul__(self, other: Tensor | np.ndarray) -> Tensor: ...
