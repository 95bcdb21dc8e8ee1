"""The command line: a thin typer layer over keyword-only functions that return results.

Exit codes are the CI contract: 0 the grade passed, 1 it failed, 2 it could not be graded
(bad input, sandbox unavailable, broken chapter material).
"""

from __future__ import annotations

import enum
import os
import signal
import sys
import traceback
from pathlib import Path

import typer
from rich.console import Console
from rich.syntax import Syntax

from grader import workflow
from grader.chapter import DEFAULT_CHAPTER, load_chapter
from grader.export import ExportError, export_gradescope
from grader.grading import GradeRequest, grade
from grader.intake import TEST_FILES
from grader.report.formats import RENDERERS
from grader.report.model import Verdict
from grader.report.stryker import MutationReportError

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
    gradescope = "gradescope"
    junit = "junit"
    stryker = "stryker"
    html = "html"


class Backend(str, enum.Enum):
    bwrap = "bwrap"
    docker = "docker"


export_app = typer.Typer(help="Package the grader for another platform.", no_args_is_help=True)
app.add_typer(export_app, name="export")

CHAPTER = typer.Option(DEFAULT_CHAPTER, "--chapter", help="chapter id (a manifest in chapters/)")
FORMAT = typer.Option(Format.text, "--format", help="report format")


def _writable_report_path(out: Path | None) -> Path | None:
    """Refuse an --out the report could not be written to before grading, not after it."""
    if out is None:
        return None
    if out.is_dir():
        raise typer.BadParameter(f"{out} is a folder: give the report's file name")
    existing = next(folder for folder in out.absolute().parents if folder.exists())
    if not existing.is_dir():
        raise typer.BadParameter(f"{existing} is not a folder, so {out} cannot be made")
    target = out if out.exists() else existing
    if not os.access(target, os.W_OK):
        raise typer.BadParameter(f"{target} is not writable")
    return out


OUT = typer.Option(None, "--out", callback=_writable_report_path,
                   help="write the report to this file (in a format other than text, the text report still goes "
                   "to standard output)")
BACKEND = typer.Option(Backend.bwrap, "--backend", help="sandbox backend", envvar="GRADER_SANDBOX")
REPO = typer.Argument(Path("."), help="the course repository (default: the current folder)")


@app.command()
def check(
    repo: Path = REPO,
    chapter: str = CHAPTER,
    format: Format = FORMAT,
    out: Path | None = OUT,
    backend: Backend = BACKEND,
) -> None:
    """Full check of a course repo: your luong.py (course tests, probes), then your tests' mutation grade."""
    report = grade(GradeRequest(chapter=chapter, repo=repo, backend=backend.value))
    if report.implementation is not None and report.tests is None:  # say where the tests were looked for
        folder = repo / load_chapter(chapter).student.tests
        typer.echo(f"note: no test file ({' or '.join(TEST_FILES)}) in {folder}: only the implementation "
                   "was graded", err=True)
    _finish(report, format, out)


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


@app.command()
def start(
    repo: Path = REPO,
    chapter: str = CHAPTER,
    force: bool = typer.Option(False, "--force", help="overwrite an existing luong.py"),
) -> None:
    """Write a stub luong.py from the chapter's contract and the empty folder for your tests."""
    try:
        started = workflow.start(chapter_id=chapter, repo=repo, force=force)
    except workflow.WorkflowError as exc:
        typer.echo(f"grader start: {exc}", err=True)
        refused = isinstance(exc, workflow.AlreadyStarted)
        raise typer.Exit(EXIT_CODES[Verdict.FAIL if refused else Verdict.ERROR]) from None
    typer.echo(f"wrote {started.impl}")
    typer.echo(f"your tests go in {started.tests}/")
    typer.echo(f"rung: {started.rung}")


@app.command()
def tests(repo: Path = REPO, chapter: str = CHAPTER, backend: Backend = BACKEND) -> None:
    """Run only the course tests on your luong.py (in the sandbox)."""
    run = workflow.course_tests(chapter_id=chapter, repo=repo, backend=backend.value)
    sys.stdout.write(workflow.render_course_run(run))
    raise typer.Exit(EXIT_CODES[run.verdict])


@app.command()
def diff(repo: Path = REPO, chapter: str = CHAPTER, backend: Backend = BACKEND) -> None:
    """Your luong.py against the reference, once your implementation passes."""
    result = workflow.diff(chapter_id=chapter, repo=repo, backend=backend.value)
    if result.verdict is Verdict.PASS and sys.stdout.isatty():
        Console().print(Syntax(result.text, "diff", background_color="default"))
    else:
        (sys.stderr if result.verdict is Verdict.ERROR else sys.stdout).write(result.text)
    raise typer.Exit(EXIT_CODES[result.verdict])


@export_app.command("gradescope")
def export_gradescope_command(
    out: Path = typer.Option(Path("gradescope-autograder.zip"), "--out", help="the autograder zip to write"),
    chapter: str = CHAPTER,
) -> None:
    """Build a Gradescope autograder zip (setup.sh, run_autograder and this grader)."""
    try:
        written = export_gradescope(out=out, chapter_id=chapter)
    except ExportError as exc:
        typer.echo(f"grader export gradescope: {exc}", err=True)
        raise typer.Exit(EXIT_CODES[Verdict.ERROR]) from None
    typer.echo(f"wrote {written}")


def _finish(report, format: Format, out: Path | None) -> None:
    try:
        text = RENDERERS[format.value](report)
    except MutationReportError as exc:
        typer.echo(f"cannot write the {format.value} report: {exc}", err=True)
        raise typer.Exit(EXIT_CODES[Verdict.ERROR]) from None
    if out is None:
        sys.stdout.write(text)
        raise typer.Exit(EXIT_CODES[report.verdict])
    if format is not Format.text:
        sys.stdout.write(RENDERERS["text"](report))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:  # checked before grading, but a disk fills and folders change meanwhile
        if format is Format.text:
            sys.stdout.write(text)  # the grade is not lost: the text report is on standard output
        typer.echo(f"error: cannot write the report to {out}: {exc.strerror or exc}", err=True)
        raise typer.Exit(EXIT_CODES[Verdict.ERROR]) from None
    raise typer.Exit(EXIT_CODES[report.verdict])


def main() -> None:
    """The console script. Exit codes are the CI contract, so a crash (a bug) exits 2, "could not
    grade", never 1, which would read as a failed grade; the traceback is on stderr."""
    signal.signal(signal.SIGTERM, _unwind_on_sigterm)
    try:
        app()
    except Exception:  # noqa: BLE001 - whatever the bug, the exit code must not say "fail"
        traceback.print_exc()
        sys.exit(EXIT_CODES[Verdict.ERROR])


def _unwind_on_sigterm(signum: int, _frame) -> None:
    """A stop request (a supervisor's, ``docker stop``'s, ``kill``'s) unwinds the grade as Ctrl-C
    does, closing its sandboxes on the way out: by default SIGTERM ends Python at once, and the
    Docker engine keeps a container whose client is gone (bwrap's die with their parent). The
    exit status is the shell's for the signal, so it never reads as a grade's verdict."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second request must not cut the cleanup short
    print("grader: stopped (SIGTERM) before the grade was done: no report", file=sys.stderr)
    raise SystemExit(128 + signum)
