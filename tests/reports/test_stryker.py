"""The Stryker mutation report from real grades, against the official schema (vendored, 3.8.4)."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
import pytest

from grader.pool import load_pool
from grader.report.model import MutantOutcome, Report
from grader.report.stryker import (HIDDEN_NOTE, MutationReportError, mutation_span, render_stryker, validate)

pytestmark = pytest.mark.slow
STATUSES = {"killed": "Killed", "survived": "Survived", "timeout": "Timeout", "crashed": "RuntimeError"}


def file_of(report: Report) -> dict:
    data = json.loads(render_stryker(report))
    validate(data)  # against Stryker's official schema
    ((name, file),) = data["files"].items()
    assert name == "luong.py"
    return file


def test_every_mutant_is_reported_with_its_status_and_killer(passing_report: Report):
    mutants = {m["id"]: m for m in file_of(passing_report)["mutants"]}
    assert set(mutants) == {m.id for m in passing_report.tests.mutants}
    for result in passing_report.tests.mutants:
        entry = mutants[result.id]
        assert entry["status"] == STATUSES[result.outcome.value]
        assert entry.get("killedBy") == ([result.killed_by] if result.killed_by else None)
    assert {mutants[f"s0{i}"]["mutatorName"] for i in range(1, 8)} == {"Pitfall"}


def test_locations_are_where_the_pool_says(passing_report: Report, chapter):
    mutants = {m["id"]: m for m in file_of(passing_report)["mutants"]}
    pool = load_pool(chapter.manifest)
    for frozen in pool.mutants:
        start = mutants[frozen.id]["location"]["start"]
        assert (start["line"], start["column"]) == (frozen.line, frozen.column), frozen.id
        assert mutants[frozen.id]["mutatorName"] == frozen.operator


def test_the_reference_and_replacements_are_shown_once_the_implementation_passes(passing_report: Report, chapter):
    file = file_of(passing_report)
    assert file["source"] == chapter.reference_impl.read_text(encoding="utf-8")
    s01 = next(m for m in file["mutants"] if m["id"] == "s01")
    assert s01["replacement"] == "query, context"
    line = file["source"].splitlines()[s01["location"]["start"]["line"] - 1]
    start, end = s01["location"]["start"]["column"], s01["location"]["end"]["column"]
    assert line[start - 1 : end - 1] == "context, query"


def test_nothing_of_the_reference_is_shown_before_it_passes(pitfall_report: Report, chapter):
    file = file_of(pitfall_report)
    reference = chapter.reference_impl.read_text(encoding="utf-8")
    assert file["source"].splitlines()[0] == HIDDEN_NOTE
    assert not file["source"].replace(HIDDEN_NOTE, "").strip()
    assert file["source"].count("\n") == reference.count("\n")
    assert all("replacement" not in m for m in file["mutants"])
    assert len(file["mutants"]) == pitfall_report.tests.total
    lines = file["source"].splitlines()
    for mutant in file["mutants"]:  # every location still points inside the placeholder
        for position in mutant["location"].values():
            assert position["column"] - 1 <= len(lines[position["line"] - 1])


def test_a_survivor_says_what_catches_it(pitfall_report: Report, chapter):
    """The page shows a survivor's statusReason beside it, in a file whose code it may hide: a
    pool mutant's place in the module and what catches such mutants, a pitfall's when_missed."""
    pool = next(m for m in pitfall_report.tests.mutants if not m.pitfall and m.where in chapter.place_hints)
    survived = {pool.id: dataclasses.replace(pool, outcome=MutantOutcome.SURVIVED, killed_by=None)}
    survived["s05"] = dataclasses.replace(next(m for m in pitfall_report.tests.mutants if m.id == "s05"),
                                          outcome=MutantOutcome.SURVIVED, killed_by=None)
    tests = dataclasses.replace(pitfall_report.tests, mutants=tuple(survived.get(m.id, m)
                                                                   for m in pitfall_report.tests.mutants))
    mutants = {m["id"]: m for m in file_of(dataclasses.replace(pitfall_report, tests=tests))["mutants"]}
    assert mutants[pool.id]["status"] == "Survived"
    assert mutants[pool.id]["statusReason"].endswith(f"changes {pool.where} (its code is not shown); "
                                                     f"{chapter.place_hints[pool.where]}")
    pitfall = next(p for p in pitfall_report.pitfalls if p.id == "s05")
    assert mutants["s05"]["statusReason"] == pitfall.when_missed
    assert all("statusReason" not in m for m in mutants.values() if m["status"] == "Killed")


def test_a_report_from_another_pool_is_refused(passing_report: Report):
    stale = dataclasses.replace(passing_report, pool_version="0000000000000000")
    with pytest.raises(MutationReportError, match="regrade"):
        render_stryker(stale)


def test_the_official_schema_rejects_a_bad_status():
    bad = {"schemaVersion": "2", "thresholds": {"high": 80, "low": 80},
           "files": {"luong.py": {"language": "python", "source": "", "mutants": [
               {"id": "m", "mutatorName": "x", "status": "Dead",
                "location": {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 1}}}]}}}
    with pytest.raises(jsonschema.ValidationError):
        validate(bad)


@pytest.mark.parametrize(("reference", "mutated", "span"), [
    ("a + b\n", "a - b\n", ((1, 3), (1, 4), "-")),
    ("x = 1\ny = 2\n", "x = 1\ny = 22\n", ((2, 6), (2, 6), "2")),
    ("f(a, b)\n", "f(b, a)\n", ((1, 3), (1, 7), "b, a")),
    ("one\ntwo\nthree\n", "one\nthree\n", ((2, 2), (3, 2), "")),  # "wo\nt" is as small as "two\n"
])
def test_the_span_is_the_smallest_changed_range(reference, mutated, span):
    found = mutation_span(reference, mutated)
    assert (found.start, found.end, found.replacement) == span
