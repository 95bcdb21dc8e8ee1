"""The frozen generated pool (mutants/L4.3/pool.json) is consistent, current and well curated.

Fast checks read the frozen files. Slow ones regenerate every candidate with mutmut (seconds)
or run the oracle suite on every kept mutant (minutes).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from grader.chapter import load_chapter
from grader.patches import apply_patch
from grader.pool import ORACLE, generate, load_pool, pool_version, run_suites, verify_pool

CHAPTER = load_chapter("L4.3")
REFERENCE = CHAPTER.reference_impl.read_text(encoding="utf-8")
MIN_ORACLE_KILL_RATE = 0.95


@pytest.fixture(scope="module")
def pool():
    return load_pool(CHAPTER.manifest)


@pytest.fixture(scope="module")
def dropped():
    return json.loads(CHAPTER.dropped.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def candidates():
    return generate(REFERENCE)


def test_the_pool_verifies_against_the_current_reference(pool):
    assert verify_pool(pool, REFERENCE) == []
    assert pool.chapter == CHAPTER.id and pool.generator == "mutmut 3.8.1"


def test_ids_are_unique_and_every_patch_file_is_listed(pool):
    ids = [m.id for m in pool.mutants]
    assert len(set(ids)) == len(ids) == len(pool.patches) > 0
    on_disk = {p.stem for p in (CHAPTER.pool.parent / "pool").glob("*.patch")}
    assert on_disk == set(ids)


def test_every_mutated_function_has_a_place_a_report_names(pool):
    """A surviving pool mutant is named by its place in the module (its code is never shown): a
    function the manifest does not place would leave a student with an id and nothing else."""
    assert {m.function for m in pool.mutants} <= set(CHAPTER.mutant_places)
    assert all(place.strip() for place in CHAPTER.mutant_places.values())
    assert set(CHAPTER.mutant_places.values()) == set(CHAPTER.place_hints)  # and says what catches them
    assert all(hint.strip() for hint in CHAPTER.place_hints.values())


def test_the_version_is_a_hash_of_the_patches(pool):
    assert pool.version == pool_version(pool.patches)
    changed = dict(pool.patches)
    first = next(iter(changed))
    changed[first] += " "
    assert pool_version(changed) != pool.version


def test_every_kept_mutant_changes_the_reference_and_compiles(pool):
    for mutant in pool.mutants:
        source = apply_patch(REFERENCE, pool.patches[mutant.id])
        assert source != REFERENCE, mutant.id
        compile(source, f"{mutant.id}.py", "exec")
        assert mutant.original in "\n".join(line.strip() for line in REFERENCE.splitlines()), mutant.id
        assert mutant.killed_by, mutant.id


def test_a_patch_that_no_longer_matches_is_reported(pool):
    drifted = REFERENCE.replace("query_from = ", "query_from  = ", 1)
    assert any("reference changed" in problem for problem in verify_pool(pool, drifted))


def test_dropped_mutants_are_not_in_the_pool_and_each_has_a_reason(pool, dropped):
    kept = {m.id for m in pool.mutants}
    reasons = {"message-only", "equivalent", "not killable by any behavioural test"}
    for entry in dropped:
        assert entry["id"] not in kept
        assert entry["reason"] in reasons and entry["detail"], entry


@pytest.mark.slow
def test_pool_and_dropped_are_exactly_the_generated_mutants(pool, dropped, candidates):
    assert {m.id for m in pool.mutants} | {e["id"] for e in dropped} == {c.id for c in candidates}
    assert len(pool.mutants) + len(dropped) == len(candidates)


@pytest.mark.slow
def test_ids_do_not_depend_on_position(candidates):
    shifted = generate("# a comment that moves every line down\n\n" + REFERENCE)
    assert [c.id for c in shifted] == [c.id for c in candidates]
    assert [c.line for c in shifted] == [c.line + 2 for c in candidates]


def test_message_only_changes_are_recognised():
    source = (
        "def check(name, x):\n"
        "    if x < 0:\n"
        "        got = type(x).__name__\n"
        '        raise ValueError(f"{name} must be >= 0, got {got}")\n'
        "    return x\n"
        "\n"
        "def use(x):\n"
        '    return check("x", x) * 2\n'
    )
    by_change = {(c.original, c.replacement): c.message_only for c in generate(source)}
    assert by_change[('return check("x", x) * 2', 'return check("XXxXX", x) * 2')]
    assert by_change[('return check("x", x) * 2', "return check(None, x) * 2")]
    assert not by_change[('return check("x", x) * 2', 'return check("x", None) * 2')]
    assert by_change[("got = type(x).__name__", "got = None")]
    assert not by_change[("if x < 0:", "if x <= 0:")]


def _oracle_kills(patch: str) -> bool:
    return bool(run_suites(CHAPTER, apply_patch(REFERENCE, patch), suites=ORACLE).killed_by)


@pytest.mark.slow
def test_the_oracle_suite_alone_kills_most_of_the_pool(pool):
    """One pytest process per mutant, two at a time (one per core of these machines): one at a
    time, this was some 5 min of a CI run."""
    with ThreadPoolExecutor(max_workers=2) as workers:
        killed = list(workers.map(_oracle_kills, (pool.patches[m.id] for m in pool.mutants)))
    survivors = [m.id for m, kill in zip(pool.mutants, killed) if not kill]
    rate = 1 - len(survivors) / len(pool.mutants)
    assert rate >= MIN_ORACLE_KILL_RATE, f"oracle kill rate {rate:.3f}; survivors: {survivors}"
