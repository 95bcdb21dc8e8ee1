"""Operational settings, from the environment (GRADER_*), in one place.

Built by `Settings.from_env()` where a command starts, never at import time, so tests and the
service can build their own. Chapter data (paths, threshold, pitfalls) is not here: it lives in
the chapter manifest.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

from grader.runner.driver import FIRST_RUN_SECONDS
from grader.sandbox import Limits

PREFIX = "GRADER_"


class SettingsError(ValueError):
    """An environment variable holds a value the grader cannot use."""


@dataclass(frozen=True)
class Settings:
    workers: int = 2  # children at once in the fast (mutation) sandbox; the clean one runs one at a time
    wall_seconds: float = 300.0  # a whole grade's sandbox, wall clock
    cpu_seconds: int = 120  # CPU time of any one process in the sandbox
    memory_bytes: int = 1 << 30  # the sandbox's memory
    processes: int = 32  # the sandbox's processes and threads
    course_timeout: float = 10.0  # one attempt at the course tests (the reference needs ~0.3 s)
    course_budget: float = 30.0  # every attempt together: a hanging test is skipped and the rest rerun
    # The trusted probes' run of the implementation: the reference needs ~0.5 s, a module that loops in
    # Python over rows, tokens and widths ~20 s (red team, rounds 17 and 18)
    probe_timeout: float = 60.0
    alone_sample: int = 12  # pool mutants (beside every pitfall) whose fast-pass kill is checked by a run alone
    # One run alone, collection included: as long as the fast pass lets the reference's first run
    # take, and 5 s to collect, or a suite that pass accepts would time out alone, and be invalid.
    alone_timeout: float = FIRST_RUN_SECONDS + 5.0
    settle_limit: int = 8  # fast-pass timeouts run alone after the pass (drawn at random); the rest survive
    recheck_sample: int = 6  # fast-pass kills run alone again after the pass, drawn then, at least
    recheck_limit: int = 60  # and at most, for a suite a few kills above the bar (scoring.kills_to_recheck)
    recheck_miss_odds: float = 0.05  # the odds that those runs miss a suite's fakes when they buy its pass
    decoys: int = 2  # the chapter's decoys (correct, one edit from the reference) run alone, drawn per grade

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        """Defaults, overridden by GRADER_<FIELD> variables (e.g. GRADER_WALL_SECONDS=60)."""
        values = {}
        for spec in fields(cls):
            raw = environ.get(PREFIX + spec.name.upper())
            if raw is None:
                continue
            kind = int if spec.type in ("int", int) else float
            described = "whole number" if kind is int else "number"
            try:
                value = kind(raw)
            except ValueError:
                raise SettingsError(f"{PREFIX}{spec.name.upper()}={raw!r} is not a {described}") from None
            if value <= 0:
                raise SettingsError(f"{PREFIX}{spec.name.upper()} must be positive, got {raw!r}")
            values[spec.name] = value
        return cls(**values)

    def limits(self) -> Limits:
        return Limits(memory_bytes=self.memory_bytes, cpu_seconds=self.cpu_seconds,
                      wall_seconds=self.wall_seconds, processes=self.processes)
