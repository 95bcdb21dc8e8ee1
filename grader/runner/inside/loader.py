"""Installing one run's module under the graded name, and swapping it into pre-collected tests.

Every run (reference, variant, mutant) must look the same to the tests: the same module name,
``__file__``, ``__spec__``, no ``__cached__``, no linecache entry, no source on disk. So the
module is compiled from bytes in memory and executed into a fresh module object.

The student's tests are collected once, in the zygote, against a *placeholder* module rather
than a real implementation: the zygote then never holds any implementation's code, so no child
can find another run's module in inherited memory. Names the tests took from the placeholder at
import time (``from ...luong import LuongAttention``, ``import ...luong as L``) are rebound in
each child, by identity, to the real module's objects.
"""

from __future__ import annotations

import importlib.machinery
import marshal
import sys
import types
from collections.abc import Iterable


class UnboundPlaceholder:
    """Stands for ``module.<path>`` while tests are collected without any implementation.

    Calling one, or using it in a way rebinding cannot reach (a default argument, a value
    computed at import time), fails with a message that says how to write the test instead.
    """

    def __init__(self, module: PlaceholderModule, path: tuple[str, ...]) -> None:
        self._module = module
        self._path = path
        self._children: dict[str, UnboundPlaceholder] = {}

    @property
    def qualname(self) -> str:
        return ".".join((self._module.__name__, *self._path))

    def __getattr__(self, name: str) -> UnboundPlaceholder:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._children:
            self._children[name] = UnboundPlaceholder(self._module, (*self._path, name))
        return self._children[name]

    def resolve(self, real: types.ModuleType) -> object:
        value: object = real
        for name in self._path:
            value = getattr(value, name)
        return value

    def __call__(self, *args: object, **kwargs: object) -> object:
        raise RuntimeError(
            f"{self.qualname} was used at import time or held where the runner cannot swap it "
            "(a default argument, a module-level value built from it); use it inside tests or fixtures"
        )

    def __repr__(self) -> str:
        return f"<placeholder for {self.qualname}>"


class PlaceholderModule(types.ModuleType):
    """The graded module as seen during collection: any public attribute is a placeholder."""

    def __init__(self, name: str, file: str) -> None:
        super().__init__(name)
        self.__file__ = file
        self.__spec__ = _spec(name, file)
        self._placeholders: dict[str, UnboundPlaceholder] = {}

    def __getattr__(self, name: str) -> UnboundPlaceholder:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._placeholders:
            self._placeholders[name] = UnboundPlaceholder(self, (name,))
        return self._placeholders[name]


def _spec(name: str, file: str) -> importlib.machinery.ModuleSpec:
    # No loader and has_location False: nothing (inspect, linecache, traceback) can fetch source,
    # and no __cached__ path is derived from the origin.
    return importlib.machinery.ModuleSpec(name, loader=None, origin=file)


def _bind(name: str, module: types.ModuleType) -> None:
    sys.modules[name] = module
    parent, _, leaf = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], leaf, module)


def install_placeholder(name: str, file: str) -> PlaceholderModule:
    """Put a placeholder under ``name`` so test modules import cleanly during collection."""
    placeholder = PlaceholderModule(name, file)
    _bind(name, placeholder)
    return placeholder


def install(source: bytes, name: str, file: str, *, compiled: bool = False) -> types.ModuleType:
    """Compile ``source`` in memory (or, if ``compiled``, unmarshal the code the trusted side
    compiled as ``file``) and execute it as module ``name`` (bound in its package too)."""
    code = marshal.loads(source) if compiled else compile(source, file, "exec", dont_inherit=True)
    if not isinstance(code, types.CodeType):
        raise TypeError(f"expected a code object, got {type(code).__name__}")
    module = types.ModuleType(name)
    module.__file__ = file
    module.__spec__ = _spec(name, file)
    module.__loader__ = None
    _bind(name, module)
    exec(code, module.__dict__)
    return module


def rebind(placeholder: PlaceholderModule, real: types.ModuleType, namespaces: Iterable[dict]) -> int:
    """Replace every placeholder value in ``namespaces`` with the real object; return how many.

    A name the real module lacks is left as its placeholder, so the test fails with the
    placeholder's message, as it would fail with an ImportError on a plain import.
    """
    swaps: dict[int, object] = {id(placeholder): real}
    pending = list(placeholder._placeholders.values())
    while pending:
        stand_in = pending.pop()
        pending.extend(stand_in._children.values())
        try:
            swaps[id(stand_in)] = stand_in.resolve(real)
        except AttributeError:
            continue
    count = 0
    for namespace in namespaces:
        for key, value in namespace.items():
            if id(value) in swaps:
                namespace[key] = swaps[id(value)]
                count += 1
    return count
