"""The generated mutant pool: build it with mutmut's operators, curate it, freeze it, verify it.

Phases of ``build`` (an instructor/maintainer tool, run when the reference changes):

1. generate: mutmut 3.8.1's own node operators, used as a library, enumerate every mutant of the
   reference ``luong.py``. mutmut would merge them behind trampolines; here each one becomes a
   full-file variant (the module with exactly one mutation) frozen as a unified diff. mutmut reads
   its configuration from the working directory and writes a ``mutants/`` folder of its own, so it
   runs in a private temporary directory, never in the repository.
2. sanity: the reference must pass the course tests and the oracle suite, which also times them.
3. curate: each candidate runs both suites in its own subprocess (fresh module state), with a
   timeout derived from the reference's time; a timeout counts as killed.
4. classify survivors: a change inside a ``raise``'s arguments is "message-only"; any other
   survivor needs a hand-written reason, carried over by id from the previous ``dropped.json``
   (edit that file to classify a new survivor). Unclassified survivors stop the build.
5. freeze: ``pool/<id>.patch``, ``pool.json`` (with a content-hash version) and ``dropped.json``.

Ids hash the enclosing function, the operator and the changed text, never a position, so they
survive edits elsewhere in the reference. ``verify`` is what the grader calls before grading.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import typer

# mutmut and libcst are development requirements: only the generator imports them, inside its
# functions, so the grader can load and verify a frozen pool without them.
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
class Candidate:
    """One generated mutant before curation."""

    id: str
    function: str  # Class.method or function enclosing the mutation
    mutmut_name: str  # what mutmut itself calls it, e.g. xǁLuongAttentionǁscores__mutmut_3
    operator: str  # the mutmut operator that made it, e.g. operator_swap_op
    line: int  # 1-based, first changed line of the reference
    column: int  # 1-based, first changed character on that line
    original: str  # the changed reference lines, stripped
    replacement: str  # the lines that replace them, stripped
    message_only: bool  # the change only reaches the text of an error message
    source: str  # the full mutated module
    patch: str


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


# -- generation (mutmut as a library) -------------------------------------------------------------


def _diff(reference: str, mutated: str) -> str:
    return "".join(
        difflib.unified_diff(
            reference.splitlines(keepends=True),
            mutated.splitlines(keepends=True),
            fromfile=f"a/{PATCH_LABEL}",
            tofile=f"b/{PATCH_LABEL}",
        )
    )


def _changed_region(reference: str, mutated: str) -> tuple[int, int, str, str]:
    """(line, column, original lines, replacement lines) of the one changed region, 1-based."""
    old, new = reference.splitlines(), mutated.splitlines()
    first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    room = min(len(old), len(new)) - first
    tail = next((k for k in range(room) if old[-1 - k] != new[-1 - k]), room)
    old_part, new_part = old[first : len(old) - tail], new[first : len(new) - tail]
    if old_part and new_part:
        pairs = zip(old_part[0], new_part[0])
        column = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(old_part[0]), len(new_part[0])))
    else:  # whole lines added or removed
        column = 0
    return first + 1, column + 1, "\n".join(s.strip() for s in old_part), "\n".join(s.strip() for s in new_part)


def _stable_id(function: str, operator: str, original: str, replacement: str) -> str:
    key = "\x00".join((function, operator, original, replacement))
    return "g" + hashlib.sha256(key.encode()).hexdigest()[:8]


def _enumerate_mutations(code: str):
    """mutmut's mutations of ``code``, each with its operator's name and enclosing function.

    Mirrors ``mutmut.mutation.file_mutation.create_mutations`` but wraps each operator to record
    its name, which mutmut does not keep. Only mutations inside a function or method count:
    mutmut's trampolines skip the rest (class attributes, module statements).
    """
    import libcst as cst
    from mutmut.configuration import reset_config
    from mutmut.mutation.file_mutation import MutationVisitor
    from mutmut.mutation.mutators import mutation_operators
    from mutmut.mutation.pragma_handling import get_ignored_lines
    from mutmut.utils.file_utils import change_cwd

    made_by: dict[int, str] = {}

    def tagged(operator):
        def run(node):
            for mutated in operator(node):
                made_by[id(mutated)] = operator.__name__
                yield mutated

        return run

    with tempfile.TemporaryDirectory(prefix="mutmut-") as workdir, change_cwd(workdir):
        Path(workdir, "setup.cfg").write_text(f"[mutmut]\nsource_paths={PATCH_LABEL}\n", encoding="utf-8")
        Path(workdir, PATCH_LABEL).write_text(code, encoding="utf-8")
        reset_config()  # mutmut caches the configuration of whichever directory it first saw
        try:
            wrapper = cst.MetadataWrapper(cst.parse_module(code))
            ignored = get_ignored_lines(PATCH_LABEL, code, wrapper)
            visitor = MutationVisitor([(t, tagged(op)) for t, op in mutation_operators], ignored)
            module = wrapper.visit(visitor)
        finally:
            reset_config()
    owners = _function_names(module)
    messages = _MessageFlow(module)
    for mutation in visitor.mutations:
        owner = mutation.contained_by_top_level_function
        if isinstance(owner, cst.FunctionDef):
            yield module, mutation, made_by[id(mutation.mutated_node)], owners[owner], messages.is_message_only(mutation.original_node, mutation.mutated_node)


def _function_names(module) -> dict:
    """Each top-level function or method node -> (display name, mutmut's mangled name)."""
    import libcst as cst
    from mutmut.mutation.trampoline_templates import mangle_function_name

    names = {}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            names[statement] = (statement.name.value, mangle_function_name(name=statement.name.value, class_name=None))
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for method in statement.body.body:
                if isinstance(method, cst.FunctionDef):
                    cls, name = statement.name.value, method.name.value
                    names[method] = (f"{cls}.{name}", mangle_function_name(name=name, class_name=cls))
    return names


def _descendants(node) -> set[int]:
    found, stack = set(), [node]
    while stack:
        current = stack.pop()
        found.add(id(current))
        stack.extend(current.children)
    return found


class _MessageFlow:
    """Which code only feeds the text of an error message, found by a small dataflow pass.

    Message code is: the arguments of ``raise SomeError(...)``; a local assigned only to be used
    there (``got = ...``); a parameter of a module function used only there, and the arguments
    passed to it (``_check_tensor("query", ...)``). A mutant confined to message code that no test
    kills changes what an error says, not whether or which error is raised. (Only survivors are
    classified, so message code that could itself raise is still put to the tests.)
    """

    def __init__(self, module) -> None:
        import libcst as cst

        self.nodes: set[int] = set()
        functions = [s for s in module.body if isinstance(s, cst.FunctionDef)]
        for cls in (s for s in module.body if isinstance(s, cst.ClassDef) and isinstance(s.body, cst.IndentedBlock)):
            functions += [m for m in cls.body.body if isinstance(m, cst.FunctionDef)]
        for raise_node in _all(module, cst.Raise):
            if isinstance(raise_node.exc, cst.Call):
                self.nodes |= _descendants(raise_node.exc)
        self.params: dict[str, dict] = {}  # function -> {message parameter: position}
        for function in functions:
            for assign in _all(function, cst.Assign):
                target = assign.targets[0].target
                if len(assign.targets) == 1 and isinstance(target, cst.Name) and self._only_in_message(function, target.value, assign):
                    self.nodes |= _descendants(assign)
        for function in (f for f in functions if f in module.body):
            names = [p.name.value for p in function.params.params]
            self.params[function.name.value] = {n: i for i, n in enumerate(names) if self._only_in_message(function, n)}
        for call in _all(module, cst.Call):
            for _, arg in self._message_args(call):
                self.nodes |= _descendants(arg.value)

    def _only_in_message(self, function, name: str, defined_by=None) -> bool:
        import libcst as cst

        skip = _descendants(defined_by.targets[0]) if defined_by is not None else set()
        for comprehension in _all(function.body, (cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp)):
            if any(n.value == name for n in _all(comprehension.for_in.target, cst.Name)):
                skip |= _descendants(comprehension)  # its own scope: the name means something else
        uses = [n for n in _all(function.body, cst.Name) if n.value == name and id(n) not in skip]
        return bool(uses) and all(id(n) in self.nodes for n in uses)

    def _message_args(self, call):
        import libcst as cst

        wanted = self.params.get(call.func.value, {}) if isinstance(call.func, cst.Name) else {}
        for index, arg in enumerate(call.args):
            if (arg.keyword.value if arg.keyword else None) in wanted or (not arg.keyword and index in wanted.values()):
                yield index, arg

    def is_message_only(self, original, mutated) -> bool:
        import libcst as cst

        if id(original) in self.nodes:
            return True
        if not (isinstance(original, cst.Call) and isinstance(mutated, cst.Call) and len(original.args) == len(mutated.args)):
            return False
        changed = {i for i, (a, b) in enumerate(zip(original.args, mutated.args)) if not a.deep_equals(b)}
        return bool(changed) and changed <= {i for i, _ in self._message_args(original)}


def _all(node, kind) -> list:
    import libcst as cst

    found = []

    class Collector(cst.CSTVisitor):
        def on_visit(self, current) -> bool:
            if isinstance(current, kind):
                found.append(current)
            return True

    node.visit(Collector())
    return found


def _with_statement_replaced(module, old, new):
    """``module`` with one top-level function or method swapped, sharing every other node.

    Replacing inside the function alone and rebuilding only its parents is what keeps
    enumerating hundreds of mutants fast; a deep replace over the whole module is not.
    """
    import libcst as cst

    def swap(statements):
        return [new if statement is old else statement for statement in statements]

    body = []  # classes with a one-line body hold no methods: mutmut never mutates them
    for statement in module.body:
        inner = statement.body.body if isinstance(statement, cst.ClassDef) else ()
        if any(method is old for method in inner):
            statement = statement.with_changes(body=statement.body.with_changes(body=swap(statement.body.body)))
        body.append(statement)
    return module.with_changes(body=swap(body))


def generate(reference: str) -> list[Candidate]:
    """Every single-mutation variant of ``reference``, with stable ids (suffixed on collisions)."""
    from mutmut.mutation.file_mutation import deep_replace

    candidates: list[Candidate] = []
    seen: Counter = Counter()
    per_function: Counter = Counter()
    for module, mutation, operator, (function, mangled), message_only in _enumerate_mutations(reference):
        per_function[mangled] += 1
        owner = mutation.contained_by_top_level_function
        mutated_owner = deep_replace(owner, mutation.original_node, mutation.mutated_node)
        source = _with_statement_replaced(module, owner, mutated_owner).code
        line, column, original, replacement = _changed_region(reference, source)
        base = _stable_id(function, operator, original, replacement)
        seen[base] += 1
        mutant_id = base if seen[base] == 1 else f"{base}-{seen[base]}"
        candidates.append(
            Candidate(
                id=mutant_id,
                function=function,
                mutmut_name=f"{mangled}__mutmut_{per_function[mangled]}",
                operator=operator,
                line=line,
                column=column,
                original=original,
                replacement=replacement,
                message_only=message_only,
                source=source,
                patch=_diff(reference, source),
            )
        )
    return candidates


# -- running the suites ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteRun:
    """What one pytest run of the suites did to one module."""

    passed: tuple[str, ...]  # test names, ``file::test[param]``
    failed: tuple[str, ...]  # failed or errored tests
    broken: str | None  # why the run produced no report (the module did not import, a timeout)

    @property
    def killed_by(self) -> tuple[str, ...]:
        return self.failed or ((self.broken,) if self.broken else ())


def _read_report(report: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    passed: list[str] = []
    failed: list[str] = []
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        bad = case.find("failure") is not None or case.find("error") is not None
        (failed if bad else passed).append(name)
    return tuple(sorted(passed)), tuple(sorted(failed))


def run_suites(chapter: Chapter, source: str, *, suites: str = BOTH, timeout: float | None = None) -> SuiteRun:
    """Run the course tests and the oracle suite (or one of them: ``suites``) on ``source``.

    A subprocess per run keeps every mutant's module state apart. The course tests' conftest
    installs ``--luong FILE`` for the session, which is how the oracle suite gets it too; for the
    oracle alone the course folder is still passed (for its conftest) but its test files ignored.
    """
    with tempfile.TemporaryDirectory(prefix="pool-run-") as scratch:
        module = Path(scratch, PATCH_LABEL)
        module.write_text(source, encoding="utf-8")
        report = Path(scratch, "report.xml")
        folders = [str(chapter.course_tests)] + ([str(chapter.oracle_suite)] if suites != COURSE else [])
        if suites == ORACLE:
            folders += [f"--ignore={path}" for path in sorted(chapter.course_tests.glob("test_*.py"))]
        command = [
            sys.executable, "-m", "pytest", *folders,
            "--luong", str(module), "-p", "no:cacheprovider", "-q", "--no-header",
            f"--junitxml={report}", "-o", "junit_family=xunit1",
        ]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=scratch)
        except subprocess.TimeoutExpired:
            return SuiteRun((), (), TIMED_OUT)
        if not report.is_file():
            last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
            return SuiteRun((), (), f"pytest exit {done.returncode}: {last}")
        return SuiteRun(*_read_report(report), None)


# -- curation -------------------------------------------------------------------------------------


def _hand_table(dropped_path: Path) -> dict[str, dict]:
    """Hand-written drop reasons from the previous dropped.json, by id."""
    if not dropped_path.is_file():
        return {}
    entries = json.loads(dropped_path.read_text(encoding="utf-8"))
    return {e["id"]: e for e in entries if e.get("classified_by") == "hand" and e["reason"] in HAND_REASONS}


def _drop_entry(candidate: Candidate, hand: dict[str, dict]) -> dict:
    change = {"line": candidate.line, "original": candidate.original, "replacement": candidate.replacement}
    if candidate.id in hand:
        entry = hand[candidate.id]
        return {"id": candidate.id, "reason": entry["reason"], "detail": entry["detail"], "classified_by": "hand", **change}
    if candidate.message_only:
        detail = "changes only what flows into an error message, not whether or which error is raised"
        return {"id": candidate.id, "reason": MESSAGE_ONLY, "detail": detail, "classified_by": "auto", **change}
    return {"id": candidate.id, "reason": "unclassified", "detail": "", "classified_by": "none", **change}


def pool_version(patches: dict[str, str]) -> str:
    """A content hash over the kept patches, in id order: same patches, same version."""
    digest = hashlib.sha256()
    for mutant_id in sorted(patches):
        digest.update(f"{mutant_id}\n{patches[mutant_id]}\x00".encode())
    return digest.hexdigest()[:16]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build(chapter: Chapter, *, cache_path: Path | None = None, echo=print) -> dict[str, int]:
    """Generate, curate and freeze the pool of ``chapter``; returns counts for the summary.

    ``cache_path`` keeps each mutant's outcome across builds (keyed by the mutant's source and
    ``_inputs_digest``), so classifying a new survivor by hand does not rerun every mutant.
    """
    reference = chapter.reference_impl.read_text(encoding="utf-8")
    candidates = generate(reference)
    echo(f"generated {len(candidates)} mutants with {GENERATOR}")
    started = time.perf_counter()
    sanity = run_suites(chapter, reference)
    if sanity.killed_by or not sanity.passed:
        raise PoolError(f"the reference fails its own tests: {', '.join(sanity.killed_by) or 'no tests ran'}")
    timeout = max(TIMEOUT_FLOOR_S, TIMEOUT_FACTOR * (time.perf_counter() - started))
    echo(f"reference passes {len(sanity.passed)} tests; timeout per mutant {timeout:.1f} s")
    hand = _hand_table(chapter.dropped)
    cache = _RunCache(cache_path, _inputs_digest(chapter))
    kept, dropped = [], []
    for number, candidate in enumerate(candidates, start=1):
        killed_by = cache.get(candidate.source)
        if killed_by is None:
            killed_by = cache.put(candidate.source, run_suites(chapter, candidate.source, timeout=timeout).killed_by)
        echo(f"[{number}/{len(candidates)}] {candidate.id} {candidate.function}:{candidate.line} "
             f"{'killed' if killed_by else 'survived'}")  # fmt: skip
        if killed_by:
            kept.append((candidate, killed_by))
        else:
            dropped.append(_drop_entry(candidate, hand))
    unclassified = [e for e in dropped if e["reason"] == "unclassified"]
    if unclassified:
        _write_json(chapter.dropped, dropped)
        listing = "\n".join(f"  {e['id']} line {e['line']}: {e['original']!r} -> {e['replacement']!r}" for e in unclassified)
        raise PoolError(
            f"{len(unclassified)} survivors need a reason: in {chapter.dropped} set each one's reason "
            f"(one of {', '.join(HAND_REASONS)}), a detail saying why, and classified_by = \"hand\", "
            f"then build again (with --cache, only new mutants rerun):\n{listing}"
        )
    _freeze(chapter, reference, kept, dropped)
    counts = Counter(e["reason"] for e in dropped)
    return {"generated": len(candidates), "kept": len(kept), **counts}


def _inputs_digest(chapter: Chapter) -> str:
    """A hash of everything besides the mutant that decides a run: both suites, the golden
    fixture the course tests read, and the substrate the module runs on."""
    digest = hashlib.sha256()
    files = [p for folder in (chapter.course_tests, chapter.oracle_suite, chapter.substrate) for p in sorted(folder.rglob("*.py"))]
    for path in [*files, chapter.golden]:
        digest.update(str(path.relative_to(chapter.manifest.parent.parent)).encode() + b"\x00" + path.read_bytes())
    return digest.hexdigest()


class _RunCache:
    """Outcomes of earlier runs, valid only while their other inputs are unchanged (optional file)."""

    def __init__(self, path: Path | None, inputs: str) -> None:
        self.path, self.inputs = path, inputs
        stored = json.loads(path.read_text(encoding="utf-8")) if path and path.is_file() else {}
        self.outcomes = stored.get("outcomes", {}) if stored.get("inputs") == inputs else {}

    def get(self, source: str) -> tuple[str, ...] | None:
        found = self.outcomes.get(_sha256(source))
        return None if found is None else tuple(found)

    def put(self, source: str, killed_by: tuple[str, ...]) -> tuple[str, ...]:
        self.outcomes[_sha256(source)] = list(killed_by)
        if self.path:
            _write_json(self.path, {"inputs": self.inputs, "outcomes": self.outcomes})
        return killed_by


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _freeze(chapter: Chapter, reference: str, kept, dropped) -> None:
    pool_dir = chapter.pool.parent / chapter.pool.stem
    pool_dir.mkdir(parents=True, exist_ok=True)
    for stale in pool_dir.glob("*.patch"):
        stale.unlink()
    mutants = []
    for candidate, killed_by in kept:
        (pool_dir / f"{candidate.id}.patch").write_text(candidate.patch, encoding="utf-8")
        mutants.append(
            PoolMutant(
                id=candidate.id,
                patch=f"{pool_dir.name}/{candidate.id}.patch",
                function=candidate.function,
                mutmut_name=candidate.mutmut_name,
                operator=candidate.operator,
                line=candidate.line,
                column=candidate.column,
                original=candidate.original,
                replacement=candidate.replacement,
                killed_by=killed_by,
            )
        )
    manifest = {
        "chapter": chapter.id,
        "generator": GENERATOR,
        "reference_sha256": _sha256(reference),
        "version": pool_version({c.id: c.patch for c, _ in kept}),
        "size": len(mutants),
        "mutants": [asdict(m) for m in mutants],
    }
    _write_json(chapter.pool, manifest)
    _write_json(chapter.dropped, dropped)


# -- loading and verifying ------------------------------------------------------------------------


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


def verify_pool(pool: Pool, reference: str) -> list[str]:
    """Every problem that makes ``pool`` unsafe to grade with against ``reference``; [] if none."""
    problems = []
    if _sha256(reference) != pool.reference_sha256:
        problems.append("the reference changed since the pool was built: rebuild it")
    if pool_version(pool.patches) != pool.version:
        problems.append(f"version {pool.version} does not match the patches ({pool_version(pool.patches)})")
    ids = [m.id for m in pool.mutants]
    if len(set(ids)) != len(ids):
        problems.append("duplicate mutant ids")
    for mutant_id, patch in pool.patches.items():
        try:
            if apply_patch(reference, patch) == reference:
                problems.append(f"{mutant_id}: the patch changes nothing")
        except PatchError as exc:
            problems.append(f"{mutant_id}: {exc}")
    return problems


# -- command line ---------------------------------------------------------------------------------

app = typer.Typer(help="Build and verify a chapter's generated mutant pool.", no_args_is_help=True)


@app.command("build")
def build_command(
    chapter: str = typer.Option("L4.3", help="chapter id (chapters/<id>.toml)"),
    cache: Path = typer.Option(None, help="a JSON file that keeps mutant outcomes between builds"),
) -> None:
    """Generate every mutmut mutant of the reference, curate it against both suites, freeze it."""
    try:
        counts = build(load_chapter(chapter), cache_path=cache, echo=typer.echo)
    except PoolError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(" ".join(f"{key}={value}" for key, value in counts.items()))


@app.command("verify")
def verify_command(chapter: str = typer.Option("L4.3", help="chapter id (chapters/<id>.toml)")) -> None:
    """Check that every frozen patch applies to the current reference and the version matches."""
    loaded = load_chapter(chapter)
    try:
        pool = load_pool(loaded.manifest)
    except PoolError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    problems = verify_pool(pool, loaded.reference_impl.read_text(encoding="utf-8"))
    for problem in problems:
        typer.echo(f"error: {problem}", err=True)
    if problems:
        raise typer.Exit(1)
    typer.echo(f"pool {pool.version}: {len(pool.mutants)} mutants apply to the reference")


if __name__ == "__main__":
    app()
