"""`grader export gradescope`: a Gradescope autograder zip that runs this grader on each submission.

Gradescope's layout (its "Autograder Specifications"): the zip's root holds ``setup.sh`` (run once
on Ubuntu to install) and ``run_autograder`` (run per submission, writes
``/autograder/results/results.json``); the zip is extracted to ``/autograder/source``. The zip
holds the grader and exactly the chapter material its manifest names, so a course ships one
chapter's answers and nothing else. The two scripts are templates in ``export_files/``.
"""

from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath

from grader.chapter import REPO_ROOT, Chapter, ManifestError, load_chapter

TEMPLATES = Path(__file__).with_name("export_files")
SCRIPTS = ("setup.sh", "run_autograder")
# What the grader needs besides the chapter material: its code, its pins, its setup.
GRADER_FILES = ("grader", "pyproject.toml", "requirements.txt", "requirements-sandbox.txt", "scripts/setup.sh")
SKIPPED_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache"})
EXECUTABLE = 0o100755 << 16  # a regular file, rwxr-xr-x, as zip's external attributes store it
REGULAR = 0o100644 << 16


class ExportError(Exception):
    """The zip cannot be built (unknown chapter, missing material, unwritable destination)."""


def export_gradescope(*, out: Path, chapter_id: str) -> Path:
    """Write the autograder zip to ``out`` and return its path."""
    try:
        chapter = load_chapter(chapter_id)
    except ManifestError as exc:
        raise ExportError(str(exc)) from exc
    members = sorted({(REPO_ROOT / name) for name in GRADER_FILES} | set(chapter_material(chapter)))
    missing = [str(path.relative_to(REPO_ROOT)) for path in members if not path.exists()]
    if missing:
        raise ExportError(f"chapter {chapter.id}: material missing from this checkout: {', '.join(missing)}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name in SCRIPTS:
                _add(archive, name, _script(name, chapter).encode("utf-8"), EXECUTABLE)
            for file in sorted({file for path in members for file in _files(path)}):  # folders overlap
                _add(archive, str(file.relative_to(REPO_ROOT)), file.read_bytes(), REGULAR)
    except OSError as exc:
        raise ExportError(f"cannot write {out}: {exc}") from exc
    return out


def chapter_material(chapter: Chapter) -> list[Path]:
    """Every file or folder of the repository that grading ``chapter`` reads."""
    return [chapter.manifest, chapter.substrate, chapter.reference_impl, *chapter.variants, chapter.contracts,
            chapter.course_tests, chapter.golden, chapter.pitfalls.parent, chapter.pool.parent, chapter.dropped,
            chapter.decoys, chapter.shape_decoys]


def _script(name: str, chapter: Chapter) -> str:
    template = (TEMPLATES / name).read_text(encoding="utf-8")
    values = {"@CHAPTER@": chapter.id, "@IMPL@": chapter.student.impl,
              "@IMPL_NAME@": PurePosixPath(chapter.student.impl).name,
              "@TESTS_DIR@": PurePosixPath(chapter.student.tests).name}
    for key, value in values.items():
        template = template.replace(key, value)
    return template


def _files(path: Path):
    if path.is_file():
        yield path
        return
    for child in sorted(path.rglob("*")):
        if child.is_file() and not SKIPPED_NAMES.intersection(child.relative_to(path).parts) \
                and child.suffix != ".pyc":
            yield child


def _add(archive: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # fixed: same inputs, same zip
    info.external_attr = mode
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)
