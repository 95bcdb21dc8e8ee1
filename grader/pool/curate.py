"""Curation: run both suites on every candidate, keep the killed, drop the rest with a reason, freeze."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from xml.etree import ElementTree

from grader.chapter import Chapter
from grader.pool.generate import Candidate, generate
from grader.pool.store import (
    BOTH,
    COURSE,
    GENERATOR,
    HAND_REASONS,
    MESSAGE_ONLY,
    ORACLE,
    PATCH_LABEL,
    TIMED_OUT,
    TIMEOUT_FACTOR,
    TIMEOUT_FLOOR_S,
    PoolError,
    PoolMutant,
    pool_version,
    sha256_text,
)

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
            done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=timeout,
                                  cwd=scratch)  # failing tests are results: the report says which
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
        found = self.outcomes.get(sha256_text(source))
        return None if found is None else tuple(found)

    def put(self, source: str, killed_by: tuple[str, ...]) -> tuple[str, ...]:
        self.outcomes[sha256_text(source)] = list(killed_by)
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
        "reference_sha256": sha256_text(reference),
        "version": pool_version({c.id: c.patch for c, _ in kept}),
        "size": len(mutants),
        "mutants": [asdict(m) for m in mutants],
    }
    _write_json(chapter.pool, manifest)
    _write_json(chapter.dropped, dropped)


