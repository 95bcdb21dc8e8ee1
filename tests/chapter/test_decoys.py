"""The decoys: correct implementations that look like mutants (chapters/L4.3.toml, [mutants]).

A decoy must be the reference with one edit, as a mutant is, and compute exactly what the
reference computes: the same values, gradients and errors, bit for bit. A suite that fails one
is invalid, so a decoy that were not exactly correct would fail honest students.
"""

from __future__ import annotations

import difflib
import functools
import random

import numpy as np
import pytest

from grader import probes
from grader.chapter import load_chapter
from grader.disguise import disguise_catalogue
from grader.grading import decoys_run_alone, drawn_decoys, load_trusted_module
from grader.mutants import load_catalogue
from grader.settings import Settings

CHAPTER = load_chapter("L4.3")
CATALOGUE = load_catalogue(CHAPTER)
SHAPE_NAMES = [path.stem for path in sorted(CHAPTER.shape_decoys.glob("*.patch"))]
NAMES = [path.stem for path in sorted(CHAPTER.decoys.glob("*.patch"))] + SHAPE_NAMES
DECOYS = dict(zip(NAMES, CATALOGUE.decoys + CATALOGUE.shape_decoys))


def _changed_lines(a: bytes, b: bytes) -> list[str]:
    return [line for line in difflib.ndiff(a.decode().splitlines(), b.decode().splitlines())
            if line.startswith(("- ", "+ "))]


def test_the_chapter_has_decoys_enough_to_draw_from():
    assert len(NAMES) >= 8


@pytest.mark.parametrize("name", NAMES)
def test_a_decoy_is_one_edit_from_the_reference(name):
    assert len(_changed_lines(CATALOGUE.reference, DECOYS[name])) == 2


@functools.cache
def _reference_probes(seed: int) -> tuple[bytes, dict[str, np.ndarray]]:
    """The probes of ``seed`` and the reference's answers, drawn once for every decoy: computing
    them again for each took half of these tests' time (some 3 min of a CI run). Some 60 MB a seed."""
    reference = load_trusted_module(CHAPTER, "reference", CATALOGUE.reference)
    payload = probes.draw_cases(seed, reference)
    return payload, probes.outputs_of(reference, payload)


@pytest.mark.parametrize("name", NAMES)
def test_a_decoy_computes_what_the_reference_computes_bit_for_bit(name):
    decoy = load_trusted_module(CHAPTER, f"decoy_{name.replace('-', '_')}", DECOYS[name])
    for seed in range(6):
        payload, ours = _reference_probes(seed)
        theirs = probes.outputs_of(decoy, payload)
        assert theirs.keys() == ours.keys()
        differ = [key for key in ours if not np.array_equal(theirs[key], ours[key],
                                                            equal_nan=ours[key].dtype.kind == "f")]
        assert not differ, (seed, differ)


@pytest.mark.parametrize("name", NAMES)
def test_a_decoy_passes_every_course_test(name, course_test_failures, tmp_path):
    impl = tmp_path / "luong.py"
    impl.write_bytes(DECOYS[name])
    assert course_test_failures(impl) == set()


def test_in_a_grade_s_disguise_a_decoy_is_still_one_edit_from_the_reference():
    sent = disguise_catalogue(CATALOGUE, random.Random(7))
    assert all(len(_changed_lines(sent.reference, decoy)) == 2 for decoy in sent.decoys + sent.shape_decoys)


def test_every_grade_runs_alone_a_decoy_that_changes_the_code_s_shape():
    """Every other decoy edits a number or an operator: a suite that recognised the reference by
    its calls and names passed them all (red team, round 16)."""
    assert len(SHAPE_NAMES) >= 3
    for _ in range(20):
        alone = list(decoys_run_alone(drawn_decoys(CATALOGUE, Settings()), Settings()).values())
        assert len(alone) == Settings().decoys and len(set(alone)) == len(alone)
        assert sum(decoy in CATALOGUE.shape_decoys for decoy in alone) >= 1


def test_every_decoy_runs_in_the_mutation_pass_in_an_order_drawn_for_each_grade():
    """Labelled as variants after the real ones; a suite failing fast-pass runs at random must
    meet them there (red team, round 22)."""
    every = sorted(DECOYS.values())
    orders = set()
    for _ in range(20):
        drawn = drawn_decoys(CATALOGUE, Settings())
        assert sorted(drawn.values()) == every
        assert list(drawn) == [f"variant {len(CATALOGUE.variants) + 1 + i}" for i in range(len(every))]
        orders.add(tuple(drawn.values()))
    assert len(orders) > 1
