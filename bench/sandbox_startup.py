"""Print the per-spawn start-up cost of each sandbox backend (a benchmark: prints, never asserts).

    .venv/bin/python bench/sandbox_startup.py [--spawns 10] [bwrap docker]

Each spawn runs a trivial python (``pass``) to its exit; the figure is spawn to ExitInfo.
"""

from __future__ import annotations

import argparse
import statistics
import time

from grader.sandbox import BACKEND_NAMES, Limits, SandboxUnavailable, get_backend


def spawn_seconds(name: str, spawns: int) -> list[float]:
    backend = get_backend(name)
    backend.check()
    seconds = []
    for _ in range(spawns):
        started = time.perf_counter()
        with backend.spawn([backend.python, "-c", "pass"], mounts=(), limits=Limits()) as process:
            process.stdin.close()
            process.wait()
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backends", nargs="*", default=list(BACKEND_NAMES))
    parser.add_argument("--spawns", type=int, default=10)
    args = parser.parse_args()
    for name in args.backends:
        try:
            seconds = spawn_seconds(name, args.spawns)
        except SandboxUnavailable as error:
            print(f"{name:>6}: unavailable ({error})")
            continue
        print(f"{name:>6}: median {statistics.median(seconds) * 1000:.0f} ms, "
              f"min {min(seconds) * 1000:.0f} ms, max {max(seconds) * 1000:.0f} ms over {len(seconds)} spawns")


if __name__ == "__main__":
    main()
