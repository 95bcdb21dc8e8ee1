"""Helpers the sandbox tests share: run a python snippet in a sandbox, read the protocol pipe."""

from __future__ import annotations

from dataclasses import dataclass

from grader.sandbox import ExitInfo, Limits, Mount, SandboxBackend, SandboxedProcess


@dataclass(frozen=True)
class Run:
    stdout: bytes
    exit: ExitInfo


def run_python(
    backend: SandboxBackend,
    code: str,
    *,
    limits: Limits | None = None,
    mounts: tuple[Mount, ...] = (),
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
    apart: bool = False,
) -> Run:
    """Run ``python -c code`` to the end in a fresh sandbox, feeding ``stdin`` then EOF."""
    with backend.spawn([backend.python, "-c", code], mounts=mounts, limits=limits or Limits(), env=env,
                       apart=apart) as process:
        process.stdin.write(stdin)
        process.stdin.close()
        stdout = process.stdout.read()
        return Run(stdout, process.wait())


def read_line(process: SandboxedProcess) -> bytes:
    line = process.stdout.readline()
    assert line, f"the sandbox closed stdout early: {process.wait().stderr}"
    return line
