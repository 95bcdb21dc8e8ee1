"""The chapter manifest: every path and rule the grader needs for one course chapter.

A chapter is data (``chapters/<id>.toml``), so grading a second chapter means writing a second
manifest, not new code. All paths in a manifest are relative to the repository root, and are
resolved here once so that no other module builds paths by hand.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CHAPTERS_DIR = REPO_ROOT / "chapters"
DEFAULT_CHAPTER = "L4.3"


class ManifestError(Exception):
    """The manifest is missing, unreadable, or lacks a field the grader needs."""


@dataclass(frozen=True)
class StudentLayout:
    """Where the graded files sit in a student's course repository."""

    impl: str  # relative path of the implementation in a course repo
    tests: str  # relative path of the student's test folder in a course repo
    module: str  # the module name every implementation is installed under
    allowed_imports: tuple[str, ...]  # the tinyllm modules student tests may import
    instead_of: Mapping[str, str] = field(default_factory=dict)  # a module outside them: what to do instead


@dataclass(frozen=True)
class Chapter:
    """One chapter's manifest, with paths resolved against the repository root."""

    id: str
    title: str
    rung: str  # the course's rung for the chapter's graded tests
    threshold: float
    required_pitfalls: tuple[str, ...]
    student: StudentLayout
    substrate: Path  # the tinyllm package folder (mounted read-only into sandboxes)
    reference_impl: Path  # never mounted into a sandbox
    variants: tuple[Path, ...]  # other correct implementations, for the validity check
    contracts: Path
    course_tests: Path
    oracle_suite: Path
    golden: Path
    oracle_script: Path
    pitfalls: Path
    pool: Path
    dropped: Path
    decoys: Path  # a folder of patches: correct implementations that look like mutants
    shape_decoys: Path  # decoys that change the code's shape (calls, names), one drawn in every grade
    manifest: Path
    # the reference's functions the pool mutates -> where that is in the module, in the contract's words
    mutant_places: Mapping[str, str] = field(default_factory=dict)
    place_hints: Mapping[str, str] = field(default_factory=dict)  # a place -> what tests catch its mutants


    @property
    def contract(self) -> Path:
        """The graded module's contract: the .pyi students write their implementation against."""
        return self.contracts / (self.student.module.replace(".", "/") + ".pyi")


def _field(table: dict, key: str, where: str):
    try:
        return table[key]
    except KeyError:
        raise ManifestError(f"{where}: missing field {key!r}") from None


def load_chapter(chapter_id: str = DEFAULT_CHAPTER, *, root: Path = REPO_ROOT) -> Chapter:
    """Read ``chapters/<chapter_id>.toml`` under ``root``."""
    path = root / "chapters" / f"{chapter_id}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in (root / "chapters").glob("*.toml"))
        raise ManifestError(f"unknown chapter {chapter_id!r}; known chapters: {', '.join(known) or 'none'}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: {exc}") from exc
    where = str(path)

    def section(name: str) -> dict:
        return _field(data, name, where)

    def resolve(table: str, key: str) -> Path:
        return root / _field(section(table), key, f"{where} [{table}]")

    student = section("student")
    reference = section("reference")
    return Chapter(
        id=_field(data, "id", where),
        title=_field(data, "title", where),
        rung=_field(data, "rung", where),
        threshold=float(_field(data, "threshold", where)),
        required_pitfalls=tuple(_field(data, "required_pitfalls", where)),
        student=StudentLayout(
            impl=_field(student, "impl", where),
            tests=_field(student, "tests", where),
            module=_field(student, "module", where),
            allowed_imports=tuple(_field(student, "allowed_imports", where)),
            instead_of=dict(student.get("instead_of", {})),
        ),
        substrate=resolve("reference", "substrate"),
        reference_impl=resolve("reference", "impl"),
        variants=tuple(root / v for v in _field(reference, "variants", where)),
        contracts=resolve("reference", "contracts"),
        course_tests=resolve("reference", "course_tests"),
        oracle_suite=resolve("reference", "oracle_suite"),
        golden=resolve("fixtures", "golden"),
        oracle_script=resolve("fixtures", "oracle"),
        pitfalls=resolve("mutants", "pitfalls"),
        pool=resolve("mutants", "pool"),
        dropped=resolve("mutants", "dropped"),
        decoys=resolve("mutants", "decoys"),
        shape_decoys=resolve("mutants", "shape_decoys"),
        manifest=path,
        mutant_places=dict(section("mutants").get("places", {})),
        place_hints=dict(section("mutants").get("place_hints", {})),
    )
