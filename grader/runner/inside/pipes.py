"""Where each run's record and output pipes come from: FIFOs on the zygote's own scratch, made for
the run, or held since before the fast pass.

Why FIFOs: a run kept apart may make no pipe (isolation.deny_counters_of_the_machine), but it can
read the inode numbers of the two the zygote made for it, and pipe2's come from one counter of the
machine, handed to each CPU in batches of 1024, which any process that may make pipes can move. A
fast run that pinned itself to each CPU in turn and made pipes until the next number there spelt
a code was read by every run alone after the pass, 18 times of 18, 4 bits each (session 31); one
grade's fast zygote did the same for a later grade's runs alone, 8 bits, 25 of 25 (red team, round
36). A FIFO on a tmpfs is numbered by that superblock's own counter, which only the zygote moves.

Why a hold as well: it was the first answer to the fast pass of the same grade (pipes made
before it), and FIFOs now cover that case too; it goes once they have stood a while.
Reusing one pair would not do either way: an open pipe carries what a run set on it (its flags,
its owner, its size) to the next."""

from __future__ import annotations

import errno
import os
import resource
from collections import deque
from pathlib import Path
from typing import NamedTuple

from .protocol import ProtocolError

FDS_PER_RUN = 4


class RunPipes(NamedTuple):
    record_r: int
    record_w: int
    output_r: int
    output_w: int


def _fifo(folder: Path) -> tuple[int, int]:
    """A pipe's two ends, made as a FIFO in ``folder`` (a tmpfs of this sandbox's own) and unlinked
    at once: its inode number comes from that superblock's counter, which only this zygote moves,
    where pipe2's comes from the machine's, which any process may move (red team, round 36: one
    grade's fast zygote set it, and a later grade's runs alone read 8 bits from their pipes)."""
    path = folder / f".channel-{os.urandom(8).hex()}"
    os.mkfifo(path, 0o600)
    try:
        read = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # no writer yet: do not wait for one
        write = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    finally:
        os.unlink(path)
    os.set_blocking(read, True)
    return read, write


def _make(folder: Path) -> RunPipes:
    return RunPipes(*_fifo(folder), *_fifo(folder))


class PipeSource:
    """Fresh pipes for every run until hold() is called; from then on, only the held ones."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._held: deque[RunPipes] | None = None

    def hold(self, runs: int) -> None:
        """Make the pipes of the next ``runs`` runs now. Once held, no run gets pipes made later."""
        if self._held is not None:
            raise ProtocolError("the pipes of the runs to come are held already")
        self._held = deque()
        try:
            for _ in range(runs):
                self._held.append(_make(self._folder))
        except OSError as exc:
            if exc.errno != errno.EMFILE:
                raise
            limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            raise ProtocolError(f"the pipes of {runs} runs ({FDS_PER_RUN * runs} fds) do not fit in this sandbox's "
                                f"limit of {limit} open files") from None

    def take(self) -> RunPipes:
        if self._held is None:
            return _make(self._folder)
        if not self._held:
            raise ProtocolError("a run asked for after the held pipes were all used: the driver held too few")
        return self._held.popleft()
