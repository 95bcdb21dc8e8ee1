"""Asserts nothing, and stalls instead. In the fast zygote (where this conftest is imported) the
first few mutants' runs sleep until the zygote kills them: timeouts. Run alone (collected in the
run's own child), every run passes, a little slower than half the fast pass's timeout. A timeout
that passes slowly alone once counted as a kill ("clocks are not behaviour"), so a suite that
stalled every mutant passed the bar with nothing tested."""

import builtins
import os
import sys
import time

import pytest

STALLED_RUNS = 5  # mutants stalled, after the first run (the reference)
CONFTEST_PID = os.getpid()
SEEN = builtins.__dict__.setdefault("_runs_seen", [])

for name, module in list(sys.modules.items()):
    zygote = getattr(module, "Zygote", None)
    if name.endswith(".server") and zygote is not None:
        def counting_start(self, request, buffer, original=zygote._start):
            if request.get("kind") == "suite":
                SEEN.append(request["run"])
            return original(self, request, buffer)

        zygote._start = counting_start


@pytest.fixture(autouse=True, scope="session")
def stall():
    if os.getpid() == CONFTEST_PID:  # a run alone: collected in this very process
        time.sleep(0.3)
    elif 2 <= len(SEEN) <= 1 + STALLED_RUNS:
        time.sleep(1000)
    yield
