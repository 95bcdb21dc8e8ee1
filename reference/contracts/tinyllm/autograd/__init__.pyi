from tinyllm.autograd.tensor import Tensor as Tensor

__all__ = ["Tensor"]
