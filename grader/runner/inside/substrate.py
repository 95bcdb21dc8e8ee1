"""What a luong.py may not change: the substrate it is graded in.

The probes and the course tests judge the graded module by what it computes. A luong.py that
kept a private copy of the substrate's softmax and, at import, replaced ``F.softmax`` with one at
temperature 2 computed the right numbers everywhere it was judged, and broke every other module
of a model that imported it (red team, round 29). So a run of the student's module compares the
substrate before and after: every name each ``tinyllm`` module defines, the code of its functions
and what its classes define. Added names are allowed (importing a submodule adds one to its
package); a name rebound, deleted or given other code is not.

This runs in the student's process, so a module that means to can undo its change before the
check, or defeat the check itself; it stops the mistake, not the attack.
"""

from __future__ import annotations

import sys
import types

Fingerprint = dict[str, tuple]


def fingerprint(graded: str) -> Fingerprint:
    """Each substrate name's identity (and its code's, and its class members'), but the graded
    module's own name in its package, which installing it rebinds."""
    package, _, leaf = graded.rpartition(".")
    root = graded.partition(".")[0]
    marks: Fingerprint = {}
    for name, module in list(sys.modules.items()):
        if name == graded or not (name == root or name.startswith(root + ".")) or module is None:
            continue
        for attribute, value in list(vars(module).items()):
            if name == package and attribute == leaf:
                continue
            marks[f"{name}.{attribute}"] = _identity(value)
            if isinstance(value, type) and value.__module__ == name:
                marks.update({f"{name}.{attribute}.{member}": _identity(inner)
                              for member, inner in list(vars(value).items())})
    return marks


def changed(before: Fingerprint, after: Fingerprint) -> list[str]:
    """The names of ``before`` that ``after`` lacks or gives another identity."""
    return sorted(name for name, mark in before.items() if after.get(name) != mark)


def _identity(value: object) -> tuple:
    code = getattr(value, "__code__", None)
    if isinstance(value, (staticmethod, classmethod)):
        code = getattr(value.__func__, "__code__", None)
    defaults = value.__defaults__ if isinstance(value, types.FunctionType) else None
    return id(value), id(code), id(defaults)
