# Contract of tinyllm.nn.linear (course module L0.4).
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn.module import Module, Parameter
from tinyllm.random import PCG32

class Linear(Module):
    in_features: int
    out_features: int
    weight: Parameter  # float32 [out_features, in_features], uniform(+-1/sqrt(in_features))
    bias: Parameter | None  # float32 [out_features], drawn after the weight
    def __init__(self, in_features: int, out_features: int, bias: bool = True, rng: PCG32 | None = None) -> None: ...
    def forward(self, x: Tensor) -> Tensor: ...  # [..., in_features] -> [..., out_features]
