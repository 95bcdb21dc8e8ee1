"""Linear: the affine layer ``y = x W^T + b`` with torch's weight layout ``[out, in]``."""

from __future__ import annotations

import math

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn.module import Module, Parameter
from tinyllm.random import PCG32


class Linear(Module):
    """Weight ``[out_features, in_features]`` then bias ``[out_features]``, both float32.

    Both are drawn from uniform(-1/sqrt(in), 1/sqrt(in)) (torch's default bound), weight first,
    from ``rng`` or a fresh ``PCG32()``: with no rng, two Linears of one shape start identical,
    which keeps course examples reproducible. Pass one shared rng to get different layers.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, rng: PCG32 | None = None) -> None:
        super().__init__()
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Linear {name} must be a positive int, got {value!r}")
        rng = PCG32() if rng is None else rng
        bound = 1.0 / math.sqrt(in_features)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(rng.uniform(-bound, bound, size=(out_features, in_features)).astype(np.float32))
        self.bias = Parameter(rng.uniform(-bound, bound, size=out_features).astype(np.float32)) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)
