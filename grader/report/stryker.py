"""The mutation report in Stryker's open schema (mutation-testing-report-schema 3.8.4, vendored in assets/).

The report model says what happened to each mutant; where each mutant sits in the reference and
what it replaced is read from the chapter's catalogue, which must be the pool the report was
graded on. The student sees the reference only once their whole submission passes (source_shown):
before that the file's source is a blank placeholder of the same shape and the mutants carry no
replacement text, so the report never leaks a line of the reference early.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from grader.chapter import ManifestError, load_chapter
from grader.mutants import CatalogueError, load_catalogue
from grader.report.model import (
    MutantOutcome,
    MutantResult,
    Report,
    Tests,
    TestsVerdict,
    Verdict,
)
from grader.report.schemas import validator
from grader.report.survivors import survivor_note

SCHEMA_VERSION = "2"
STATUS = {  # our mutant outcome -> Stryker's MutantStatus
    MutantOutcome.KILLED: "Killed",
    MutantOutcome.SURVIVED: "Survived",
    MutantOutcome.TIMEOUT: "Timeout",
    MutantOutcome.CRASHED: "RuntimeError",
}
NOT_COUNTED = "Ignored"  # the suite is invalid: its kills prove nothing
NO_TESTS = "NoCoverage"  # no tests were submitted, so no test covers any mutant
PITFALL_MUTATOR = "Pitfall"
STRYKER_STATUSES = (*STATUS.values(), NOT_COUNTED, NO_TESTS)  # every status this module writes
HIDDEN_NOTE = ("# The reference luong.py is shown here once your implementation passes the course tests and probes"
               " and your tests pass the bar.")


class MutationReportError(Exception):
    """The report cannot be rendered in this format (its pool is not the chapter's current pool)."""


@dataclass(frozen=True)
class Span:
    """Where a mutant differs from the reference: 1-based (line, column), end exclusive."""

    start: tuple[int, int]
    end: tuple[int, int]
    replacement: str


@dataclass(frozen=True)
class MutantSite:
    span: Span
    mutator: str
    description: str


def validate(data: dict) -> None:
    """Raise jsonschema.ValidationError if ``data`` breaks Stryker's official schema."""
    validator("assets/mutation-testing-report-schema.json").validate(data)


def render_stryker(report: Report) -> str:
    return json.dumps(mutation_report(report), indent=2) + "\n"


def source_shown(report: Report) -> bool:
    """The reference and the mutants' edits may be shown only to a student whose implementation
    passed and whose tests passed the bar. With them in hand, a suite can fail what a mutant's
    code is instead of what it does: one that checked only shapes and failed every module with a
    function some mutant changes passed at 1.00, built from this report once the implementation
    alone had passed (red team, round 29)."""
    return (report.verdict is Verdict.PASS and report.tests is not None
            and report.tests.verdict is TestsVerdict.PASS)


def tests_short_of_the_bar(tests: Tests | None) -> str | None:
    """Why the student's tests keep the reference hidden, in a line; None when they do not."""
    if tests is None:
        return "your tests: none were submitted"
    if tests.verdict is TestsVerdict.PASS:
        return None
    missed = f", pitfalls missed: {', '.join(tests.pitfalls_missed)}" if tests.pitfalls_missed else ""
    return f"your tests: {tests.verdict.value}, score {tests.score:.2f} (the bar: {tests.threshold:.2f}){missed}"


def mutation_report(report: Report) -> dict:
    """The report as Stryker's JSON; validated before it is returned."""
    data = {
        "schemaVersion": SCHEMA_VERSION,
        "thresholds": _thresholds(report),
        "files": {} if report.error is not None else _files(report),  # an error leaves no mutant to show
        "framework": {"name": "l43-grader"},
        "config": {"chapter": report.chapter, "verdict": report.verdict.value, "pool_version": report.pool_version,
                   "source_shown": source_shown(report), "error": report.error},
    }
    validate(data)
    return data


def _thresholds(report: Report) -> dict:
    """Below the chapter's bar is red; Stryker's 'warning' band is not used (the bar is one number)."""
    bar = round(100 * report.tests.threshold) if report.tests else 80
    return {"high": bar, "low": bar}


def _files(report: Report) -> dict:
    chapter, reference, sites = _catalogue_sites(report)
    shown = source_shown(report)
    results = report.tests.mutants if report.tests else ()
    by_id = {m.id: m for m in results}
    mutants = [_mutant(mutant_id, site, by_id.get(mutant_id), report, shown)
               for mutant_id, site in sites.items()]
    source = reference if shown else _placeholder(reference, sites.values())
    # The bare file name: the web component shows a lone file by its name alone, and the page links to it so.
    return {chapter.reference_impl.name: {"language": "python", "source": source, "mutants": mutants}}


def _catalogue_sites(report: Report):
    try:
        chapter = load_chapter(report.chapter)
        catalogue = load_catalogue(chapter)
    except (ManifestError, CatalogueError) as exc:
        raise MutationReportError(str(exc)) from exc
    if catalogue.pool.version != report.pool_version:
        raise MutationReportError(f"the report was graded on pool {report.pool_version}, but the chapter's pool is "
                                  f"now {catalogue.pool.version}: regrade to get a mutation report")
    reference = catalogue.reference.decode("utf-8")
    pitfalls = {p.id: p for p in catalogue.pitfalls}
    generated = {m.id: m for m in catalogue.pool.mutants}
    sites = {}
    for mutant in catalogue.mutants:
        span = mutation_span(reference, mutant.source.decode("utf-8"))
        if mutant.pitfall:
            sites[mutant.id] = MutantSite(span, PITFALL_MUTATOR, f"{mutant.id}: {pitfalls[mutant.id].pitfall}")
        else:
            meta = generated[mutant.id]
            sites[mutant.id] = MutantSite(span, meta.operator, f"{mutant.id}: {meta.operator} in {meta.function}")
    return chapter, reference, sites


def _mutant(mutant_id: str, site: MutantSite, result: MutantResult | None, report: Report, shown: bool) -> dict:
    (start_line, start_column), (end_line, end_column) = site.span.start, site.span.end
    entry = {"id": mutant_id, "mutatorName": site.mutator, "description": site.description,
             "location": {"start": {"line": start_line, "column": start_column},
                          "end": {"line": end_line, "column": end_column}}}
    if shown:
        entry["replacement"] = site.span.replacement
    entry.update(_status(result, report))
    return entry


def _status(result: MutantResult | None, report: Report) -> dict:
    tests = report.tests
    if tests is None:
        return {"status": NO_TESTS, "statusReason": "no tests submitted"}
    if tests.verdict is TestsVerdict.INVALID:
        return {"status": NOT_COUNTED, "statusReason": f"not counted, your tests are invalid: {tests.invalid_reason}"}
    if result is None:
        return {"status": NOT_COUNTED, "statusReason": "not run"}
    status: dict[str, object] = {"status": STATUS[result.outcome]}
    if result.killed_by:
        status["killedBy"] = [result.killed_by]
    if not result.outcome.is_killed:  # the page shows it with the mutant, whose code it may not show
        status["statusReason"] = survivor_note(result, report)
    return status


def mutation_span(reference: str, mutated: str) -> Span:
    """The smallest character range of ``reference`` that ``mutated`` replaces."""
    limit = min(len(reference), len(mutated))
    prefix = next((i for i in range(limit) if reference[i] != mutated[i]), limit)
    room = limit - prefix
    suffix = next((k for k in range(room) if reference[-1 - k] != mutated[-1 - k]), room)
    end, mutated_end = len(reference) - suffix, len(mutated) - suffix
    return Span(_position(reference, prefix), _position(reference, end), mutated[prefix:mutated_end])


def _position(text: str, offset: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _placeholder(reference: str, sites) -> str:
    """Blank lines as many as the reference's, each wide enough for the mutant positions on it."""
    widths = [0] * (reference.count("\n") + 1)
    for site in sites:
        for line, column in (site.span.start, site.span.end):
            widths[line - 1] = max(widths[line - 1], column - 1)
    lines = [" " * width for width in widths]
    lines[0] = HIDDEN_NOTE.ljust(widths[0])
    return "\n".join(lines)
