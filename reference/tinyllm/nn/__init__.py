"""Modules with named, registered parameters (course module L0.4), torch-style on purpose."""

from tinyllm.nn.linear import Linear
from tinyllm.nn.module import LoadResult, Module, Parameter

__all__ = ["LoadResult", "Linear", "Module", "Parameter"]
