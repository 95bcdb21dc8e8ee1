"""The student's verbs besides `check`: start a chapter, run its course tests, diff against the reference.

They mirror the course's own tool (``ol start/tests/diff``), take the course repo and the chapter
like ``grader check``, and reuse the grading pipeline's pieces: `tests` is the implementation
phase alone, and `diff` trusts nothing less than a real grade's implementation verdict, because
the reference is the chapter's answer and is shown only to a student who no longer needs it.
"""

from __future__ import annotations

import ast
import difflib
import io
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.text import Text

from grader.chapter import Chapter, ManifestError, load_chapter
from grader.grading import GRADING_ERRORS, GradeRequest, grade, run_course_tests, sandboxed_runners
from grader.intake import IntakeError, read_course_repo, read_submission, repo_path
from grader.report.model import CourseTest, PrintableText, Report, Verdict
from grader.report.stryker import source_shown, tests_short_of_the_bar
from grader.report.text import course_test_table
from grader.settings import Settings

PASSED = "passed"
STUB_NOTE = ("Stub written by `grader start` from the contract {contract}.\n"
             "Every body raises NotImplementedError until you write it.")


class WorkflowError(Exception):
    """A verb cannot do what was asked (bad chapter, unreadable contract, not a folder)."""


class AlreadyStarted(WorkflowError):
    """`start` would overwrite the student's luong.py."""


@dataclass(frozen=True)
class Started:
    impl: Path  # the stub written
    tests: Path  # the (empty) folder for the student's tests
    rung: str  # the course's rung for this chapter's graded tests


@dataclass(frozen=True)
class CourseRun(PrintableText):
    verdict: Verdict
    tests: tuple[CourseTest, ...]
    error: str | None = None


@dataclass(frozen=True)
class Diff(PrintableText):
    verdict: Verdict  # PASS: shown; FAIL: refused because the implementation does not pass; ERROR
    text: str  # the unified diff, or why there is none


# -- start -------------------------------------------------------------------------------------


def start(*, chapter_id: str, repo: Path, force: bool = False) -> Started:
    """Write the stub luong.py and the empty tests folder into a course repo."""
    chapter = _chapter(chapter_id)
    contract = chapter.contract
    try:
        stub = stub_source(contract.read_text(encoding="utf-8"), contract_name=contract.name)
    except (OSError, SyntaxError) as exc:
        raise WorkflowError(f"cannot read the contract {contract}: {exc}") from exc
    if not repo.is_dir():
        raise WorkflowError(f"{repo}: not a folder (expected your course repository; to start in a new one, "
                            "make the folder first)")
    try:  # through a linked folder, --force would overwrite whatever the link leads to
        impl, tests = repo_path(repo, chapter.student.impl), repo_path(repo, chapter.student.tests)
    except IntakeError as exc:
        raise WorkflowError(str(exc)) from None
    if impl.exists() and not force:
        raise AlreadyStarted(f"{impl} already exists; not overwriting your work (use --force to replace it)")
    try:  # both folders before the file: a path that cannot be made leaves nothing half started
        impl.parent.mkdir(parents=True, exist_ok=True)
        tests.mkdir(parents=True, exist_ok=True)
        impl.write_text(stub, encoding="utf-8")
    except OSError as exc:  # a file where a folder of the layout goes, a read-only repo (red team, round 17)
        raise WorkflowError(f"cannot write the chapter's layout: {exc.filename}: {exc.strerror or exc}") from None
    return Started(impl=impl, tests=tests, rung=chapter.rung)


def stub_source(contract: str, *, contract_name: str) -> str:
    """The contract turned into an importable module: the comment above each def becomes its
    docstring, each body raises NotImplementedError, everything else is kept as written."""
    lines = contract.splitlines()
    tree = ast.parse(contract)
    header = _comment_block(lines, len(_leading_comments(lines)))
    docstring = STUB_NOTE.format(contract=contract_name) + ("\n\n" + "\n".join(header) if header else "")
    out = [_docstring(docstring, "")]
    functions = {node.lineno: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    skip = set(range(len(_leading_comments(lines))))
    for node in functions.values():
        skip.update(range(node.lineno - 1 - len(_comment_block(lines, node.lineno - 1)), node.lineno - 1))
    index = 0
    while index < len(lines):
        node = functions.get(index + 1)
        if node is not None:
            if out[-1].strip() and not out[-1].rstrip().endswith(":"):
                out.append("")  # a blank line between methods, which a .pyi leaves out
            out += _stub_function(lines, node, _comment_block(lines, node.lineno - 1), _qualname(tree, node))
            index = node.end_lineno
        else:
            if index not in skip:
                out.append(lines[index])
            index += 1
    return "\n".join(out).rstrip() + "\n"


def _leading_comments(lines: list[str]) -> list[str]:
    block = []
    for line in lines:
        if not line.startswith("#"):
            break
        block.append(line)
    return block


def _comment_block(lines: list[str], before: int) -> list[str]:
    """The comment lines directly above line index ``before``, without their '#'."""
    block: list[str] = []
    index = before - 1
    while index >= 0 and lines[index].lstrip().startswith("#"):
        block.insert(0, lines[index].lstrip()[1:].removeprefix(" "))
        index -= 1
    return block


def _docstring(text: str, indent: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    body = "\n".join(f"{indent}{line}" if line else "" for line in escaped.splitlines())
    return f'{indent}"""{body.lstrip()}\n{indent}"""' if "\n" in escaped else f'{indent}"""{escaped}"""'


def _stub_function(lines: list[str], node: ast.FunctionDef, comments: list[str], qualname: str) -> list[str]:
    body = node.body[0]
    signature = lines[node.lineno - 1 : body.lineno - 1] + [lines[body.lineno - 1][: body.col_offset].rstrip()]
    indent = " " * (node.col_offset + 4)
    doc = [_docstring("\n".join(comments), indent)] if comments else []
    return signature + doc + [f'{indent}raise NotImplementedError("{qualname}: not written yet")']


def _qualname(tree: ast.Module, target: ast.FunctionDef) -> str:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and target in node.body:
            return f"{node.name}.{target.name}"
    return target.name


# -- tests -------------------------------------------------------------------------------------


def course_tests(*, chapter_id: str, repo: Path, backend: str) -> CourseRun:
    """Only the course tests, on the repo's luong.py, in the sandbox (no probes, no mutation)."""
    try:
        settings = Settings.from_env()
        chapter = load_chapter(chapter_id)
        submission = read_submission(chapter, repo_path(repo, chapter.student.impl), None)
        with sandboxed_runners(chapter, submission, backend, settings) as runners:
            tests = run_course_tests(runners.clean, submission.impl, settings)
    except GRADING_ERRORS as exc:
        return CourseRun(verdict=Verdict.ERROR, tests=(), error=str(exc))
    verdict = Verdict.PASS if tests and all(t.outcome == PASSED for t in tests) else Verdict.FAIL
    return CourseRun(verdict=verdict, tests=tests)


COURSE_TESTS_ONLY = ("the course tests only, which run in your own process: `grader check` also runs the "
                     "trusted probes, which decide whether the implementation passes")


def render_course_run(run: CourseRun, *, width: int = 110) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=False, color_system=None)
    if run.error is not None:
        console.print(Text(f"error: {run.error}"))
        return console.file.getvalue()
    table = course_test_table(run.tests, title="Course tests")
    passed = sum(t.outcome == PASSED for t in run.tests)
    console.print(table)
    console.print(Text(f"{passed}/{len(run.tests)} course tests passed: {run.verdict.value.upper()}"))
    console.print(Text(COURSE_TESTS_ONLY))
    return console.file.getvalue()


# -- diff --------------------------------------------------------------------------------------


def diff(*, chapter_id: str, repo: Path, backend: str) -> Diff:
    """The student's luong.py against the reference, only once a real grade of the whole course
    repo passes: the implementation and the tests (stryker.source_shown says why the tests too)."""
    try:
        chapter = load_chapter(chapter_id)
    except ManifestError as exc:
        return _diff_error(str(exc))
    report = grade(GradeRequest(chapter=chapter_id, repo=repo, backend=backend))
    if report.verdict is Verdict.ERROR:
        return _diff_error(report.error or "the grade ended in an error")
    if not source_shown(report):
        return Diff(Verdict.FAIL, _refusal(report))
    try:
        graded = read_course_repo(chapter, repo)
    except IntakeError:
        graded = None
    if graded is None or graded.digest != report.submission:
        return _diff_error(f"{repo} changed while it was graded; run `grader diff` again")
    reference = chapter.reference_impl.read_text(encoding="utf-8")
    text = "".join(difflib.unified_diff(reference.splitlines(keepends=True),
                                        graded.impl.decode("utf-8").splitlines(keepends=True),
                                        fromfile=f"reference {chapter.student.impl}",
                                        tofile=f"your {chapter.student.impl}"))
    return Diff(Verdict.PASS, text or "your luong.py is identical to the reference\n")


def _diff_error(message: str) -> Diff:
    return Diff(Verdict.ERROR, f"error: {message}\n")


def _refusal(report: Report) -> str:
    implementation = report.implementation
    failing = [f"{t.name} ({t.outcome})" for t in implementation.failing_tests]
    reasons = [f"course tests not passing: {', '.join(failing)}"] if failing else []
    if not implementation.probes_agree:
        reasons.append("the trusted probes disagree with the reference: " + "; ".join(implementation.probe_disagreements))
    short = tests_short_of_the_bar(report.tests)
    if short is not None:
        reasons.append(short)
    return ("The reference is shown only once your implementation passes and your tests pass the bar; "
            "they do not yet.\n" + "\n".join(f"  - {reason}" for reason in reasons) + "\n")


def _chapter(chapter_id: str) -> Chapter:
    try:
        return load_chapter(chapter_id)
    except ManifestError as exc:
        raise WorkflowError(str(exc)) from exc
