"""The frozen pool on disk: its types, its version, and the loading and checks the grader relies on."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from grader.chapter import Chapter, load_chapter
from grader.patches import PatchError, apply_patch

GENERATOR = "mutmut 3.8.1"
TIMEOUT_FACTOR, TIMEOUT_FLOOR_S = 5.0, 10.0  # a mutant may take 5x the reference run, at least 10 s
TIMED_OUT = "timeout"  # the killed_by entry of a mutant whose run hit its timeout (counts as killed)
PATCH_LABEL = "luong.py"
COURSE, ORACLE, BOTH = "course", "oracle", "both"  # which suites run_suites runs

# Drop reasons: why a generated mutant is not in the pool.
MESSAGE_ONLY = "message-only"  # only the text of an error message or a docstring changes
EQUIVALENT = "equivalent"  # computes the same function: no behavioural test can tell it apart
NOT_KILLABLE = "not killable by any behavioural test"  # differs, but not observably through the API
HAND_REASONS = (EQUIVALENT, NOT_KILLABLE, MESSAGE_ONLY)


class PoolError(Exception):
    """The pool cannot be built, or the frozen pool does not match the reference."""


@dataclass(frozen=True)
class PoolMutant:
    """One kept mutant, as stored in pool.json (``patch`` is the patch file's name)."""

    id: str
    patch: str
    function: str
    mutmut_name: str
    operator: str
    line: int
    column: int
    original: str
    replacement: str
    killed_by: tuple[str, ...]


@dataclass(frozen=True)
class Pool:
    chapter: str
    generator: str
    reference_sha256: str
    version: str
    mutants: tuple[PoolMutant, ...]
    patches: dict[str, str]  # id -> patch text


# -- loading and verifying ------------------------------------------------------------------------


def pool_version(patches: dict[str, str]) -> str:
    """A content hash over the kept patches, in id order: same patches, same version."""
    digest = hashlib.sha256()
    for mutant_id in sorted(patches):
        digest.update(f"{mutant_id}\n{patches[mutant_id]}\x00".encode())
    return digest.hexdigest()[:16]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _chapter_of(manifest_path: Path) -> Chapter:
    manifest_path = Path(manifest_path).resolve()
    return load_chapter(manifest_path.stem, root=manifest_path.parent.parent)


def load_pool(manifest_path: Path) -> Pool:
    """The frozen pool of the chapter whose manifest is ``manifest_path``, patches read in."""
    chapter = _chapter_of(manifest_path)
    try:
        data = json.loads(chapter.pool.read_text(encoding="utf-8"))
        mutants = tuple(PoolMutant(**{**m, "killed_by": tuple(m["killed_by"])}) for m in data["mutants"])
        patches = {m.id: (chapter.pool.parent / m.patch).read_text(encoding="utf-8") for m in mutants}
        return Pool(
            chapter=data["chapter"],
            generator=data["generator"],
            reference_sha256=data["reference_sha256"],
            version=data["version"],
            mutants=mutants,
            patches=patches,
        )
    except (OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise PoolError(f"{chapter.pool}: unreadable pool ({exc})") from exc


def apply_pool(pool: Pool, reference: str) -> tuple[dict[str, str], list[str]]:
    """Every mutant's source (id -> module text), and every problem that makes ``pool`` unsafe to
    grade with against ``reference`` ([] if none): each patch is applied once, for both."""
    problems = []
    if sha256_text(reference) != pool.reference_sha256:
        problems.append("the reference changed since the pool was built: rebuild it")
    if pool_version(pool.patches) != pool.version:
        problems.append(f"version {pool.version} does not match the patches ({pool_version(pool.patches)})")
    ids = [m.id for m in pool.mutants]
    if len(set(ids)) != len(ids):
        problems.append("duplicate mutant ids")
    sources = {}
    for mutant_id, patch in pool.patches.items():
        try:
            sources[mutant_id] = apply_patch(reference, patch)
        except PatchError as exc:
            problems.append(f"{mutant_id}: {exc}")
            continue
        if sources[mutant_id] == reference:
            problems.append(f"{mutant_id}: the patch changes nothing")
    return sources, problems


def verify_pool(pool: Pool, reference: str) -> list[str]:
    """Every problem that makes ``pool`` unsafe to grade with against ``reference``; [] if none."""
    return apply_pool(pool, reference)[1]


