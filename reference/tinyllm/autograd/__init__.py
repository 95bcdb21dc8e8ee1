"""Reverse-mode automatic differentiation over numpy arrays (course modules L0.1 and L0.2)."""

from tinyllm.autograd.tensor import Tensor

__all__ = ["Tensor"]
