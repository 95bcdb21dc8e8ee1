from tinyllm.nn.linear import Linear as Linear
from tinyllm.nn.module import LoadResult as LoadResult
from tinyllm.nn.module import Module as Module
from tinyllm.nn.module import Parameter as Parameter

__all__ = ["LoadResult", "Linear", "Module", "Parameter"]
