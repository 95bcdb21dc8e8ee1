"""The command line: a thin typer layer over keyword-only functions that return results.

Exit codes are the CI contract: 0 the grade passed, 1 it failed, 2 it could not be graded
(bad input, sandbox unavailable, broken chapter material).
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path

import typer

from grader.chapter import DEFAULT_CHAPTER
from grader.grading import GradeRequest, grade
from grader.report import RENDERERS
from grader.report.model import Verdict

EXIT_CODES = {Verdict.PASS: 0, Verdict.FAIL: 1, Verdict.ERROR: 2}

app = typer.Typer(
    help="Grade L4.3 submissions: the implementation against the course tests and trusted probes, "
    "and the student's tests by how many mutants of the reference they kill.",
    no_args_is_help=True,
    add_completion=False,
)


class Format(str, enum.Enum):
    text = "text"
    json = "json"


class Backend(str, enum.Enum):
    bwrap = "bwrap"
    docker = "docker"


CHAPTER = typer.Option(DEFAULT_CHAPTER, "--chapter", help="chapter id (a manifest in chapters/)")
FORMAT = typer.Option(Format.text, "--format", help="report format")
OUT = typer.Option(None, "--out", help="write the report to this file instead of standard output")
BACKEND = typer.Option(Backend.bwrap, "--backend", help="sandbox backend", envvar="GRADER_SANDBOX")


@app.command()
def check(
    repo: Path = typer.Argument(Path("."), help="the course repository (default: the current folder)"),
    chapter: str = CHAPTER,
    format: Format = FORMAT,
    out: Path | None = OUT,
    backend: Backend = BACKEND,
) -> None:
    """Full check of a course repo: course tests and probes on your luong.py, then the mutation
    grade of your tests (python/tests/l4-3-luong/)."""
    _finish(grade(GradeRequest(chapter=chapter, repo=repo, backend=backend.value)), format, out)


@app.command("grade")
def grade_command(
    impl: Path = typer.Option(..., "--impl", help="the luong.py to grade"),
    tests: Path | None = typer.Option(None, "--tests", help="a folder of the student's tests"),
    chapter: str = CHAPTER,
    format: Format = FORMAT,
    out: Path | None = OUT,
    backend: Backend = BACKEND,
) -> None:
    """Grade one implementation file and, optionally, a folder of tests."""
    _finish(grade(GradeRequest(chapter=chapter, impl=impl, tests=tests, backend=backend.value)), format, out)


def _finish(report, format: Format, out: Path | None) -> None:
    text = RENDERERS[format.value](report)
    if out is None:
        sys.stdout.write(text)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        if format is not Format.text:
            sys.stdout.write(RENDERERS["text"](report))
    raise typer.Exit(EXIT_CODES[report.verdict])


def main() -> None:
    app()
