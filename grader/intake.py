"""Intake: turn what a student handed in into a checked, in-memory submission.

Everything here runs before any untrusted code does, so a refusal costs nothing and can name
the exact file and line. Files are read into memory once; later stages never touch the
student's folder again (it might change, or hold links, while grading runs).
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import io
import tokenize
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from grader.chapter import Chapter

MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 2 * 1024 * 1024
MAX_TEST_FILES = 64
# Data files a test folder may carry besides Python: small fixtures a student makes.
ALLOWED_SUFFIXES = frozenset({".py", ".json", ".txt", ".csv", ".npy", ".npz"})
DYNAMIC_IMPORTS = frozenset({"import_module", "__import__"})
# Left out of the submission, as if absent: caches, and what a course repo's folder commonly holds
# for people and for git (a README, a .gitkeep), which no test reads.
IGNORED_NAMES = frozenset({"__pycache__", ".pytest_cache", ".DS_Store", ".gitkeep", ".gitignore", ".gitattributes"})
IGNORED_SUFFIXES = frozenset({".md", ".markdown", ".rst"})  # in any case: README.MD too
# pytest's own configuration would change how the grader runs pytest (its options, paths, plugins).
PYTEST_CONFIGS = frozenset({"pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"})
MAX_DEPTH = 8  # folder levels below the tests folder
SAME_AS_UTF8 = ("utf-8", "utf-8-sig", "ascii")  # declared encodings that read UTF-8 text as UTF-8 does
TEST_FILES = ("test_*.py", "*_test.py")  # what pytest collects by default, and so the runner
NOT_TESTS = frozenset({"conftest.py", "__init__.py"})  # Python files a tests folder holds besides tests
# How like the tests folder's name a folder beside it is named when its tests are taken for
# misplaced ones (difflib's ratio, for l4-3-luong: l4.3-luong 0.9, luong 0.67, l4-4-decoder 0.45).
NAMED_LIKE = 0.6


class IntakeError(Exception):
    """The submission is refused; the message says what to fix."""


@dataclass(frozen=True)
class Submission:
    """A checked submission: the implementation and the student's test files, in memory."""

    impl: bytes
    tests: tuple[tuple[str, bytes], ...] | None  # (posix relative path, content), sorted; None: no tests
    # Why the tests were refused, when they were: the implementation is graded all the same (its
    # grade was lost with the tests', exit 2, where a suite that could not be collected kept it:
    # red team, round 28)
    tests_refused: str | None = None

    @property
    def digest(self) -> str:
        """Content hash: the same files give the same grade (keyed, the seed: grader.grade_key)."""
        h = hashlib.sha256(b"impl\0" + self.impl)
        for name, data in self.tests or ():
            h.update(b"\0test\0" + name.encode() + b"\0" + data)
        return h.hexdigest()


def read_submission(chapter: Chapter, impl: Path, tests: Path | None) -> Submission:
    """Read and check ``impl`` (a luong.py) and the optional ``tests`` folder; a refused ``impl``
    refuses the submission, refused tests only themselves (Submission.tests_refused)."""
    impl_bytes = _read_impl(impl)
    if tests is None:
        return Submission(impl=impl_bytes, tests=None)
    try:
        test_files = _read_tests(tests, chapter, impl)
        total = len(impl_bytes) + sum(len(d) for _, d in test_files)
        if total > MAX_TOTAL_BYTES:
            raise IntakeError(f"submission is {total} bytes with the tests; the limit is {MAX_TOTAL_BYTES}")
    except IntakeError as exc:
        return Submission(impl=impl_bytes, tests=None, tests_refused=str(exc))
    return Submission(impl=impl_bytes, tests=test_files)


def read_course_repo(chapter: Chapter, repo: Path) -> Submission:
    """Read a student's course repository laid out as the chapter says."""
    if not repo.is_dir():
        raise IntakeError(f"{repo}: not a folder (expected a course repository)")
    impl = repo_path(repo, chapter.student.impl)
    if not impl.exists():
        raise IntakeError(f"{chapter.student.impl}: not found in {repo} (a course repository keeps the "
                          "implementation there: `grader start` writes a stub)")
    try:
        tests = repo_path(repo, chapter.student.tests)
        if not holds_tests(tests):
            _check_no_test_misnamed(tests, chapter.student.tests)
            _check_no_tests_beside(repo, tests, chapter)
            tests = None
    except IntakeError as exc:
        return replace(read_submission(chapter, impl, None), tests_refused=str(exc))
    return read_submission(chapter, impl, tests)


def _check_no_test_misnamed(folder: Path, shown: str) -> None:
    """A tests folder with Python files but no test file holds tests pytest would not collect
    (luong_tests.py): the repository passed with its implementation alone, exit 0, as one whose
    tests were not yet written does (red team, round 28)."""
    if not folder.is_dir():
        return
    written = sorted(str(path.relative_to(folder)) for path in _walk(folder)
                     if path.suffix.lower() == ".py" and path.name not in NOT_TESTS)  # test_luong.PY too (round 29)
    if written:
        raise IntakeError(f"{shown}: holds {', '.join(written[:5])} but no test file: pytest collects tests only "
                          f"from files named {' or '.join(TEST_FILES)}; rename the files that hold your tests")


def _check_no_tests_beside(repo: Path, folder: Path, chapter: Chapter) -> None:
    """Tests of the graded module beside a tests folder that holds none: in the folder above it,
    or in a folder named like it (l4.3-luong for l4-3-luong). The repository passed on its
    implementation alone, exit 0, with a whole suite one character away (honest students, round
    30). Folders of other chapters, named otherwise, are not read."""
    for path in _test_files_beside(folder):
        if _tests_module(path, chapter.student.module):
            raise IntakeError(f"{path.relative_to(repo).as_posix()}: tests {chapter.student.module}, but the chapter "
                              f"reads its tests from {chapter.student.tests}, which holds no test file: move them there")


def _test_files_beside(folder: Path) -> Iterator[Path]:
    """Test files directly in ``folder``'s parent, and below its folders named like ``folder``;
    a folder that reading would refuse (a link, too deep) is passed over, as it is no submission."""
    parent = folder.parent
    if parent.is_symlink() or not parent.is_dir():
        return
    for entry in sorted(_entries(parent, parent)):
        if entry.is_symlink() or entry == folder:
            continue
        if entry.is_file() and _is_test_file(PurePosixPath(entry.name)):
            yield entry
        elif entry.is_dir() and difflib.SequenceMatcher(None, entry.name.lower(), folder.name.lower()).ratio() >= NAMED_LIKE:
            try:
                yield from (path for path in sorted(_walk(entry)) if _is_test_file(PurePosixPath(path.name)))
            except IntakeError:
                continue


def _tests_module(path: Path, module: str) -> bool:
    """Whether the Python file at ``path`` imports ``module`` (or a name from it)."""
    try:
        tree = ast.parse(path.read_bytes()[:MAX_FILE_BYTES])
    except (OSError, SyntaxError, ValueError):
        return False
    return any(name == module or name.startswith(module + ".") for name, _, _ in _imported_modules(tree))


def holds_tests(folder: Path) -> bool:
    """Whether a course repository's tests folder holds a test file: a folder `grader start`
    made and nothing was written to yet is no submission of tests (nor is a missing one). It
    walks the folder as reading it does, so what reading would skip (a test file left only in
    ``__pycache__``) does not count, and what it would refuse (a link) is refused here."""
    return folder.is_dir() and any(_is_test_file(PurePosixPath(path.name)) for path in _walk(folder))


def _is_test_file(path: PurePosixPath) -> bool:
    return any(path.match(pattern) for pattern in TEST_FILES)


def repo_path(repo: Path, relative: str) -> Path:
    """``repo / relative``, refused if a folder on the way is a symbolic link: a linked folder
    can lead out of the repository, to the grader's own reference or another submission, whose
    files would then be graded as the student's."""
    path = repo
    for part in Path(relative).parts:
        path = path / part
        if path.is_symlink():
            raise IntakeError(f"{path.relative_to(repo)}: symbolic links are not accepted in a course repository's "
                              f"path to {relative}; commit the folder itself")
    return path


def _read_regular(path: Path, shown: str) -> bytes:
    if path.is_symlink():
        raise IntakeError(f"{shown}: symbolic links are not accepted; submit the file itself")
    if not path.is_file():
        raise IntakeError(f"{shown}: not found or not a regular file")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise IntakeError(f"{shown}: {size} bytes; the limit per file is {MAX_FILE_BYTES}")
        return path.read_bytes()
    except OSError as exc:  # unreadable, or gone since it was listed
        raise IntakeError(f"{shown}: cannot be read ({exc.strerror or exc})") from None


def _parse_python(data: bytes, shown: str) -> ast.Module:
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark, as some editors write, is no code
    except UnicodeDecodeError as exc:
        raise IntakeError(f"{shown}: not UTF-8 text (byte {exc.start})") from None
    _check_declared_encoding(data, shown)
    try:
        tree = ast.parse(text, filename=shown)
        compile(tree, shown, "exec", dont_inherit=True)  # what only the compiler sees: a late __future__ import
        return tree
    except SyntaxError as exc:
        raise IntakeError(f"{shown}:{exc.lineno}: syntax error: {exc.msg}") from None
    except ValueError as exc:  # e.g. NUL bytes
        raise IntakeError(f"{shown}: cannot be parsed: {exc}") from None
    except (RecursionError, MemoryError):  # an expression nested a thousand deep: the grader's own stack
        raise IntakeError(f"{shown}: nested too deeply to be compiled") from None


def _check_declared_encoding(data: bytes, shown: str) -> None:
    """Refuse a coding declaration other than UTF-8's. Python reads the file's bytes as the
    declaration says, and the checks here read them as UTF-8: under ``# coding: utf-7`` a comment
    here (``+AAo-import ...``) is a new line of code there, an import the rule never saw (red team,
    round 14)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown encoding, or one that contradicts a byte-order mark
        raise IntakeError(f"{shown}: {exc}") from None
    if encoding not in SAME_AS_UTF8:
        raise IntakeError(f"{shown}: declares the encoding {encoding}; only UTF-8 is accepted (remove the "
                          "coding line, or make it utf-8)")


def _read_impl(impl: Path) -> bytes:
    if not impl.exists() and not impl.is_symlink():  # the path as given: a typo in a folder shows
        raise IntakeError(f"{impl}: not found")
    if impl.is_dir() and not impl.is_symlink():  # shown whole: its name alone read as a missing tests folder
        raise IntakeError(f"{impl}: a folder, where the implementation's file was expected (give the path of "
                          "the file itself)")
    data = _read_regular(impl, impl.name)
    if not _parse_python(data, impl.name).body:  # an empty file is no module to run (red team, round 17)
        raise IntakeError(f"{impl.name}: holds no code yet, nothing to grade (`grader start` writes a stub to "
                          "begin from)")
    return data


def _read_tests(folder: Path, chapter: Chapter, impl: Path) -> tuple[tuple[str, bytes], ...]:
    """The tests folder's files, checked. The implementation itself is left out when it lies in
    the folder: a project folder given as --tests beside its own luong.py had luong.py refused
    for importing tinyllm.nn, as if it were a test (red team, round 26)."""
    if folder.is_symlink() or not folder.is_dir():
        raise IntakeError(f"{folder}: the tests folder is missing or not a real folder")
    root = folder.resolve()
    contract = contract_names(chapter.contract)
    files: list[tuple[str, bytes]] = []
    for path in sorted(_walk(folder)):
        if path.resolve() == impl.resolve():
            continue
        rel = PurePosixPath(path.relative_to(folder).as_posix())
        if not path.resolve().is_relative_to(root):
            raise IntakeError(f"{rel}: path escapes the tests folder")
        if path.name in PYTEST_CONFIGS:
            raise IntakeError(f"{rel}: pytest configuration is not accepted: the grader runs pytest with its own "
                              "settings; register markers or set options in conftest.py (pytest_configure)")
        if path.suffix not in ALLOWED_SUFFIXES:
            raise IntakeError(f"{rel}: file type not accepted (allowed: {', '.join(sorted(ALLOWED_SUFFIXES))})")
        data = _read_regular(path, str(rel))
        if path.suffix == ".py":
            tree = _parse_python(data, str(rel))
            _check_imports(tree, str(rel), chapter.student.allowed_imports, chapter.student.instead_of)
            _check_no_star_import(tree, str(rel), chapter.student.module)
            _check_contract_names(tree, str(rel), chapter.student.module, contract)
        files.append((str(rel), data))
        if len(files) > MAX_TEST_FILES:
            raise IntakeError(f"more than {MAX_TEST_FILES} files in the tests folder")
    if not any(_is_test_file(PurePosixPath(name)) for name, _ in files):
        raise IntakeError(f"{folder}: no test file ({' or '.join(TEST_FILES)}) in the tests folder")
    return tuple(files)


def _walk(folder: Path):
    """Every file below ``folder``; a link anywhere is refused rather than followed, and so are
    folders nested deeper than MAX_DEPTH (a walk must end, whatever the submission holds)."""
    pending = [folder]
    while pending:
        for entry in _entries(pending.pop(), folder):
            if entry.name in IGNORED_NAMES or (entry.suffix.lower() in IGNORED_SUFFIXES and not entry.is_dir()):
                continue
            shown = entry.relative_to(folder)
            if not entry.name.isprintable():  # control characters, undecodable bytes, bidi controls
                raise IntakeError(f"{_escaped(str(shown))}: file and folder names must be printable UTF-8")
            if entry.is_symlink():
                raise IntakeError(f"{shown}: symbolic links are not accepted")
            if not entry.is_dir():
                yield entry
            elif len(shown.parts) >= MAX_DEPTH:
                raise IntakeError(f"{shown}: folders nested deeper than {MAX_DEPTH} levels are not accepted")
            else:
                pending.append(entry)


def _escaped(name: str) -> str:
    """``name`` with each unprintable character as its escape: the refusal is printed, and a
    name can hold an escape sequence for the reader's terminal."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in name)


def _entries(directory: Path, root: Path) -> list[Path]:
    try:
        return list(directory.iterdir())
    except OSError as exc:
        raise IntakeError(f"{directory.relative_to(root)}: cannot be listed ({exc.strerror or exc})") from None


def _imported_modules(tree: ast.Module):
    """(module name, line, as a refusal names it) for every import statement and every literal
    given to a dynamic import."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, repr(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node.lineno, repr(node.module)
            for alias in node.names:  # `from tinyllm.seq2seq import luong` imports a module too
                yield f"{node.module}.{alias.name}", node.lineno, f"{alias.name} from {node.module!r}"
        elif isinstance(node, ast.Call) and _called_name(node.func) in DYNAMIC_IMPORTS:
            for arg in node.args[:1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield arg.value, node.lineno, repr(arg.value)


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _check_imports(tree: ast.Module, shown: str, allowed: tuple[str, ...], instead_of: Mapping[str, str]) -> None:
    """The chapter's rule: tests import only contract modules of tinyllm; the chapter may say
    what to do instead of importing one of the others."""
    for module, line, named in _imported_modules(tree):
        if not (module == "tinyllm" or module.startswith("tinyllm.")):
            continue
        if module in allowed or _is_name_from_allowed(module, allowed) or _is_parent_of_allowed(module, allowed):
            continue
        advice = next((f"; {text}" for outside, text in instead_of.items()
                       if module == outside or module.startswith(outside + ".")), "")
        raise IntakeError(f"{shown}:{line}: imports {named}; tests may import only {', '.join(allowed)}{advice}")


def _check_no_star_import(tree: ast.Module, shown: str, graded: str) -> None:
    """``from <graded module> import *``: the tests are collected against a stand-in for the
    graded module (grader/runner/inside/loader.py), which cannot know the names a student's
    module defines, so each run's would not reach the tests."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == graded and any(a.name == "*" for a in node.names):
            raise IntakeError(f"{shown}:{node.lineno}: `from {graded} import *` is not supported by the grader; "
                              f"import the names you use by name (from {graded} import ...)")


def contract_names(contract: Path) -> dict[str, str | None]:
    """The names a contract (.pyi) binds at its top level: each with the module it imports the
    name from, or None for what the contract defines itself."""
    try:
        tree = ast.parse(contract.read_text(encoding="utf-8"), filename=str(contract))
    except (OSError, SyntaxError) as exc:
        raise IntakeError(f"cannot read the chapter's contract {contract}: {exc}") from exc
    names: dict[str, str | None] = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = None
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update((target.id, None) for target in targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update(((alias.asname or alias.name), node.module) for alias in node.names)
    return names


def _check_contract_names(tree: ast.Module, shown: str, graded: str, contract: Mapping[str, str | None]) -> None:
    """``from <graded module> import NAME`` for a NAME the contract does not define: the tests
    also run on the grader's correct implementations, which define only what the contract
    names, so such a suite could never be valid. It was reported, after a whole grade, as an
    error on every correct implementation under a test id that could not be shown (red team,
    round 26). So is ``luong.NAME`` where it runs at import time (a module-level ``HELPER =
    luong.helper``); inside a test, a correct implementation's run explains such a name itself."""
    defined = sorted(name for name, source in contract.items() if source is None)

    def refuse(node: ast.AST, name: str, what: str) -> None:
        source = contract.get(name)
        where = (f"import it from {source}" if source else
                 f"test a helper of your own through {' or '.join(defined)}, or look it up with hasattr "
                 "inside a test: the grader's correct implementations need not have it")
        raise IntakeError(f"{shown}:{node.lineno}: {what}, whose contract defines only {', '.join(defined)}; {where}")

    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == graded):
            continue
        for alias in node.names:
            if alias.name != "*" and alias.name not in defined:  # a star import is refused on its own
                refuse(node, alias.name, f"imports {alias.name} from {graded}")
    modules = {graded} | _names_bound_to(tree, graded)
    for node in _run_at_import(tree):
        if isinstance(node, ast.Attribute) and _dotted(node.value) in modules and node.attr not in defined \
                and not (node.attr.startswith("__") and node.attr.endswith("__")):  # every module has those
            refuse(node, node.attr, f"uses {_dotted(node)} at import time")


def _names_bound_to(tree: ast.Module, module: str) -> set[str]:
    """The names a file binds ``module`` to: ``import a.b.luong as L``, ``from a.b import luong``."""
    package, _, last = module.rpartition(".")
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.asname for alias in node.names if alias.name == module and alias.asname}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == package:
            names |= {alias.asname or alias.name for alias in node.names if alias.name == last}
    return names


def _run_at_import(tree: ast.Module) -> Iterator[ast.AST]:
    """The nodes of a file that run when it is imported: all but the bodies of functions (their
    decorators and defaults run) and lambdas."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending += [*node.decorator_list, *node.args.defaults, *filter(None, node.args.kw_defaults)]
        elif isinstance(node, ast.Lambda):
            pending += [*node.args.defaults, *filter(None, node.args.kw_defaults)]
        else:
            pending += ast.iter_child_nodes(node)


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes of a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)) is not None:
        return f"{base}.{node.attr}"
    return None


def _is_name_from_allowed(module: str, allowed: tuple[str, ...]) -> bool:
    """`from tinyllm.autograd.tensor import Tensor` yields 'tinyllm.autograd.tensor.Tensor'."""
    return module.rpartition(".")[0] in allowed


def _is_parent_of_allowed(module: str, allowed: tuple[str, ...]) -> bool:
    """`from tinyllm.seq2seq import luong` names the package 'tinyllm.seq2seq' on its way to luong."""
    return any(a.startswith(module + ".") for a in allowed)
