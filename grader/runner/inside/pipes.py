"""Where each run's record and output pipes come from: made for it, or held since before the fast pass.

Why a pool: a run kept apart may make no pipe (isolation.deny_counters_of_the_machine), but it can
read the inode numbers of the two the zygote made for it, and those come from one counter of the
machine, handed to each CPU in batches of 1024. The fast sandbox's runs may make pipes: one that
pinned itself to each CPU in turn and made pipes until the next number there spelt a code was read
by every run alone after the pass, 18 times of 18, 4 bits each (measured by hand, session 31). Such
a code can tell the runs after the pass what the reference did, which defeats their recheck. Pipes
made before the fast sandbox runs anything of the student's carry nothing from it, so the driver
asks for the pipes of every run after the pass first (WarmRunner.hold_pipes), and from then on a
run gets only pipes from that pool. Reusing one pair would not do: an open pipe carries what a run
set on it (its flags, its owner, its size) to the next.
"""

from __future__ import annotations

import errno
import os
import resource
from collections import deque
from typing import NamedTuple

from .protocol import ProtocolError

FDS_PER_RUN = 4


class RunPipes(NamedTuple):
    record_r: int
    record_w: int
    output_r: int
    output_w: int


def _make() -> RunPipes:
    record_r, record_w = os.pipe2(os.O_CLOEXEC)
    output_r, output_w = os.pipe2(os.O_CLOEXEC)
    return RunPipes(record_r, record_w, output_r, output_w)


class PipeSource:
    """Fresh pipes for every run until hold() is called; from then on, only the held ones."""

    def __init__(self) -> None:
        self._held: deque[RunPipes] | None = None

    def hold(self, runs: int) -> None:
        """Make the pipes of the next ``runs`` runs now. Once held, no run gets pipes made later."""
        if self._held is not None:
            raise ProtocolError("the pipes of the runs to come are held already")
        self._held = deque()
        try:
            for _ in range(runs):
                self._held.append(_make())
        except OSError as exc:
            if exc.errno != errno.EMFILE:
                raise
            limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            raise ProtocolError(f"the pipes of {runs} runs ({FDS_PER_RUN * runs} fds) do not fit in this sandbox's "
                                f"limit of {limit} open files") from None

    def take(self) -> RunPipes:
        if self._held is None:
            return _make()
        if not self._held:
            raise ProtocolError("a run asked for after the held pipes were all used: the driver held too few")
        return self._held.popleft()
