"""The per-grade disguise of the grader's modules: their code changes, their behaviour does not."""

from __future__ import annotations

import inspect
import random
import types

import numpy as np
import pytest

from grader import probes
from grader.chapter import load_chapter
from grader.disguise import disguise_catalogue, draw
from grader.grading import load_trusted_module
from grader.mutants import load_catalogue

CHAPTER = load_chapter("L4.3")


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue(CHAPTER)


def functions(source: bytes) -> dict[str, types.CodeType]:
    """Every function's code in ``source``, by qualified name; not the code of generator expressions
    and lambdas, which have no statements to put a store between (three mutants of the pool live
    in one, and a test could still know them by their code)."""
    found: dict[str, types.CodeType] = {}
    pending = [compile(source, "luong.py", "exec")]
    while pending:
        code = pending.pop()
        found[code.co_qualname] = code
        pending.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return {name: code for name, code in found.items()  # functions, not class or module bodies
            if code.co_flags & inspect.CO_OPTIMIZED and not name.rpartition(".")[2].startswith("<")}


def test_every_function_of_every_module_looks_different_in_each_grade(catalogue):
    """Its bytecode is never the repository's; and from one grade to the next its bytecode or its
    constants change (a function with few statements has few places for a store, so two grades
    may put theirs in the same places, with other constants)."""
    first, second = disguise_catalogue(catalogue), disguise_catalogue(catalogue)
    for original, one, other in [(catalogue.reference, first.reference, second.reference),
                                 *zip(catalogue.variants, first.variants, second.variants),
                                 *((m.source, a.source, b.source)
                                   for m, a, b in zip(catalogue.mutants, first.mutants, second.mutants))]:
        plain, ones, others = functions(original), functions(one), functions(other)
        assert plain.keys() == ones.keys() == others.keys()
        for name, code in plain.items():
            assert code.co_code != ones[name].co_code and code.co_code != others[name].co_code, name
            assert (ones[name].co_code, ones[name].co_consts) != (others[name].co_code, others[name].co_consts)


def test_a_disguised_module_behaves_as_it_did(catalogue):
    """The probes' outputs, gradients and validation errors, bit for bit, for the reference and each
    pitfall mutant."""
    disguised = disguise_catalogue(catalogue)
    payload = probes.draw_cases(7, load_trusted_module(CHAPTER, "reference", catalogue.reference))
    pairs = [(catalogue.reference, disguised.reference),
             *((m.source, d.source) for m, d in zip(catalogue.mutants, disguised.mutants) if m.pitfall)]
    for index, (plain, worn) in enumerate(pairs):
        before = probes.outputs_of(load_trusted_module(CHAPTER, f"plain{index}", plain), payload)
        after = probes.outputs_of(load_trusted_module(CHAPTER, f"worn{index}", worn), payload)
        assert before.keys() == after.keys()
        for key in before:
            np.testing.assert_array_equal(before[key], after[key], err_msg=key)


def test_a_mutant_laid_out_as_the_reference_wears_the_references_disguise(catalogue):
    """The fast path (the reference's plan, no parse of the mutant) must put the stores where the
    mutant's own parse would: checked on the whole pool. Mutants with lines added or removed get a
    plan of their own; every disguised mutant compiles."""
    reference = catalogue.reference.decode()
    laid_out_alike = 0
    for mutant in catalogue.mutants:
        source = mutant.source.decode()
        if len(source.split("\n")) == len(reference.split("\n")):
            assert draw(source, random.Random(11), 0) == draw(reference, random.Random(11), 0), mutant.id
            laid_out_alike += 1
    assert laid_out_alike >= 0.9 * len(catalogue.mutants)
    for mutant in disguise_catalogue(catalogue).mutants:
        compile(mutant.source, "luong.py", "exec")


def test_the_disguise_is_drawn_from_the_systems_random_source(catalogue):
    """Not from anything a student controls or can see: two grades of one submission differ."""
    assert disguise_catalogue(catalogue).reference != disguise_catalogue(catalogue).reference
