"""Helpers for the hostile suite: building hostile course repos, and what must hold after a grade.

Each case builds a course repo from a hostile file under submissions/ (filled in with the Redis
port, the host's addresses and a canary), grades it through the real CLI inside tests/hostile/
reaper.py (which catches any process the grade leaves behind), and returns what a user would see:
exit code, the text report on stdout, stderr and the JSON report.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from grader.chapter import REPO_ROOT, load_chapter
from grader.report.json_report import validate

HERE = Path(__file__).resolve().parent
SUBMISSIONS = HERE / "submissions"
REAPER = HERE / "reaper.py"
EXAMPLES = REPO_ROOT / "examples" / "L4.3"
CORRECT_IMPL = EXAMPLES / "correct/python/tinyllm/seq2seq/luong.py"
WRONG_IMPL = EXAMPLES / "pitfall-s07/python/tinyllm/seq2seq/luong.py"  # scales the dot score: never a pass
CHAPTER = load_chapter("L4.3")
SECRET_MIN_CHARS = 21  # "no line longer than 20 chars" of the reference or a variant may reach a report
GUARD_SECONDS = 900  # only for a grade that never ends; the grader's own limits should end it first


@dataclass(frozen=True)
class Graded:
    """What one hostile grade produced, as the user and the machine see it."""

    returncode: int
    stdout: str  # the text report
    stderr: str
    report: dict | None  # the JSON report, None if none was written
    leftovers: list[dict]  # processes still alive after the CLI exited
    hung: bool  # the guard had to stop the CLI
    canary: str
    submitted: tuple[str, ...] = field(default=())  # the submission's own texts
    temporary: Path | None = None  # the grade's TMPDIR
    temporary_left: list[str] = field(default_factory=list)  # what the grade left there

    def surface(self) -> str:
        """Everything the student gets back."""
        return self.stdout + "\n" + json.dumps(self.report or {})


def secret_lines(submitted: tuple[str, ...]) -> set[str]:
    """Text of trusted source that must never reach a report: each line of the reference and the
    variants, without its indentation, comment mark or string quotes (docstrings and messages live
    on in the bytecode a test can read, so they come back without the quotes). Lines the student
    wrote too are theirs to see."""
    own = {_bare(line) for text in submitted for line in text.splitlines()}
    sources = [CHAPTER.reference_impl, *CHAPTER.variants]
    return {
        bare for path in sources for line in path.read_text(encoding="utf-8").splitlines()
        if len(bare := _bare(line)) >= SECRET_MIN_CHARS and bare not in own
    }


def _bare(line: str) -> str:
    line = line.strip().removeprefix("#").strip()
    for quote in ('"""', "'''", 'f"', "f'", '"', "'"):
        line = line.removeprefix(quote)
    for quote in ('"""', "'''", '"', "'"):
        line = line.removesuffix(quote)
    return line.strip()


def decoded_views(text: str) -> list[str]:
    """The text, reversed, and every base64 run in it decoded: a leak may come encoded."""
    views = [text, text[::-1]]
    for token in re.findall(r"[A-Za-z0-9+/]{40,}={0,2}", text):
        try:
            views.append(base64.b64decode(token + "=" * (-len(token) % 4)).decode("utf-8", "replace"))
        except (binascii.Error, ValueError):
            continue
    return views


def leaked_lines(graded: Graded) -> list[str]:
    secrets = secret_lines(graded.submitted)
    views = decoded_views(graded.surface())
    return sorted(line for line in secrets if any(line in view for view in views))


def failed_correct_runs(tests: dict) -> set[str]:
    """The correct implementations a report's tests did not pass on, as the report labels them
    ("variant 2" in the fast pass, "variant 2 (run alone)" alone)."""
    return {run["implementation"] for run in tests["validity"] if run["outcome"] != "passed"}


def assert_nothing_left(graded: Graded) -> None:
    """What every grade must show however it ends: bounded, no traceback, no leftover (process,
    container or temporary file)."""
    assert not graded.hung, "the grade never ended"
    assert "Traceback" not in graded.stderr, graded.stderr[-3000:]
    assert graded.leftovers == [], graded.leftovers
    assert graded.temporary_left == [], graded.temporary_left


def assert_contained(graded: Graded) -> None:
    """What every hostile grade must show: assert_nothing_left, a report and an exit code, no pass,
    no leak."""
    assert_nothing_left(graded)
    assert graded.returncode in (1, 2), (graded.returncode, graded.stdout[-2000:])
    assert graded.report is not None, "no JSON report was written"
    validate(graded.report)
    assert graded.report["verdict"] != "pass"
    assert graded.stdout.strip(), "no text report on stdout"
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", graded.stdout), "the text report carries control characters"
    assert leaked_lines(graded) == []
    assert graded.canary not in graded.surface(), "the grader's environment reached the sandbox"


def fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace(f"@{key}@", value)
    unfilled = re.findall(r"@[A-Z_]+@", template)
    if unfilled:
        raise KeyError(f"no value for the markers {unfilled}")
    return template


def host_addresses() -> list[str]:
    """The host's own non-loopback addresses: a sandbox with the host's network could reach Redis there."""
    found = subprocess.run(["hostname", "-I"], capture_output=True, text=True, check=False).stdout.split()
    return [address for address in found if ":" not in address]


@dataclass
class RepoBuilder:
    """Writes hostile course repos where intake (running as this user) can read them."""

    root: Path
    values: dict[str, str]

    def build(self, *, impl: str, tests: dict[str, str] | None = None) -> tuple[Path, tuple[str, ...]]:
        repo = Path(tempfile.mkdtemp(prefix="hostile-repo-", dir=self.root))
        impl_path = repo / CHAPTER.student.impl
        impl_path.parent.mkdir(parents=True)
        impl_text = fill(impl, self.values)
        impl_path.write_text(impl_text, encoding="utf-8")
        texts = [impl_text]
        for name, source in (tests or {}).items():
            path = repo / CHAPTER.student.tests / name
            path.parent.mkdir(parents=True, exist_ok=True)
            texts.append(fill(source, self.values))
            path.write_text(texts[-1], encoding="utf-8")
        return repo, tuple(texts)


def hostile_impl(name: str) -> str:
    """A wrong implementation with the hostile tail ``submissions/impl/<name>.py`` run at import end."""
    return WRONG_IMPL.read_text(encoding="utf-8") + "\n\n" + (SUBMISSIONS / "impl" / f"{name}.py").read_text()


def hostile_tests(name: str) -> dict[str, str]:
    folder = SUBMISSIONS / "tests" / name
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.py"))}


class Redis:
    """Just enough of the Redis protocol to watch a server from one long-lived connection."""

    def __init__(self, port: int) -> None:
        self.connection = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.reader = self.connection.makefile("rb")

    def command(self, *args: str):
        encoded = b"".join(b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args)
        self.connection.sendall(b"*%d\r\n" % len(args) + encoded)
        return self._reply()

    def _reply(self):
        line = self.reader.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:].decode()
        if kind == b"+":
            return rest
        if kind == b"-":
            raise RuntimeError(f"redis error: {rest}")
        if kind == b":":
            return int(rest)
        if kind == b"$":
            return None if rest == "-1" else self.reader.read(int(rest) + 2)[:-2].decode()
        if kind == b"*":
            return [self._reply() for _ in range(int(rest))]
        raise RuntimeError(f"unexpected redis reply {line!r}")

    def connections_received(self) -> int:
        stats = self.command("INFO", "stats")
        return int(re.search(r"total_connections_received:(\d+)", stats).group(1))

    def clients(self) -> list[str]:
        return self.command("CLIENT", "LIST").strip().splitlines()

    def close(self) -> None:
        self.reader.close()
        self.connection.close()


def hostile_cases(quick: list[str], slow: list[str], docker_too: set[str]) -> list:
    """pytest params (case, backend): every case on bwrap, some on docker too; slow ones marked."""
    cases = []
    for name in quick + slow:
        marks = [pytest.mark.slow] if name in slow else []
        cases.append(pytest.param(name, "bwrap", marks=marks, id=f"{name}-bwrap"))
        if name in docker_too:
            cases.append(pytest.param(name, "docker", marks=[*marks, pytest.mark.docker], id=f"{name}-docker"))
    return cases
