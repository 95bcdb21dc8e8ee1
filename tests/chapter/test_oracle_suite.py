"""The instructor's oracle suite: passes on every correct implementation, kills every pitfall.

Each run is a fresh pytest process (grader.pool.run_suites), so no implementation stays
installed in this process. The suite's own speed is measured by the report, not asserted here.
"""

from __future__ import annotations

import ast
import tomllib

import pytest

from grader.chapter import load_chapter
from grader.patches import apply_patch
from grader.pool import ORACLE, run_suites

CHAPTER = load_chapter("L4.3")
PITFALLS = tomllib.loads(CHAPTER.pitfalls.read_text(encoding="utf-8"))["mutants"]
CORRECT = [CHAPTER.reference_impl, *CHAPTER.variants]
ORACLE_FILES = sorted(CHAPTER.oracle_suite.glob("*.py"))


def test_the_suite_imports_only_contract_modules():
    allowed = set(CHAPTER.student.allowed_imports)
    for path in ORACLE_FILES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            for name in names:
                assert name.split(".")[0] in {"__future__", "numpy", "pytest", "tinyllm"}, (path.name, name)
                assert not name.startswith("tinyllm") or name in allowed, (path.name, name)


@pytest.mark.parametrize("impl", CORRECT, ids=[p.name for p in CORRECT])
def test_the_suite_passes_on_a_correct_implementation(impl):
    run = run_suites(CHAPTER, impl.read_text(encoding="utf-8"), suites=ORACLE)
    assert run.broken is None and run.failed == ()
    assert len(run.passed) >= 30, run.passed


@pytest.mark.parametrize("pitfall", PITFALLS, ids=[m["id"] for m in PITFALLS])
def test_the_suite_kills_every_pitfall_mutant(pitfall):
    patch = (CHAPTER.pitfalls.parent / pitfall["patch"]).read_text(encoding="utf-8")
    source = apply_patch(CHAPTER.reference_impl.read_text(encoding="utf-8"), patch)
    run = run_suites(CHAPTER, source, suites=ORACLE)
    assert run.broken is None, run.broken  # killed by a failing test, not by a broken run
    assert run.failed, f"{pitfall['id']} ({pitfall['pitfall']}) survives the oracle suite"
