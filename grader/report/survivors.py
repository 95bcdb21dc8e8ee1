"""What a report says of a mutant that survived. Its code is never shown (it would show the
reference), so a format that lists a survivor says, in the chapter's words, what test catches it:
for a pitfall, its symptom and the course test that catches it; for a pool mutant, its place in
the module and what catches the mutants there. The text, JUnit and Stryker reports (the page's) say
it alike; the hints travel in the report itself (``tests.place_hints``), so a reader of its JSON
has them without the chapter's manifest."""

from __future__ import annotations

from collections.abc import Sequence

from grader.report.model import MutantResult, Report

ANOTHER_PART = "another part"  # the place of a pool mutant the chapter does not place


def survivors_by_place(survivors: Sequence[MutantResult]) -> dict[str, list[str]]:
    """The survivors' ids under their place in the module, the place with the most first: a list of
    ids alone could not be looked up anywhere, their code being never shown (red team, round 28)."""
    places: dict[str, list[str]] = {}
    for mutant in survivors:
        places.setdefault(mutant.where or ANOTHER_PART, []).append(mutant.id)
    return dict(sorted(places.items(), key=lambda place: -len(place[1])))


def survivor_note(mutant: MutantResult, report: Report) -> str:
    """What a format says of a mutant that survived: a pitfall's when_missed, or a pool mutant's
    place and what catches the mutants there (the report's place_hints, from the chapter)."""
    pitfall = next((p for p in report.pitfalls if p.id == mutant.id), None) if mutant.pitfall else None
    if pitfall is not None:
        return pitfall.when_missed
    where = mutant.where or ANOTHER_PART
    hint = report.tests.place_hints.get(where) if report.tests else None
    return f"every test passed on this mutant, which changes {where} (its code is not shown)" + (
        f"; {hint}" if hint else "")
