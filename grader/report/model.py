"""The result model: one set of frozen types that every report format is rendered from.

Outcomes are enums defined once, each value with the meaning a reader of the report needs.
`to_dict` gives the versioned JSON form (schema: report.schema.json beside this file).
"""

from __future__ import annotations

import enum
import re
from dataclasses import asdict, dataclass, field, fields
from typing import ClassVar

SCHEMA_VERSION = "1.3"


class Verdict(str, enum.Enum):
    PASS = "pass"  # everything graded passed
    FAIL = "fail"  # graded, and something did not pass
    ERROR = "error"  # could not be graded (bad input, sandbox unavailable); not the student's fault alone


class TestsVerdict(str, enum.Enum):
    __test__ = False  # a name pytest would otherwise try to collect

    PASS = "pass"  # valid, score at least the threshold, every required pitfall killed
    FAIL = "fail"  # valid, but under the threshold or a required pitfall survived
    INVALID = "invalid"  # a test fails on a correct implementation, so its kills prove nothing
    ERROR = "error"  # the tests could not be run at all (collection error, crash of the runner)


# C0 and C1 controls but newline and tab, DEL, lone surrogates, the noncharacters U+FFFE and
# U+FFFF (with the controls and surrogates, every character XML 1.0 forbids: a JUnit file holding
# one is not XML), the bidirectional controls that make a terminal or a browser show text in
# another order than it is written, the line and paragraph separators (a line break to some
# readers, and to str.splitlines), and the characters that show nothing at all (zero-width
# spaces and joiners, the byte-order mark, the tags), in which text can hide.
_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u061c\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)


def printable(text: str) -> str:
    """``text`` with every unprintable character spelled as its escape (``\\x1b``, ``\\ud800``)."""
    return _UNPRINTABLE.sub(lambda found: ascii(found.group())[1:-1], text)


MAX_NAME_CHARS = 500


def one_line(text: str) -> str:
    """``text`` printable, with its line breaks and tabs escaped too, and at most MAX_NAME_CHARS
    long: a name (a test id) is one line in every format, and one holding a newline put a forged
    "Implementation: PASS" at the start of a line of the text and Gradescope reports (red team,
    round 15); a conftest's ids of 30 KB, each killing a mutant, made a JSON report of 22 MB
    (round 24)."""
    return clipped(printable(text).replace("\n", "\\n").replace("\t", "\\t"), MAX_NAME_CHARS)


MAX_HEADLINE_CHARS = 300


def headline(message: str) -> str:
    """A message on one line, as a table cell or a JUnit attribute shows it: its lines joined, as
    far as MAX_HEADLINE_CHARS. The first line alone often says nothing: numpy's assertions put
    their text on the lines after ``AssertionError:`` (red team, round 16), pytest.raises(match=)
    the pattern and the message after "Regex pattern did not match.", an assert's own message
    the comparison after it (round 17)."""
    return clipped(" ".join(line.strip() for line in message.splitlines() if line.strip()), MAX_HEADLINE_CHARS)


def indented(text: str, indent: str = "    ") -> str:
    """``text`` with every line after the first indented: in a format a reader sees as lines
    (Gradescope's output, a JUnit failure's body), no line of a student's message can then pass
    for one of the report's own ("Implementation: PASS" in an exception's text: red team, round 16)."""
    first, *rest = text.split("\n") or [""]
    return "\n".join([first, *(indent + line for line in rest)])


def clipped(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, saying how many more there were. A report's free
    text can come from the student's code, and a megabyte of it would flood the report, the
    terminal and the JUnit file."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


class PrintableText:
    """Makes every str field (and every str in a tuple field) printable when the object is built.

    A report's free text can come from the student's code: an exception's message, a test id, a
    sandbox's stderr. Written as it is, an escape sequence would reach the reader's terminal (clear
    the screen, print a verdict of its own), a control character would make a JUnit file invalid
    XML, and a lone surrogate cannot be encoded as UTF-8 at all, so the report could not be written.
    The fields in ``NAMES`` are names, which are one line (``one_line``); the rest is text.
    """

    NAMES: ClassVar[frozenset[str]] = frozenset()

    def __post_init__(self) -> None:
        for name in (f.name for f in fields(self)):
            value, clean = getattr(self, name), one_line if name in self.NAMES else printable
            if type(value) is str:  # not the str-valued enums
                object.__setattr__(self, name, clean(value))
            elif isinstance(value, tuple) and all(type(item) is str for item in value):
                object.__setattr__(self, name, tuple(clean(item) for item in value))


class MutantOutcome(str, enum.Enum):
    KILLED = "killed"  # a test failed or errored
    TIMEOUT = "timeout"  # the run exceeded its time limit; counts as killed
    CRASHED = "crashed"  # the run died (signal, exit, memory); counts as killed
    SURVIVED = "survived"  # every test passed

    @property
    def is_killed(self) -> bool:
        return self is not MutantOutcome.SURVIVED


@dataclass(frozen=True)
class CourseTest(PrintableText):
    NAMES = frozenset({"name"})
    name: str
    outcome: str  # passed / failed / error / skipped / timeout / crashed
    message: str = ""


@dataclass(frozen=True)
class Pitfall(PrintableText):
    """A pitfall of the chapter, as its metadata describes it."""

    id: str
    pitfall: str
    symptom: str
    caught_by: str
    hint: str = ""  # what kind of test catches it

    @property
    def when_missed(self) -> str:
        """What a report tells a student whose tests missed this pitfall: what it does, where to
        look for a test that catches it, and how one does (a suite that tested an empty row with
        zero padding keys missed s05 and was not told why: red team, round 19)."""
        how = f"; to catch it, {self.hint}" if self.hint else ""
        return (f"every test passed on a luong.py with this pitfall ({self.symptom}); "
                f"the course test that catches it is {self.caught_by}{how}")


@dataclass(frozen=True)
class Implementation(PrintableText):
    verdict: Verdict
    tests: tuple[CourseTest, ...]
    probes_agree: bool
    probe_disagreements: tuple[str, ...]
    behaves_like: tuple[str, ...]  # pitfall ids whose behaviour the probes recognised

    @property
    def failing_tests(self) -> tuple[CourseTest, ...]:
        """The course tests that did not pass, as a report lists what keeps the implementation back."""
        return tuple(test for test in self.tests if test.outcome != "passed")


@dataclass(frozen=True)
class ValidityRun(PrintableText):
    NAMES = frozenset({"failed_test"})
    implementation: str  # "reference", "variant 1", "reference (again)"
    outcome: str  # passed / failed / error / timeout / crashed
    failed_test: str | None = None
    message: str = ""


@dataclass(frozen=True)
class MutantResult(PrintableText):
    NAMES = frozenset({"killed_by"})
    id: str
    pitfall: bool
    outcome: MutantOutcome
    killed_by: str | None = None
    where: str | None = None  # a pool mutant's place in the module, in the contract's words (the chapter's)


@dataclass(frozen=True)
class Tests(PrintableText):
    __test__ = False  # a name pytest would otherwise try to collect
    verdict: TestsVerdict
    score: float
    threshold: float
    killed: int
    total: int
    mutants: tuple[MutantResult, ...]
    pitfalls_missed: tuple[str, ...]
    validity: tuple[ValidityRun, ...]
    invalid_reason: str | None = None
    # the tests on the student's own luong.py: shown with its message, and counting for nothing
    on_your_implementation: ValidityRun | None = None
    # a place of the module (a pool mutant's `where`) -> what tests catch the mutants there, in the
    # chapter's words: carried in the report, so that whatever reads it (a CI gate, a page rendered
    # from the JSON) can tell a student what a survivor asks for without the chapter's manifest
    place_hints: dict[str, str] = field(default_factory=dict)

    @property
    def bar(self) -> str:
        """What passing asks, worded as a requirement: "bar 0.80 with every pitfall caught", beside
        a pitfall marked MISSED, read as a result (red team, round 24)."""
        return f"to pass: a score of at least {self.threshold:.2f} and every pitfall caught"


@dataclass(frozen=True)
class Report(PrintableText):
    chapter: str
    verdict: Verdict
    implementation: Implementation | None  # None only when the grade ended in an error
    tests: Tests | None  # None when no tests were submitted (or the grade ended in an error)
    pool_version: str
    pitfalls: tuple[Pitfall, ...]
    backend: str
    submission: str  # content hash of what was graded ("" when intake refused it)
    error: str | None = None  # why the grade is "error"
    timing: dict[str, float] = field(default_factory=dict)
    schema_version: str = SCHEMA_VERSION

    def to_dict(self) -> dict:
        return _plain(asdict(self))

    def without_timing(self) -> dict:
        """The report as data with the run-dependent part removed (regrades compare this)."""
        data = self.to_dict()
        data.pop("timing")
        return data


def _plain(value):
    """Enums to their values and tuples to lists, so the dict is JSON as it stands."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
