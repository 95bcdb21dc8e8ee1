"""A fresh disguise, for each grade, of the grader's own modules before they enter a sandbox.

A student's test runs in the same process as the module it tests, so it can read that module's
code objects (``f.__code__.co_code``, constants, names, line numbers). The reference, the variants
and the pool do not change between grades, and the staff's repository holds them: compiled as
they are, a test could pass exactly the correct implementations by a hash of their code (a
whitelist: every mutant killed, no behaviour tested) or fail exactly the pool (a blacklist).

So every module sent in one grade wears the same disguise, drawn from the system's random source:
stores of random constants to randomly named locals nothing reads, at random statement
boundaries of every function, and the whole module moved down a random number of lines. A store
to a local nothing reads changes no value, exception or gradient, so only the code looks different,
and a mutant is still the disguised reference with one change. What it does not stop: a test
written by someone who knows this scheme can strip the stores and compare what remains; the
cost of recognising the reference goes from a hash to a bytecode normaliser.
"""

from __future__ import annotations

import ast
import random
import string
from collections.abc import Iterator
from dataclasses import dataclass, replace

from grader.mutants import Catalogue

MAX_LEAD_LINES = 40
MAX_STORES_PER_FUNCTION = 3


@dataclass(frozen=True)
class Disguise:
    """One grade's disguise: blank lines in front, and dead stores to put before given lines."""

    lead: int
    stores: dict[int, tuple[str, ...]]  # 1-based line number -> statements, unindented


def disguise_catalogue(catalogue: Catalogue, rng: random.Random | None = None) -> Catalogue:
    """The catalogue as the sandboxes get it in this grade: the reference, the variants, the decoys
    and every mutant in this grade's disguise (the recognisers stay as they are: they never leave the
    trusted process)."""
    rng = rng or random.SystemRandom()
    lead = rng.randrange(MAX_LEAD_LINES + 1)
    reference = catalogue.reference.decode("utf-8")
    plan = draw(reference, rng, lead)
    return replace(
        catalogue,
        reference=apply(plan, reference).encode("utf-8"),
        variants=tuple(apply(draw(v.decode("utf-8"), rng, lead), v.decode("utf-8")).encode("utf-8")
                       for v in catalogue.variants),
        decoys=tuple(wear(plan, reference, d.decode("utf-8"), rng).encode("utf-8") for d in catalogue.decoys),
        shape_decoys=tuple(wear(plan, reference, d.decode("utf-8"), rng).encode("utf-8")
                           for d in catalogue.shape_decoys),
        mutants=tuple(replace(m, source=wear(plan, reference, m.source.decode("utf-8"), rng).encode("utf-8"))
                      for m in catalogue.mutants),
    )


def draw(source: str, rng: random.Random, lead: int) -> Disguise:
    """A disguise for ``source``: in every function, one to three of its statement boundaries get
    a store each."""
    stores: dict[int, list[str]] = {}
    for spots in _spots_by_function(source):
        for line in rng.sample(spots, min(len(spots), rng.randint(1, MAX_STORES_PER_FUNCTION))):
            stores.setdefault(line, []).append(_dead_store(rng))
    return Disguise(lead=lead, stores={line: tuple(statements) for line, statements in stores.items()})


def wear(plan: Disguise, reference: str, mutant: str, rng: random.Random) -> str:
    """``mutant`` in the reference's disguise ``plan`` when its lines line up with the reference's
    (a mutation changes one expression, so the reference's statement boundaries are the mutant's),
    else in a disguise drawn for it alone."""
    if _same_layout(reference, mutant):
        return apply(plan, mutant)
    return apply(draw(mutant, rng, plan.lead), mutant)


def apply(plan: Disguise, source: str) -> str:
    """``source`` with the plan's stores inserted, each indented like the line it goes before."""
    lines = source.split("\n")
    out = [""] * plan.lead
    for number, line in enumerate(lines, start=1):
        indent = line[: len(line) - len(line.lstrip())]
        out.extend(indent + statement for statement in plan.stores.get(number, ()))
        out.append(line)
    return "\n".join(out)


def _same_layout(reference: str, mutant: str) -> bool:
    """Whether every line of ``mutant`` starts, indents and ends as the reference's does: as many
    lines, and each changed line with the same indentation, leaving as many brackets open and no
    string open that the reference's leaves closed (the next line then starts as it did)."""
    ours, theirs = reference.split("\n"), mutant.split("\n")
    return len(ours) == len(theirs) and all(a == b or _shape(a) == _shape(b) for a, b in zip(ours, theirs))


def _shape(line: str) -> tuple[str, int, int, int, int, bool]:
    stripped = line.lstrip()
    opened = sum(map(line.count, "([{")) - sum(map(line.count, ")]}"))
    return (line[: len(line) - len(stripped)], opened, line.count("'") % 2, line.count('"') % 2,
            line.count('"""') + line.count("'''"), line.endswith("\\"))


def _spots_by_function(source: str) -> Iterator[list[int]]:
    """For each function, the lines before which a statement may go: the first line of each
    statement of its blocks (not a docstring, not a decorated definition, not an ``elif``)
    that starts its line."""
    lines = source.split("\n")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield [
                statement.lineno for statement in _statements(node)
                if not lines[statement.lineno - 1][: statement.col_offset].strip()
                and not getattr(statement, "decorator_list", None)
                and not lines[statement.lineno - 1][statement.col_offset:].startswith("elif")
            ]


def _statements(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.stmt]:
    """The statements of ``function``'s blocks, nested ones included, but not those of functions
    or classes defined inside it (they are functions of their own) and not its docstring."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    pending = list(body)
    while pending:
        statement = pending.pop()
        yield statement
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            pending.extend(getattr(statement, field, ()))
        for handler in getattr(statement, "handlers", ()):
            pending.extend(handler.body)


def _dead_store(rng: random.Random) -> str:
    name = "_" + "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9)))
    return f"{name} = {rng.randrange(1 << 31)}"
