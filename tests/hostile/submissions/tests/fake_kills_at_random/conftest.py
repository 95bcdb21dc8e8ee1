"""Kills faked at random in the fast pass, beyond an honest suite's (test_honest_part: every
pitfall, 0.77 of the pool). The fast zygote imports this file before it forks a child per run,
so a test's pid differs from the one recorded here there, and equals it in a run alone, which
collects the suite itself; the pid's growth numbers the run. The reference's first run (1) and
the tail (the reference run again last) are never failed; any other run is, with probability
FAKE_P, whatever module it holds. The runs alone check only a sample of the fast pass's kills:
with variant 1 the only correct implementation among the mutants, such a gamble passed 3 grades
of 10 (red team, round 22); every decoy runs there too now."""

import os

import pytest

BASE_PID = os.getpid()
FAKE_P = 0.4
FIRST_RUN, LAST_SAFE = 1, 220


@pytest.fixture
def faked_kill() -> bool:
    run = os.getpid() - BASE_PID
    if run == 0 or run <= FIRST_RUN or run > LAST_SAFE:  # a run alone, the reference, the tail
        return False
    return int.from_bytes(os.urandom(4), "little") / 2**32 < FAKE_P  # fork leaves `random` unseeded
