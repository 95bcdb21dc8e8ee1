# Contract of tinyllm.nn.module (course module L0.4).
from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np

from tinyllm.autograd.tensor import Tensor

class Parameter(Tensor):  # always requires_grad
    def __init__(self, data: Any) -> None: ...

class LoadResult(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]

class Module:
    # Parameters and submodules assigned as attributes are registered in assignment order;
    # names are dotted ("combine.weight"). Subclasses must call super().__init__() first.
    def __init__(self) -> None: ...
    def __setattr__(self, name: str, value: Any) -> None: ...
    def __delattr__(self, name: str) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...  # calls forward
    def forward(self, *args: Any, **kwargs: Any) -> Any: ...
    def named_parameters(self) -> list[tuple[str, Parameter]]: ...
    def parameters(self) -> list[Parameter]: ...
    def state_dict(self) -> OrderedDict[str, np.ndarray]: ...  # copies
    # KeyError on missing/unexpected keys (strict only), ValueError on a shape mismatch (always);
    # values are cast to each parameter's current dtype.
    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> LoadResult: ...
    def zero_grad(self) -> None: ...
    def to(self, dtype: Any) -> Module: ...  # np.float32 or np.float64, in place; returns self
