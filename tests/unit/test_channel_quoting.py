"""When a runner's failure may quote what its sandbox printed (grader/runner/channel.py)."""

import io
import os

from grader.runner.channel import Channel
from grader.sandbox import ExitInfo, SandboxedProcess, Termination

SAID = "Traceback ... OSError: [Errno 36] File name too long: 'def masked_softmax|F|masked_fill'"


class ExitedSandbox(SandboxedProcess):
    """A sandbox that has exited saying SAID on its stderr, with open pipes for the channel."""

    def __init__(self) -> None:
        read_in, self._write_in = os.pipe()
        self._read_out, write_out = os.pipe()
        self.stdin = io.FileIO(write_out, "wb")
        self.stdout = io.FileIO(read_in, "rb")

    def wait(self, timeout: float | None = None) -> ExitInfo:
        return ExitInfo(Termination.EXITED, 1, SAID, False, 0.1)

    def kill(self) -> None:
        pass

    def close(self) -> None:
        for fd in (self._write_in, self._read_out):
            os.close(fd)
        self.stdin.close()
        self.stdout.close()


def test_a_sandbox_that_ran_nothing_yet_is_quoted():
    with ExitedSandbox() as sandbox:
        failure = Channel(sandbox, shows_sandbox=True).failure("the zygote closed its output")
    assert SAID in str(failure)


def test_once_a_run_was_asked_for_it_is_not():
    """A run of the clean sandbox chained folders named after the module it held, and the
    zygote's traceback carried them into the report (red team, round 29)."""
    with ExitedSandbox() as sandbox:
        channel = Channel(sandbox, shows_sandbox=True)
        channel.stop_quoting()
        failure = str(channel.failure("the zygote closed its output"))
    assert SAID not in failure
    assert failure == "the zygote closed its output; the sandbox exited (returncode 1)"
