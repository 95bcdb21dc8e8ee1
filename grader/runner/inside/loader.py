"""Installing one run's module under the graded name, and swapping it into pre-collected tests.

Every run (reference, variant, mutant) must look the same to the tests: the same module name,
``__file__``, ``__spec__``, no ``__cached__``, no linecache entry, no source on disk. So the
module is compiled from bytes in memory and executed into a fresh module object.

The student's tests are collected once, in the zygote, against a *placeholder* module rather
than a real implementation: the zygote then never holds any implementation's code, so no child
can find another run's module in inherited memory. Names the tests took from the placeholder at
import time (``from ...luong import LuongAttention``, ``import ...luong as L``) are rebound in
each child, by identity, to the real module's objects, wherever the zygote found them held after
collection (rebinding_sites asks the garbage collector): globals, class and instance attributes,
parametrize values, containers at any depth, closures, defaults, ``functools.partial``.
"""

from __future__ import annotations

import gc
import importlib.machinery
import marshal
import sys
import types
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

# In the message of every use of a placeholder the runner cannot swap: the trusted side, which
# never shows a run's own message, recognises it by this and explains the rule instead.
UNSWAPPABLE = "held where the runner cannot swap it"
# ... and in that of a name the run's module does not define (rebind leaves its placeholder).
UNDEFINED = "is not defined by the implementation of this run"
Site = Callable[["_Swap"], None]  # puts, through a run's swap, what one place holds
MAX_DEPTH = 6  # tuples and frozensets rebuilt around a stand-in, nested this deep at most
# Names taken from the placeholder that are looked for: the search compares every reference in the
# heap with every stand-in, so a suite that took millions would hold the grade for minutes.
MAX_STAND_INS = 10_000


class TooManyNames(Exception):
    """The collected tests took more names from the placeholder than are looked for."""


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
                           "import time, or held inside an object the runner cannot rewrite); use it inside tests or "
                           "fixtures")

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
    exec(code, module.__dict__)  # noqa: S102 - running the module under test is the sandbox's job
    return module


@dataclass(frozen=True)
class Rebinding:
    """Where the zygote's heap holds stand-ins, found once after collection (rebinding_sites)."""

    sites: list[Site]  # each puts, through the run's swap, its object where a stand-in was held
    rebuilt: dict[int, tuple | frozenset]  # immutable containers that held one, by id: rebuilt per run


NO_REBINDING = Rebinding(sites=[], rebuilt={})


def rebinding_sites(placeholder: PlaceholderModule) -> Rebinding:
    """Every place that holds a stand-in, found by asking the garbage collector what refers to
    each: dicts (module globals, class attributes, instance attributes, parametrize values),
    lists, sets, closure cells, ``functools.partial`` objects and slots. A tuple, named tuple or
    frozenset that holds one cannot be changed, so it is rebuilt in each run and put where *it*
    is held (a function's defaults, a list, another tuple), up to MAX_DEPTH containers deep.
    Found once, in the zygote after collection and before ``gc.freeze()`` (the collector does not
    search frozen objects), so that each child visits only these places. The runner's own
    references (sys.modules, the package's attribute, the zygote's) are among them: a child
    holds one run, so they may all point at its module."""
    stand_ins = _stand_ins(placeholder)
    if len(stand_ins) > MAX_STAND_INS:
        raise TooManyNames(f"the tests took {len(stand_ins)} names from {placeholder.__name__} while they were "
                           f"collected; at most {MAX_STAND_INS} are put in place in each run")
    found: dict[int, object] = {}  # every holder, by id
    rebuilt: dict[int, tuple | frozenset] = {}
    ours = {id(stand_ins), id(found), id(rebuilt), id(placeholder._placeholders),
            *(id(part) for stand_in in stand_ins[1:] for part in (vars(stand_in), stand_in._children))}
    targets = stand_ins
    for _ in range(MAX_DEPTH):
        level = [holder for holder in gc.get_referrers(*targets)
                 if id(holder) not in ours and id(holder) not in found and type(holder) is not types.FrameType]
        targets = [holder for holder in level if _rebuildable(holder)]
        ours.update((id(level), id(targets)))
        found.update((id(holder), holder) for holder in level)
        rebuilt.update((id(holder), holder) for holder in targets)
        if not targets:
            break
    held = {id(stand_in) for stand_in in stand_ins} | set(rebuilt)
    namespaces = _class_namespaces([holder for holder in found.values() if type(holder) is dict])
    sites = [site for key, holder in found.items() if key not in rebuilt
             for site in _sites_or_none(holder, held, namespaces.get(key))]
    return Rebinding(sites=sites, rebuilt=rebuilt)


def _sites_or_none(holder: object, held: set[int], cls: type | None) -> list[Site]:
    """_sites, or none where the student's object makes looking into it fail (a ``__class__``
    that raises): what it holds stays a placeholder, whose use names the rule."""
    try:
        return _sites(holder, held, cls)
    except Exception:  # noqa: BLE001 - the student's classes decide what reading them does
        return []


def _class_namespaces(dicts: list[dict]) -> dict[int, type]:
    """The classes whose namespace is one of ``dicts``, by the dict's id: those are written with
    setattr, which keeps the class's attribute cache right."""
    if not dicts:
        return {}
    wanted = {id(namespace) for namespace in dicts}
    namespace_of = type.__dict__["__dict__"].__get__  # not vars(): a metaclass may answer that itself
    return {id(namespace): cls for cls in gc.get_referrers(*dicts) if issubclass(type(cls), type)
            for namespace in gc.get_referents(namespace_of(cls)) if id(namespace) in wanted}


def _sites(holder: object, held: set[int], cls: type | None) -> list[Site]:
    """The places in one holder where a stand-in (or a container rebuilt around one) is held."""
    if isinstance(holder, dict):
        if any(id(key) in held for key in dict.keys(holder)) and cls is None:
            return [partial(_rekey, holder)]
        put = partial(type.__setattr__, cls) if cls is not None else holder.__setitem__
        return [partial(_put_swapped, partial(put, key), value)
                for key, value in dict.items(holder) if id(value) in held]
    if isinstance(holder, (list, deque)):
        return [partial(_put_swapped, partial(holder.__setitem__, index), item)
                for index, item in enumerate(holder) if id(item) in held]
    if isinstance(holder, set):
        return [partial(_swap_member, holder, item) for item in holder if id(item) in held]
    if isinstance(holder, types.CellType):
        return [partial(_put_swapped, partial(setattr, holder, "cell_contents"), holder.cell_contents)]
    if isinstance(holder, partial):
        return [partial(_swap_partial, holder)]
    if isinstance(holder, (staticmethod, classmethod)) and id(holder.__func__) in held:  # a class held as one
        return [partial(_put_swapped, partial(type(holder).__init__, holder), holder.__func__)]
    if isinstance(holder, types.FunctionType) and id(holder.__defaults__) in held:
        return [partial(_put_swapped, partial(setattr, holder, "__defaults__"), holder.__defaults__)]
    attributes = _attributes(holder)  # an instance's values live in the object until __dict__ is read
    in_dict = [partial(_put_swapped, partial(attributes.__setitem__, name), value)
               for name, value in attributes.items() if id(value) in held] if attributes is not None else []
    return in_dict + [partial(_put_swapped, partial(object.__setattr__, holder, name), value)
                      for name, value in _slot_values(holder) if id(value) in held]


def _attributes(holder: object) -> dict | None:
    """``holder``'s __dict__, or None (slots only, or a class that makes reading it fail)."""
    try:
        attributes = object.__getattribute__(holder, "__dict__")
    except BaseException:  # noqa: BLE001 - the student's class decides what reading it does
        return None
    return attributes if type(attributes) is dict else None


def _slot_values(holder: object) -> list[tuple[str, object]]:
    """The values in ``holder``'s slots, read through the slot descriptors themselves (never
    through the student's ``__getattribute__``); an empty slot has none."""
    values = []
    for cls in type(holder).__mro__:
        for name, descriptor in vars(cls).items():
            if isinstance(descriptor, types.MemberDescriptorType):
                try:
                    values.append((name, descriptor.__get__(holder, cls)))
                except AttributeError:
                    continue
    return values


def _rebuildable(value: object) -> bool:
    """A tuple, a named tuple (rebuilt with its _make) or a frozenset; any other subclass is left
    as it is: its constructor is its own. By ``type()``: isinstance would ask the object."""
    return type(value) in (tuple, frozenset) or (issubclass(type(value), tuple) and hasattr(type(value), "_make"))


def _stand_ins(placeholder: PlaceholderModule) -> list[PlaceholderModule | UnboundPlaceholder]:
    found: list[PlaceholderModule | UnboundPlaceholder] = [placeholder]
    pending = list(placeholder._placeholders.values())
    while pending:
        stand_in = pending.pop()
        found.append(stand_in)
        pending.extend(stand_in._children.values())
    return found


class _Swap:
    """This run's object for a stand-in, and the rebuilt copy of a container that held one
    (rebuilt on first use, so containers inside containers come out right)."""

    def __init__(self, objects: dict[int, object], rebuilt: Mapping[int, tuple | frozenset]) -> None:
        self._objects = objects
        self._rebuilt = rebuilt

    def __call__(self, value: object) -> object:
        key = id(value)
        if key not in self._objects and key in self._rebuilt:
            self._objects[key] = value  # until rebuilt: a failed rebuild leaves the container as it was
            items = [self(item) for item in value]
            self._objects[key] = (frozenset(items) if type(value) is frozenset else
                                  tuple(items) if type(value) is tuple else type(value)._make(items))
        return self._objects.get(key, value)


def _put_swapped(put: Callable[[object], object], value: object, swap: _Swap) -> None:
    put(swap(value))


def _rekey(holder: dict, swap: _Swap) -> None:
    """A dict with a stand-in among its keys: refilled in order, keys and values swapped."""
    items = list(dict.items(holder))
    holder.clear()
    holder.update((swap(key), swap(value)) for key, value in items)


def _swap_member(holder: set, member: object, swap: _Swap) -> None:
    holder.discard(member)
    holder.add(swap(member))


def _swap_partial(holder: partial, swap: _Swap) -> None:
    function, args, keywords, namespace = holder.__reduce__()[2]
    holder.__setstate__((swap(function), swap(args), keywords, namespace))


def rebind(placeholder: PlaceholderModule, real: types.ModuleType, rebinding: Rebinding) -> None:
    """Put the real object where each site holds a placeholder.

    A name the real module lacks is left as its placeholder, marked so that using it fails
    saying so, as a plain import of it would fail. A site the student's own types make fail (a
    ``__setitem__`` that raises) keeps its placeholder, whose use fails naming the rule.
    """
    objects: dict[int, object] = {}
    for stand_in in _stand_ins(placeholder):
        try:
            objects[id(stand_in)] = real if stand_in is placeholder else stand_in.resolve(real)
        except AttributeError:
            stand_in._undefined = True
    swap = _Swap(objects, rebinding.rebuilt)
    for site in rebinding.sites:
        try:
            site(swap)
        except Exception:  # noqa: BLE001, S112 - the student's container decides what writing to it does
            continue
