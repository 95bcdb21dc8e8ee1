"""Per-run overhead of the warm runner vs the in-process time of the tests, and mutants/second.

Workload: the instructor's oracle suite over the pitfall mutants, then over the frozen pool
(mutants/L4.3/pool.json) or, before the pool is frozen, over every generated candidate.
Prints numbers only; asserts nothing.

    .venv/bin/python bench/runner_overhead.py [--backend bwrap] [--workers 2]
"""

from __future__ import annotations

import argparse
import statistics
import time
import tomllib

from grader.chapter import Chapter, load_chapter
from grader.patches import apply_patch
from grader.runner.driver import WarmRunner, timeout_from_reference
from grader.runner.results import SuiteRun
from grader.sandbox import get_backend


def pitfall_mutants(chapter: Chapter, reference: str) -> dict[str, bytes]:
    manifest = tomllib.loads(chapter.pitfalls.read_text())
    return {m["id"]: apply_patch(reference, (chapter.pitfalls.parent / m["patch"]).read_text()).encode()
            for m in manifest["mutants"]}


def pool_mutants(chapter: Chapter, reference: str) -> tuple[str, dict[str, bytes]]:
    from grader import pool

    if chapter.pool.exists():
        frozen = pool.load_pool(chapter.manifest)
        return f"pool {frozen.version}", {m.id: apply_patch(reference, frozen.patches[m.id]).encode()
                                          for m in frozen.mutants}
    return "generated candidates (no frozen pool yet)", {c.id: c.source.encode() for c in pool.generate(reference)}


def report(label: str, runs: dict[str, SuiteRun], wall: float) -> None:
    per_run = list(runs.values())
    overhead = [run.seconds - run.test_seconds for run in per_run]
    tests = [run.test_seconds for run in per_run]
    installs = [run.install_seconds for run in per_run if run.install_seconds is not None]
    killed = sum(run.killed for run in per_run)
    print(f"{label}: {len(per_run)} runs, {killed} killed, {wall:.2f} s wall, {len(per_run) / wall:.1f} mutants/s")
    print(f"  per run (median): child wall {statistics.median(r.seconds for r in per_run) * 1e3:.1f} ms = "
          f"tests {statistics.median(tests) * 1e3:.1f} ms + overhead {statistics.median(overhead) * 1e3:.1f} ms "
          f"(of which module install+swap {statistics.median(installs) * 1e3:.1f} ms)" if installs else "")
    print(f"  overhead / test time: {sum(overhead) / max(sum(tests), 1e-9):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="bwrap")
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    chapter = load_chapter()
    reference = chapter.reference_impl.read_text()
    started = time.monotonic()
    with WarmRunner(chapter=chapter, backend=get_backend(options.backend), student_tests=chapter.oracle_suite,
                    workers=options.workers, seed=1) as runner:
        print(f"zygote ready in {time.monotonic() - started:.2f} s; {len(runner.collected)} tests collected; "
              f"landlock ABI {runner.landlock_abi}; workers {runner.workers}")
        first = runner.suite_runs([("reference", reference.encode())], timeout=60.0)["reference"]
        timeout = timeout_from_reference(first.seconds)
        print(f"reference: {first.outcome.value}, {first.seconds * 1e3:.1f} ms -> per-run timeout {timeout:.2f} s")
        for label, mutants in (("pitfalls", pitfall_mutants(chapter, reference)),
                               pool_mutants(chapter, reference)):
            began = time.monotonic()
            runs = runner.suite_runs(list(mutants.items()), timeout=timeout)
            report(label, runs, time.monotonic() - began)


if __name__ == "__main__":
    main()
