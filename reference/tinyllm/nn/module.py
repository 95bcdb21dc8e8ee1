"""Parameter and Module: the bookkeeping that gives every weight a stable, dotted name.

Names matter beyond readability: checkpoints (``state_dict``) are keyed by them, and the course
tests check them (e.g. ``score_proj.weight``, ``combine.weight``), so a module's parameters are
listed in the order its ``__init__`` assigned them, with submodules' names prefixed by the
attribute they were assigned to.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np

from tinyllm.autograd.tensor import FLOAT_DTYPES, Tensor


def _as_array(value: Any) -> np.ndarray:
    return value.data if isinstance(value, Tensor) else np.asarray(value)


class Parameter(Tensor):
    """A Tensor that a Module registers and trains: it always requires a gradient."""

    def __init__(self, data: Any) -> None:
        super().__init__(data, requires_grad=True)


class LoadResult(NamedTuple):
    """What ``load_state_dict(strict=False)`` skipped."""

    missing_keys: list[str]  # parameters of the module that the state dict did not have
    unexpected_keys: list[str]  # keys of the state dict that name no parameter


class Module:
    """Base class: assign Parameters and Modules as attributes and they are registered in order."""

    def __init__(self) -> None:
        # One dict for both kinds keeps their relative order (torch keeps two and loses it).
        object.__setattr__(self, "_children", OrderedDict())

    def __setattr__(self, name: str, value: Any) -> None:
        children = self.__dict__.get("_children")
        if isinstance(value, (Parameter, Module)):
            if children is None:
                raise AttributeError(f"{type(self).__name__}.__init__ must call super().__init__() first")
            children[name] = value
        elif children is not None:
            children.pop(name, None)  # e.g. `self.bias = None` unregisters a parameter
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._children.pop(name, None)
        object.__delattr__(self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def named_parameters(self) -> list[tuple[str, Parameter]]:
        """(dotted name, parameter) in registration order; a shared parameter is listed once."""
        named: list[tuple[str, Parameter]] = []
        seen: set[Parameter] = set()
        for name, parameter in self._walk(prefix=""):
            if parameter not in seen:
                seen.add(parameter)
                named.append((name, parameter))
        return named

    def _walk(self, prefix: str) -> list[tuple[str, Parameter]]:
        found: list[tuple[str, Parameter]] = []
        for name, child in self._children.items():
            if isinstance(child, Parameter):
                found.append((prefix + name, child))
            else:
                found.extend(child._walk(prefix + name + "."))
        return found

    def parameters(self) -> list[Parameter]:
        return [parameter for _, parameter in self.named_parameters()]

    def state_dict(self) -> OrderedDict[str, np.ndarray]:
        """Copies of every parameter's values: later training does not change a saved checkpoint."""
        return OrderedDict((name, p.data.copy()) for name, p in self.named_parameters())

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> LoadResult:
        """Copy values in by name, cast to each parameter's current dtype.

        Everything is checked before anything is written, so a failed load leaves the module as
        it was. Shapes must always match; ``strict=False`` only tolerates missing or unexpected keys.
        """
        own = dict(self.named_parameters())
        result = LoadResult(
            missing_keys=[name for name in own if name not in state_dict],
            unexpected_keys=[key for key in state_dict if key not in own],
        )
        if strict and (result.missing_keys or result.unexpected_keys):
            raise KeyError(
                f"state dict does not match {type(self).__name__}: "
                f"missing keys {result.missing_keys}, unexpected keys {result.unexpected_keys}"
            )
        values = {name: _as_array(state_dict[name]) for name in own if name in state_dict}
        for name, value in values.items():
            if value.shape != own[name].shape:
                raise ValueError(f"shape mismatch for {name}: checkpoint {value.shape}, module {own[name].shape}")
        for name, value in values.items():
            own[name].data = value.astype(own[name].dtype)  # astype copies: caller's array stays theirs
        return result

    def zero_grad(self) -> None:
        for parameter in self.parameters():
            parameter.grad = None

    def to(self, dtype: Any) -> Module:
        """Cast every parameter (and its gradient) to float32 or float64, in place."""
        target = np.dtype(dtype)
        if target not in FLOAT_DTYPES:
            raise TypeError(f"Module.to() takes np.float32 or np.float64, not {dtype!r}")
        for parameter in self.parameters():
            parameter.data = parameter.data.astype(target)
            if parameter.grad is not None:
                parameter.grad = parameter.grad.astype(target)
        return self
