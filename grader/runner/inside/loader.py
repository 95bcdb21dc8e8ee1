"""Installing one run's module under the graded name, and swapping it into pre-collected tests.

Every run (reference, variant, mutant) must look the same to the tests: the same module name,
``__file__``, ``__spec__``, no ``__cached__``, no linecache entry, no source on disk. So the
module is compiled from bytes in memory and executed into a fresh module object.

The student's tests are collected once, in the zygote, against a *placeholder* module rather
than a real implementation: the zygote then never holds any implementation's code, so no child
can find another run's module in inherited memory. Names the tests took from the placeholder at
import time (``from ...luong import LuongAttention``, ``import ...luong as L``) are rebound in
each child, by identity, to the real module's objects: where the zygote found them after
collection (rebinding_sites), in the test modules' globals, their classes' attributes, the
attributes of module-level objects of those classes, the parametrize values, one level into a
list, dict or tuple held there, and the defaults of their functions.
"""

from __future__ import annotations

import importlib.machinery
import marshal
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from functools import partial

# In the message of every use of a placeholder the runner cannot swap: the trusted side, which
# never shows a run's own message, recognises it by this and explains the rule instead.
UNSWAPPABLE = "held where the runner cannot swap it"
# ... and in that of a name the run's module does not define (rebind leaves its placeholder).
UNDEFINED = "is not defined by the implementation of this run"
Site = Callable[[Mapping[int, object]], None]  # swaps, by the placeholder's id, what one place holds


class UnboundPlaceholder:
    """Stands for ``module.<path>`` while tests are collected without any implementation.

    Calling one, or using it in a way rebinding cannot reach (a default argument, a value
    computed at import time), fails with a message that says how to write the test instead.
    """

    def __init__(self, module: PlaceholderModule, path: tuple[str, ...]) -> None:
        self._module = module
        self._path = path
        self._children: dict[str, UnboundPlaceholder] = {}
        self._undefined = False  # set in a child whose module lacks it (rebind)

    @property
    def qualname(self) -> str:
        return ".".join((self._module.__name__, *self._path))

    def __getattr__(self, name: str) -> UnboundPlaceholder | str:
        if name in ("__name__", "__qualname__"):  # what ``ids=lambda cls: cls.__name__`` reads at collection
            return self._path[-1] if name == "__name__" else ".".join(self._path)
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
        if self._undefined:
            raise AttributeError(f"{self.qualname} {UNDEFINED}")
        raise RuntimeError(f"{self.qualname} was used at import time or {UNSWAPPABLE} (a value built from it at "
                           "import time, or held deeper than one list, dict or tuple); use it inside tests or fixtures")

    def __mro_entries__(self, bases: tuple) -> tuple:
        raise RuntimeError(f"{self.qualname} was subclassed at import time, so {UNSWAPPABLE}; "
                           "define the subclass inside a test or fixture")

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


def rebinding_sites(placeholder: PlaceholderModule, holders: Iterable[dict | type]) -> list[Site]:
    """Every place in ``holders`` (the test modules' globals and classes, the parametrize values)
    that holds a placeholder: as a value, one level into a list, dict or tuple there, or among a
    function's defaults. Found once, in the zygote after collection, so that each child visits
    only these."""
    stand_ins = {id(stand_in) for stand_in in _stand_ins(placeholder)}
    sites: list[Site] = []
    for holder in holders:
        for key, value in list((vars(holder) if isinstance(holder, type) else holder).items()):
            put = partial(setattr, holder, key) if isinstance(holder, type) else partial(holder.__setitem__, key)
            if id(value) in stand_ins:
                sites.append(partial(_put_swapped, put, value))
            elif isinstance(value, (list, dict)):
                entries = value.items() if isinstance(value, dict) else enumerate(value)
                sites += [partial(_put_swapped, partial(value.__setitem__, index), item)
                          for index, item in entries if id(item) in stand_ins]
            elif isinstance(value, tuple) and _holds(value, stand_ins) and _rebuildable(value):
                sites.append(partial(_put_swapped_tuple, put, value))
            elif isinstance(value, (types.FunctionType, staticmethod, classmethod)):
                sites += _default_sites(getattr(value, "__func__", value), stand_ins)
    return sites


def _default_sites(function: object, stand_ins: set[int]) -> list[Site]:
    """Where a function's defaults, positional or keyword-only, hold a placeholder."""
    sites: list[Site] = []
    defaults, keyword_defaults = getattr(function, "__defaults__", None), getattr(function, "__kwdefaults__", None)
    if isinstance(defaults, tuple) and _holds(defaults, stand_ins):
        sites.append(partial(_put_swapped_tuple, partial(setattr, function, "__defaults__"), defaults))
    if isinstance(keyword_defaults, dict):
        sites += [partial(_put_swapped, partial(keyword_defaults.__setitem__, key), value)
                  for key, value in keyword_defaults.items() if id(value) in stand_ins]
    return sites


def _holds(values: Iterable[object], stand_ins: set[int]) -> bool:
    return any(id(value) in stand_ins for value in values)


def _rebuildable(values: tuple) -> bool:
    """A tuple, or a named tuple, whose class can be rebuilt from its items (any other subclass
    of tuple is left as it is: its constructor is its own)."""
    return type(values) is tuple or hasattr(type(values), "_make")


def _stand_ins(placeholder: PlaceholderModule) -> list[PlaceholderModule | UnboundPlaceholder]:
    found: list[PlaceholderModule | UnboundPlaceholder] = [placeholder]
    pending = list(placeholder._placeholders.values())
    while pending:
        stand_in = pending.pop()
        found.append(stand_in)
        pending.extend(stand_in._children.values())
    return found


def _put_swapped(put: Callable[[object], object], value: object, swaps: Mapping[int, object]) -> None:
    put(swaps.get(id(value), value))


def _put_swapped_tuple(put: Callable[[object], object], values: tuple, swaps: Mapping[int, object]) -> None:
    swapped = [swaps.get(id(value), value) for value in values]
    put(tuple(swapped) if type(values) is tuple else type(values)._make(swapped))


def rebind(placeholder: PlaceholderModule, real: types.ModuleType, sites: Iterable[Site]) -> None:
    """Put the real object where each site holds a placeholder.

    A name the real module lacks is left as its placeholder, marked so that using it fails
    saying so, as a plain import of it would fail.
    """
    swaps: dict[int, object] = {}
    for stand_in in _stand_ins(placeholder):
        try:
            swaps[id(stand_in)] = real if stand_in is placeholder else stand_in.resolve(real)
        except AttributeError:
            stand_in._undefined = True
    for site in sites:
        site(swaps)
