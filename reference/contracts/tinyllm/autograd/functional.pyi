# Contract of tinyllm.autograd.functional (course module L0.2), imported as F.
# Masks and conditions are bool numpy arrays, never Tensors.
from collections.abc import Sequence

import numpy as np

from tinyllm.autograd.tensor import Tensor

def tanh(x: Tensor) -> Tensor: ...
def exp(x: Tensor) -> Tensor: ...
def log(x: Tensor) -> Tensor: ...
def matmul(a: Tensor, b: Tensor) -> Tensor: ...  # a @ b
def softmax(x: Tensor, axis: int = -1) -> Tensor: ...  # -inf entries get weight 0 and gradient 0
def cat(tensors: Sequence[Tensor], axis: int = -1) -> Tensor: ...  # one dtype for all
def where(cond: np.ndarray, a: Tensor | float, b: Tensor | float) -> Tensor: ...  # gradient to the chosen side only
def masked_fill(x: Tensor, mask: np.ndarray, value: float) -> Tensor: ...  # True = fill; filled positions get 0 gradient
def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor: ...  # x @ weight.T + bias, weight [out, in]
