"""The pipes of the runs after the fast pass, held from before it (grader/runner/inside/pipes.py)."""

from __future__ import annotations

import os
import resource
from types import SimpleNamespace

import pytest

from grader.grading import _check_held_runs, runs_after_the_pass_at_most
from grader.mutants import load_catalogue
from grader.runner.driver import MAX_HELD_RUNS
from grader.runner.inside.pipes import PipeSource
from grader.runner.inside.protocol import ProtocolError
from grader.settings import Settings, SettingsError


def _close(pipes) -> None:
    for fd in pipes:
        os.close(fd)


def test_once_held_the_runs_get_the_held_pipes_in_order_and_no_others(tmp_path) -> None:
    source = PipeSource(tmp_path)
    before = source.take()  # made for the run that asks
    source.hold(2)
    held = [source.take(), source.take()]
    assert len({fd for pipes in [before, *held] for fd in pipes}) == 12
    assert [os.fstat(pipes.record_r).st_ino for pipes in held] == sorted(os.fstat(p.record_r).st_ino for p in held)
    with pytest.raises(ProtocolError, match="held too few"):
        source.take()
    with pytest.raises(ProtocolError, match="held already"):
        source.hold(1)
    assert list(tmp_path.iterdir()) == []  # each FIFO is unlinked once both its ends are open
    for pipes in [before, *held]:
        _close(pipes)


def test_pipes_beyond_the_limit_of_open_files_say_so(tmp_path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowest_free = os.dup(0)
    os.close(lowest_free)
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowest_free + 20, hard))  # room for 20 fds at most
    try:
        with pytest.raises(ProtocolError, match=r"the pipes of 50 runs \(200 fds\) do not fit .* limit of"):
            PipeSource(tmp_path).hold(50)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_recheck_of_every_mutant_fits(chapter) -> None:
    """GRADER_RECHECK_LIMIT may ask for every kill to be rechecked (tests/hostile sets it so): the
    runs after the pass are at most the pool's mutants, and the sandbox holds the pipes of them all."""
    catalogue = load_catalogue(chapter)
    everything = runs_after_the_pass_at_most(catalogue, Settings(recheck_limit=1000))
    assert everything == 1 + len(catalogue.variants) + len(catalogue.mutants) <= MAX_HELD_RUNS


def test_more_runs_after_the_pass_than_the_sandbox_can_hold_is_an_error_before_anything_runs() -> None:
    catalogue = SimpleNamespace(reference=b"reference", variants=(b"variant",), mutants=[object()] * MAX_HELD_RUNS)
    with pytest.raises(SettingsError, match="GRADER_SETTLE_LIMIT \\+ GRADER_RECHECK_LIMIT is 1008, over the"):
        _check_held_runs(catalogue, Settings(recheck_limit=1000))
    _check_held_runs(catalogue, Settings())  # the defaults fit whatever the pool
