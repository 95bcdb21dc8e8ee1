"""Which mutants the runs alone check: every pitfall, and a sample of the pool nobody can foresee."""

from __future__ import annotations

from grader.grading import alone_sample
from grader.mutants import load_catalogue
from grader.settings import Settings


def test_the_sample_holds_every_pitfall_and_is_drawn_afresh_for_each_grade(chapter):
    """The submission's seed is a hash of its files and the pool's ids are in every report: a
    sample drawn from it could be steered by editing a comment until it held only mutants the
    tests really kill."""
    catalogue = load_catalogue(chapter)
    settings = Settings(alone_sample=12)
    pitfalls = {m.id for m in catalogue.mutants if m.pitfall}
    samples = [alone_sample(catalogue, settings) for _ in range(3)]
    assert all(pitfalls <= sample and len(sample - pitfalls) == 12 for sample in samples)
    assert len({frozenset(sample) for sample in samples}) == 3
