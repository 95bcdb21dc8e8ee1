"""The chapter's implementations, as the grader runs them: the reference, the correct variants,
and every mutant (pitfalls first, then the generated pool), each as module source bytes.

Mutants are rebuilt from their patches at load time with the strict applier, and the pool is
verified against the reference first: a drifted patch must stop the grade, never grade a student
against the wrong code.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

from grader.chapter import Chapter
from grader.patches import PatchError, apply_patch
from grader.pool import Pool, PoolError, apply_pool, load_pool
from grader.report.model import Pitfall


class CatalogueError(Exception):
    """The chapter's trusted material is missing or inconsistent (an instructor must fix it)."""


@dataclass(frozen=True)
class Mutant:
    id: str
    pitfall: bool
    source: bytes


@dataclass(frozen=True)
class Catalogue:
    reference: bytes
    variants: tuple[bytes, ...]
    decoys: tuple[bytes, ...]  # correct, and each one edit away from the reference, as a mutant is
    shape_decoys: tuple[bytes, ...]  # decoys whose edit changes the code's shape (calls, names)
    pitfalls: tuple[Pitfall, ...]
    mutants: tuple[Mutant, ...]  # pitfall mutants first, in id order, then the pool
    pool: Pool  # the generated pool as frozen (its mutants' operators and places)
    recognisers: dict[str, tuple[bytes, ...]]  # pitfall id -> its mutant and other ways into it


def load_catalogue(chapter: Chapter) -> Catalogue:
    try:
        reference = chapter.reference_impl.read_text(encoding="utf-8")
        variants = tuple(path.read_bytes() for path in chapter.variants)
        decoys, shape_decoys = (tuple(_patched(reference, path.read_text("utf-8")) for path in sorted(folder.glob("*.patch")))
                                for folder in (chapter.decoys, chapter.shape_decoys))
        pitfall_table = tomllib.loads(chapter.pitfalls.read_text(encoding="utf-8"))["mutants"]
        pool = load_pool(chapter.manifest)
        pitfall_table = sorted(pitfall_table, key=lambda row: row["id"])
        recognisers = {
            row["id"]: tuple(_patched(reference, (chapter.pitfalls.parent / patch).read_text("utf-8"))
                             for patch in [row["patch"], *row.get("recognisers", [])])
            for row in pitfall_table
        }
    except (OSError, KeyError, tomllib.TOMLDecodeError, PoolError, PatchError) as exc:
        raise CatalogueError(f"chapter {chapter.id}: cannot load its reference material: {exc}") from exc
    pool_sources, problems = apply_pool(pool, reference)
    if problems:
        raise CatalogueError(f"chapter {chapter.id}: the mutant pool is unusable: {'; '.join(problems)}")
    pitfalls = tuple(
        Pitfall(id=row["id"], pitfall=row["pitfall"], symptom=row["symptom"], caught_by=row["caught_by"],
                hint=row.get("hint", ""))
        for row in pitfall_table
    )
    pitfall_mutants = tuple(Mutant(p.id, True, recognisers[p.id][0]) for p in pitfalls)
    pool_mutants = tuple(Mutant(m.id, False, pool_sources[m.id].encode("utf-8")) for m in pool.mutants)
    missing = set(chapter.required_pitfalls) - {p.id for p in pitfalls}
    if missing:
        raise CatalogueError(f"chapter {chapter.id}: required pitfalls without a mutant: {sorted(missing)}")
    return Catalogue(
        reference=reference.encode("utf-8"),
        variants=variants,
        decoys=decoys,
        shape_decoys=shape_decoys,
        pitfalls=pitfalls,
        mutants=pitfall_mutants + pool_mutants,
        pool=pool,
        recognisers=recognisers,
    )


def _patched(reference: str, patch: str) -> bytes:
    return apply_patch(reference, patch).encode("utf-8")
