"""The pitfall mutants s01-s07 are what pitfalls.toml says they are.

For each: its patch applies strictly to the reference (and gives what GNU patch gives), the
mutant imports, fails the course test that the chapter says catches it, and fails exactly the
course tests recorded in ``fails``. That the reference itself passes all 11 (so a failure is the
mutant's, not the suite's) is test_reference.py's job. Each run is a fresh pytest process.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib

import pytest

from grader.chapter import load_chapter
from grader.patches import apply_patch

CHAPTER = load_chapter("L4.3")
MUTANTS = tomllib.loads(CHAPTER.pitfalls.read_text(encoding="utf-8"))["mutants"]


RECOGNISERS = [(m, patch) for m in MUTANTS for patch in m.get("recognisers", [])]


def mutant_source(mutant: dict, patch_name: str | None = None) -> str:
    patch = (CHAPTER.pitfalls.parent / (patch_name or mutant["patch"])).read_text(encoding="utf-8")
    return apply_patch(CHAPTER.reference_impl.read_text(encoding="utf-8"), patch)


def test_manifest_lists_exactly_the_required_pitfalls():
    assert [m["id"] for m in MUTANTS] == list(CHAPTER.required_pitfalls)
    for mutant in MUTANTS:
        assert set(mutant) - {"recognisers"} == {"id", "pitfall", "symptom", "caught_by", "hint", "patch", "fails"}, \
            mutant["id"]
        assert mutant["caught_by"] in mutant["fails"], mutant["id"]
        assert len(set(mutant["fails"])) == len(mutant["fails"]), mutant["id"]


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["id"] for m in MUTANTS])
def test_mutant_fails_the_recorded_course_tests(mutant, tmp_path, course_test_failures):
    source = mutant_source(mutant)
    assert source != CHAPTER.reference_impl.read_text(encoding="utf-8")
    impl = tmp_path / "luong.py"
    impl.write_text(source, encoding="utf-8")
    failures = course_test_failures(impl)
    assert mutant["caught_by"] in failures, f"{mutant['id']} escapes {mutant['caught_by']}"
    assert failures == set(mutant["fails"]), f"{mutant['id']}: recorded fails are out of date"


@pytest.mark.parametrize(("mutant", "patch_name"), RECOGNISERS, ids=[p for _, p in RECOGNISERS])
def test_recogniser_is_another_way_into_the_same_pitfall(mutant, patch_name, tmp_path, course_test_failures):
    """A recogniser (used by the probes to name the pitfall) must be caught by the same course test."""
    source = mutant_source(mutant, patch_name)
    assert source not in (CHAPTER.reference_impl.read_text(encoding="utf-8"), mutant_source(mutant))
    impl = tmp_path / "luong.py"
    impl.write_text(source, encoding="utf-8")
    assert mutant["caught_by"] in course_test_failures(impl)


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["id"] for m in MUTANTS])
def test_patch_applies_as_gnu_patch_applies_it(mutant, tmp_path):
    """The pure-python applier and GNU patch (with its fuzz turned off) agree on every mutant."""
    out = tmp_path / "luong.py"
    patch_file = CHAPTER.pitfalls.parent / mutant["patch"]
    command = ["patch", "--fuzz=0", "--quiet", "-o", str(out), str(CHAPTER.reference_impl), str(patch_file)]
    subprocess.run(command, check=True, capture_output=True)
    assert mutant_source(mutant) == out.read_text(encoding="utf-8")
