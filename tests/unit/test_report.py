"""The report model renders to JSON that its published schema accepts, and to a readable table."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from xml.etree import ElementTree

import jsonschema
import pytest

from grader.chapter import load_chapter
from grader.report.formats import RENDERERS
from grader.report.json_report import render_json, validate
from grader.report.model import (
    MAX_NAME_CHARS,
    CourseTest,
    Implementation,
    MutantOutcome,
    MutantResult,
    Pitfall,
    Report,
    Tests,
    TestsVerdict,
    ValidityRun,
    Verdict,
    headline,
)
from grader.report.text import render_text

PITFALLS = (Pitfall("s01", "W_c [h ; c]", "garbage", "test_order"), Pitfall("s05", "-1e9", "reads padding", "test_mask"))


def sample(tests_verdict=TestsVerdict.FAIL) -> Report:
    implementation = Implementation(
        verdict=Verdict.FAIL,
        tests=(CourseTest("test_hand_example_dot", "passed"), CourseTest("test_masked", "failed", "assert 0.25 == 0")),
        probes_agree=False,
        probe_disagreements=("dot: differs in context (every read), max abs difference 0.5",),
        behaves_like=("s05",),
    )
    tests = Tests(
        verdict=tests_verdict, score=0.5, threshold=0.8, killed=1, total=2,
        mutants=(MutantResult("s01", True, MutantOutcome.KILLED, "test_order"),
                 MutantResult("s05", True, MutantOutcome.SURVIVED)),
        pitfalls_missed=("s05",), validity=(ValidityRun("reference", "passed"),),
    )
    return Report(chapter="L4.3", verdict=Verdict.FAIL, implementation=implementation, tests=tests,
                  pool_version="abc123", pitfalls=PITFALLS, backend="bwrap", submission="f" * 64,
                  timing={"total": 1.5})


def test_json_report_matches_its_schema():
    data = json.loads(render_json(sample()))
    validate(data)
    assert data["tests"]["mutants"][1] == {"id": "s05", "pitfall": True, "outcome": "survived", "killed_by": None,
                                           "where": None}
    assert data["implementation"]["behaves_like"] == ["s05"]


def test_error_report_matches_its_schema():
    report = Report(chapter="L4.3", verdict=Verdict.ERROR, implementation=None, tests=None, pool_version="",
                    pitfalls=(), backend="bwrap", submission="", error="luong.py: not found")
    validate(json.loads(render_json(report)))


def test_the_schema_rejects_a_broken_report():
    data = sample().to_dict()
    data["tests"]["mutants"][0]["outcome"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        validate(data)
    data = sample().to_dict()
    del data["verdict"]
    with pytest.raises(jsonschema.ValidationError):
        validate(data)


def test_without_timing_drops_only_timing():
    data = sample().without_timing()
    assert "timing" not in data and data["verdict"] == "fail"


def test_text_report_puts_pitfalls_first():
    text = render_text(sample())
    assert text.index("Pitfalls") < text.index("Implementation") < text.index("Tests:")
    assert "caught by test_order" in text
    assert "MISSED" in text
    assert "falls in: reads padding" in text
    assert "no sign of it" in text  # s01: the module fails, and the probes showed nothing of this pitfall
    assert "pitfalls missed: s05" in text
    # and what the student can do about it, as the Gradescope format says it
    assert "s05: every test passed on a luong.py with this pitfall (reads padding); the course test that catches it" \
           " is test_mask" in " ".join(text.split())


def test_a_missed_pitfall_says_how_a_test_catches_it_where_the_chapter_says(chapter):
    """Red team, round 19: a suite that tested an empty row with zero padding keys missed s05 and
    was told only which course test catches it. Every pitfall of the chapter has a hint, shown
    in the report, and the JSON report carries it (and stays valid)."""
    from grader.mutants import load_catalogue

    pitfalls = load_catalogue(chapter).pitfalls
    assert all(pitfall.hint for pitfall in pitfalls)
    s05 = next(pitfall for pitfall in pitfalls if pitfall.id == "s05")
    assert s05.when_missed.endswith("; to catch it, " + s05.hint) and "padding keys that are not zero" in s05.hint
    hinted = replace(sample(), pitfalls=(*PITFALLS[:1], s05))
    validate(json.loads(render_json(hinted)))
    assert s05.hint in " ".join(render_text(hinted).split())


def test_the_legend_is_shown_only_under_lines_that_name_reads():
    assert "Reading them:" in render_text(sample())
    report = sample()
    timed_out = Implementation(**{**report.implementation.__dict__, "tests": (CourseTest("test_a", "passed"),),
                                  "probe_disagreements": ("the probe run did not finish within 10 s",)})
    text = render_text(Report(**{**report.__dict__, "implementation": timed_out}))
    assert "the probe run did not finish within 10 s" in text
    assert "Reading them:" not in text and "where your module differs" not in text  # nothing was compared
    assert "Trusted probes: no answer to compare" in text and "Trusted probes: disagree" not in text
    assert "Trusted probes: disagree" in render_text(sample())


def test_kills_of_an_invalid_suite_are_not_shown_as_caught():
    report = sample()
    invalid = Tests(**{**report.tests.__dict__, "verdict": TestsVerdict.INVALID,
                       "invalid_reason": "killed s01 only when run after other implementations"})
    text = render_text(Report(**{**report.__dict__, "tests": invalid}), width=200)
    assert "caught by" not in text and "killed, not counted (tests invalid)" in text
    # nor are pitfalls called missed: an invalid suite's runs on the mutants count for nothing
    assert "pitfalls missed" not in text and "every test passed on" not in text


def test_a_long_killing_test_id_is_shown_whole_in_the_pitfall_table():
    """A parametrized id is often wider than its column: it was cut with an ellipsis there, and
    which case caught the pitfall is what a student reads it for (red team, round 23)."""
    report = sample()
    long_id = "test_forward_matches_numpy_oracle[3-lengths1-float32-concat-with-a-padded-row]"
    mutants = (MutantResult("s01", True, MutantOutcome.KILLED, f"tests/test_luong.py::{long_id}"),
               *report.tests.mutants[1:])
    report = Report(**{**report.__dict__, "tests": Tests(**{**report.tests.__dict__, "mutants": mutants})})
    text = render_text(report, width=110)
    table = text.split("Implementation:")[0]
    assert "…" not in table
    cells = "".join(line.split("│")[4].strip() for line in table.splitlines() if line.count("│") == 5)
    assert f"caught by{long_id}" in cells


def test_the_run_on_the_student_s_own_implementation_is_shown_with_its_message():
    report = sample(TestsVerdict.INVALID)
    yours = ValidityRun("your luong.py", "failed", "test_luong.py::test_x", "AssertionError:\n  1.0 != 0.7071")
    report = Report(**{**report.__dict__, "tests": Tests(**{**report.tests.__dict__, "on_your_implementation": yours})})
    assert "  on your luong.py: failed (test_luong.py::test_x): AssertionError: 1.0 != 0.7071" in render_text(report)
    validate(json.loads(render_json(report)))
    assert json.loads(render_json(report))["tests"]["on_your_implementation"]["message"] == yours.message


def test_a_failure_on_the_student_s_own_implementation_says_it_counts_for_nothing():
    """Read as what sank the grade (red team, round 26): it is shown to explain the other rows."""
    report = sample()
    for outcome, said in (("failed", True), ("passed", False)):
        yours = ValidityRun("your luong.py", outcome, "test_luong.py::test_x" if said else None)
        tests = Tests(**{**report.tests.__dict__, "on_your_implementation": yours})
        text = " ".join(render_text(Report(**{**report.__dict__, "tests": tests})).split())
        assert ("this run counts for nothing" in text) is said, text


def test_tests_that_could_not_be_graded_show_no_score():
    """"Tests: ERROR score 0.00 (0/0 mutants killed)" read as a grade of nothing (red team, round 26)."""
    from grader.scoring import tests_not_graded

    report = Report(**{**sample().__dict__, "verdict": Verdict.ERROR, "tests": tests_not_graded(0.8, ("s01",)),
                       "error": "the tests could not be graded: collecting them failed"})
    text = render_text(report)
    assert "Tests: ERROR   not graded: the error at the top says why" in text
    assert "score" not in text.split("Tests: ")[1] and "0/0" not in text


def test_invalid_tests_show_no_score():
    """"Tests: INVALID score 0.00 (0/0 mutants killed)" read as a grade (red team, round 27): kills
    of tests that fail a correct implementation prove nothing."""
    report = sample()
    tests = Tests(**{**report.tests.__dict__, "verdict": TestsVerdict.INVALID, "invalid_reason": "test x failed"})
    text = render_text(Report(**{**report.__dict__, "tests": tests}))
    assert "Tests: INVALID   not scored: a test fails on a correct implementation (below)" in text
    assert "mutants killed" not in text.split("Tests: ")[1].splitlines()[0]


def test_a_name_is_clipped_wherever_it_is_shown():
    """A conftest can name its tests with 30 KB each and kill every mutant with one: the JSON
    report came to 22 MB (red team, round 24)."""
    long_id = "test_x.py::t[" + "\U0001f600" * 7500 + "]"
    row = MutantResult("s01", True, MutantOutcome.KILLED, long_id)
    assert row.killed_by.startswith(long_id[:MAX_NAME_CHARS]) and row.killed_by.endswith(f"({len(long_id) - MAX_NAME_CHARS} more characters)")
    assert len(ValidityRun("reference", "failed", long_id).failed_test) < MAX_NAME_CHARS + 30
    assert len(CourseTest(long_id, "passed").name) < MAX_NAME_CHARS + 30


def test_the_bar_is_worded_as_what_passing_asks_in_every_format():
    """"bar 0.80 with every pitfall caught", beside a pitfall marked MISSED, read as a result
    (red team, round 24)."""
    report = sample()
    asks = "to pass: a score of at least 0.80 and every pitfall caught"
    assert asks in render_text(report, width=200)
    assert asks in RENDERERS["gradescope"](report) and asks in RENDERERS["junit"](report)


def test_runs_that_all_passed_are_counted_and_the_others_named():
    report = sample(TestsVerdict.PASS)
    runs = (ValidityRun("reference", "passed"), ValidityRun("variant 1", "passed"),
            ValidityRun("variant 1 (run alone)", "passed"))
    passing = Report(**{**report.__dict__, "tests": Tests(**{**report.tests.__dict__, "validity": runs})})
    assert "passed on every correct implementation: 3 runs" in render_text(passing, width=200)
    failing = (*runs[:2], ValidityRun("variant 1 (run alone)", "failed", "test_x"))
    text = render_text(Report(**{**report.__dict__, "tests": Tests(**{**report.tests.__dict__, "validity": failing})}),
                       width=200)
    assert "passed on: reference, variant 1\n" in text and "variant 1 (run alone): failed (test_x)" in text
    # runs that failed alike share a line (fourteen variants took fourteen: red team, round 28)
    alike = (*runs[:1], *(ValidityRun(f"variant {n}", "failed", "test_x") for n in range(1, 15)),
             ValidityRun("reference (run again last)", "failed", "test_y"))
    text = render_text(Report(**{**report.__dict__, "tests": Tests(**{**report.tests.__dict__, "validity": alike})}),
                       width=200)
    assert "  variant 1, variant 2 and 12 more runs: failed (test_x)\n" in text
    assert "  reference (run again last): failed (test_y)\n" in text and "variant 3" not in text


def test_surviving_pool_mutants_are_listed_under_their_place_in_the_module():
    """Their code is never shown, so an id alone told a student nothing to look up (red team,
    round 28): each is listed under where it changes the module, the place with the most first."""
    survivors = (MutantResult("g1", False, MutantOutcome.SURVIVED, where="scores"),
                 MutantResult("g2", False, MutantOutcome.SURVIVED, where="the constructor"),
                 MutantResult("g3", False, MutantOutcome.KILLED, "test_order", where="scores"),
                 MutantResult("g4", False, MutantOutcome.SURVIVED, where="the constructor"))
    report = sample()
    hints = load_chapter("L4.3").place_hints  # what catches them, as the chapter says
    report = replace(report, tests=replace(report.tests, mutants=report.tests.mutants + survivors,
                                           place_hints=hints))
    text = render_text(report)
    assert "pool mutants that survived (3), by where they change the module:" in text
    assert text.index("in the constructor (2): g2, g4") < text.index("in scores (1): g1")
    assert text.index("in scores (1): g1") < text.index(hints["scores"][:40])
    data = json.loads(render_json(report))
    validate(data)
    assert [m["where"] for m in data["tests"]["mutants"][2:]] == ["scores", "the constructor", "scores",
                                                                   "the constructor"]
    assert data["tests"]["place_hints"] == hints  # a reader of the JSON needs no manifest to say it


def test_survivors_are_listed_without_hints_the_report_does_not_carry():
    """A report made without the chapter's place hints (tests not graded, or a hand-made one) still
    lists its survivors by place."""
    report = sample()
    report = replace(report, tests=replace(report.tests, mutants=report.tests.mutants + (
        MutantResult("g1", False, MutantOutcome.SURVIVED, where="scores"),)))
    text = render_text(report)
    assert "in scores (1): g1" in text and load_chapter("L4.3").place_hints["scores"][:40] not in text
    xml = ElementTree.fromstring(RENDERERS["junit"](report).encode())
    failure = next(case.find("failure") for case in xml.iter("testcase") if case.get("name") == "your tests kill g1")
    assert failure.text.endswith("which changes scores (its code is not shown)")


def test_junit_says_what_catches_each_survivor_as_the_text_report_does():
    """JUnit said only "survived" of a mutant whose code no report shows: a pool mutant's failure
    now says where it changes the module and what catches such mutants, a pitfall's what the text
    report says of a missed pitfall."""
    report = sample()
    report = replace(report, tests=replace(report.tests, mutants=report.tests.mutants + (
        MutantResult("g1", False, MutantOutcome.SURVIVED, where="scores"),
        MutantResult("g2", False, MutantOutcome.KILLED, "test_order", where="scores")),
        place_hints=load_chapter("L4.3").place_hints))
    xml = ElementTree.fromstring(RENDERERS["junit"](report).encode())
    failures = {case.get("name"): case.find("failure") for case in xml.iter("testcase")}
    pool = failures["your tests kill g1"].text
    assert "which changes scores (its code is not shown); " + load_chapter("L4.3").place_hints["scores"] in pool
    assert PITFALLS[1].when_missed in failures["your tests kill s05: -1e9"].text
    assert failures["your tests kill g2"] is None and failures["your tests kill s01: W_c [h ; c]"] is None


def test_a_slow_suite_is_told_what_it_cost_the_grade():
    """A suite that took 203 s to grade was told nothing of it (red team, round 28)."""
    report = sample()
    yours = ValidityRun("your luong.py", "passed")
    slow = replace(report, tests=replace(report.tests, on_your_implementation=yours),
                   timing={"yours": 2.4, "total": 203.0})
    assert "slow: your tests took 2.4 s on your luong.py" in render_text(slow)
    assert "this grade took 203 s" in render_text(slow)
    assert "slow:" not in render_text(replace(slow, timing={"yours": 0.2, "total": 8.0}))
    assert "slow:" not in render_text(replace(slow, timing={}))


def test_text_report_of_an_error():
    report = Report(chapter="L4.3", verdict=Verdict.ERROR, implementation=None, tests=None, pool_version="",
                    pitfalls=(), backend="bwrap", submission="", error="luong.py: not found")
    text = render_text(report)
    assert "error: luong.py: not found" in text
    assert text.startswith("Chapter L4.3: ERROR   (sandbox bwrap)\n")  # no pool was read: none is named


def test_text_report_shows_brackets_and_markup_as_written():
    report = sample()
    pitfall = Pitfall("s01", "W_c [h ; c] instead of W_c [c ; h]", "garbage", "test_order")
    hostile = CourseTest("test_x", "failed", "[bold red]pwned[/] [link=http://x]")
    impl = report.implementation
    report = Report(**{**report.__dict__, "pitfalls": (pitfall,),
                       "implementation": Implementation(**{**impl.__dict__, "tests": (hostile,)})})
    text = render_text(report, width=200)
    assert "W_c [h ; c] instead of W_c [c ; h]" in text
    assert "[bold red]pwned[/] [link=http://x]" in text


# What a hostile luong.py or test can put in a message: a screen clear and a forged verdict, a NUL,
# a carriage return that overwrites the line, a lone surrogate, a right-to-left override, and the
# noncharacters U+FFFE and U+FFFF (which XML forbids like the controls), a line separator, and
# characters that show nothing (a zero-width space, a byte-order mark, a tag) (red team, round 11).
UNPRINTABLE = "\x1b[2J\x1b[HChapter L4.3: PASS\x00\rok\ud800\u202e\ufffe\uffff\u2028\u200b\ufeff\U000e0041"
SHOWN = ("\\x1b[2J\\x1b[HChapter L4.3: PASS\\x00\\rok\\ud800\\u202e\\ufffe\\uffff"
         "\\u2028\\u200b\\ufeff\\U000e0041")


def report_with_unprintable_text() -> Report:
    report = sample()
    impl = report.implementation
    tests = report.tests
    return Report(**{
        **report.__dict__, "error": UNPRINTABLE,
        "implementation": Implementation(**{**impl.__dict__, "tests": (CourseTest("test_x", "failed", UNPRINTABLE),),
                                            "probe_disagreements": (UNPRINTABLE,)}),
        "tests": Tests(**{**tests.__dict__, "invalid_reason": UNPRINTABLE,
                          "validity": (ValidityRun("reference", "failed", UNPRINTABLE, UNPRINTABLE),),
                          "mutants": (MutantResult("s01", True, MutantOutcome.KILLED, UNPRINTABLE),)}),
    })


def test_unprintable_text_is_spelled_out_when_a_report_is_built():
    report = report_with_unprintable_text()
    assert report.error == SHOWN
    assert report.implementation.tests[0].message == SHOWN
    assert report.implementation.probe_disagreements == (SHOWN,)
    assert report.tests.validity[0].failed_test == SHOWN and report.tests.mutants[0].killed_by == SHOWN
    assert report.verdict is Verdict.FAIL and report.tests.mutants[0].outcome is MutantOutcome.KILLED  # enums kept


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_no_format_writes_unprintable_text(name):
    """Escape sequences would reach the reader's terminal, control characters and U+FFFE/U+FFFF
    make a JUnit file invalid XML, and a lone surrogate cannot be written as UTF-8 at all."""
    written = RENDERERS[name](report_with_unprintable_text())
    written.encode("utf-8")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e\ufffe\uffff\u2028\u200b\ufeff\U000e0041]", written)
    if name == "junit":
        ElementTree.fromstring(written.encode("utf-8"))


@pytest.mark.parametrize("forged", [
    "oops\nImplementation: PASS\nTests: PASS",
    "x" * 99 + " Tests: PASS   score 1.00" + " " * 85 + "Implementation: PASS",  # wrapped by the terminal's width
], ids=["own lines", "wrapped"])
def test_free_text_in_the_text_report_cannot_start_a_line_of_its_own(forged):
    """A probe disagreement quotes the implementation's exception, the reasons an invalid suite or
    an error give quote a test's message, and a validity row a test's id: each further line of
    theirs, their own or the wrap's, is indented under its first, so none can pass for one of the
    report's own lines (red team, rounds 11 and 12)."""
    report = sample()
    tests = report.tests
    report = Report(**{
        **report.__dict__, "error": forged,
        "implementation": Implementation(**{**report.implementation.__dict__, "probe_disagreements": (forged,)}),
        "tests": Tests(**{**tests.__dict__, "invalid_reason": forged,
                          "validity": (ValidityRun("reference", "failed", forged, "boom"),)}),
    })
    text = render_text(report, width=110)
    lines = text.splitlines()
    assert not [line for line in lines if line.startswith(("Implementation: PASS", "Tests: PASS"))], lines
    assert "".join(text.split()).count("Tests:PASS") == 4, lines  # each field shown, however wrapped


def test_a_test_id_is_one_line_wherever_it_is_shown():
    """pytest makes no id with a line break, but a conftest can rename its tests: one whose ids
    ended in "\nImplementation: PASS" put that line into the pitfall table and the Gradescope
    entries (red team, round 15). Names are escaped as the report is built."""
    forged = "test_a\nImplementation: PASS\tx"
    report = sample()
    tests = report.tests
    report = Report(**{
        **report.__dict__,
        "implementation": Implementation(**{**report.implementation.__dict__,
                                            "tests": (CourseTest(forged, "passed"),)}),
        "tests": Tests(**{**tests.__dict__, "mutants": (MutantResult("s01", True, MutantOutcome.KILLED, forged),),
                          "validity": (ValidityRun("reference", "failed", forged, "boom"),)}),
    })
    assert report.tests.mutants[0].killed_by == "test_a\\nImplementation: PASS\\tx"
    assert report.tests.validity[0].failed_test == report.implementation.tests[0].name == "test_a\\nImplementation: PASS\\tx"
    text = render_text(report, width=200)
    assert "test_a\\nImplementation: PASS" in text
    assert not [line for line in text.splitlines() if "Implementation: PASS" in line.split("\\n")[0]]
    outputs = [entry["output"] for entry in json.loads(RENDERERS["gradescope"](report))["tests"]]
    assert not [line for output in outputs for line in output.splitlines() if line.startswith("Implementation: PASS")]


def test_a_message_s_lines_cannot_pass_for_the_report_s_own_in_any_format():
    """An exception's text is quoted by the course-test rows and the probe lines; its further
    lines are indented in Gradescope's outputs and JUnit's bodies as in the text report (red
    team, round 16: 'Implementation: PASS' at the start of a line there)."""
    forged = "concat is not done yet\nImplementation: PASS\nChapter L4.3: PASS"
    report = sample()
    implementation = Implementation(**{**report.implementation.__dict__, "probe_disagreements": (forged,),
                                       "tests": (CourseTest("test_masked", "failed", forged),)})
    report = Report(**{**report.__dict__, "implementation": implementation,
                       "tests": Tests(**{**report.tests.__dict__, "verdict": TestsVerdict.INVALID,
                                         "invalid_reason": forged})})
    gradescope = "\n".join(entry["output"] for entry in json.loads(RENDERERS["gradescope"](report))["tests"])
    junit = "\n".join(element.text or "" for element in ElementTree.fromstring(RENDERERS["junit"](report).encode()).iter())
    for written in (gradescope, junit, render_text(report)):
        assert "concat is not done yet" in written
        assert not [line for line in written.splitlines() if line.startswith(("Implementation: PASS",
                                                                              "Chapter L4.3: PASS"))]


def test_a_numpy_assertion_s_text_is_in_the_headline():
    """np.testing puts its text on the lines after 'AssertionError:': the first line alone said
    nothing, in the text table and in JUnit's message attribute (red team, round 16)."""
    message = "test_luong.py:80: AssertionError: \n\nNot equal to tolerance rtol=1e-06\n[0, 2]: 0.665 (ACTUAL)"
    assert headline(message) == "test_luong.py:80: AssertionError: Not equal to tolerance rtol=1e-06 [0, 2]: 0.665 (ACTUAL)"
    # and pytest.raises(match=)'s pattern and input, an assert's comparison after its message (round 17)
    assert (headline("Regex pattern did not match.\n  Expected regex: '(?i)score'\n  Actual message: 'unknown: x'")
            == "Regex pattern did not match. Expected regex: '(?i)score' Actual message: 'unknown: x'")
    assert headline("AssertionError: concat\nassert [('v.weight', (3, 1))] == [('v.weight', (1, 3))]").endswith(
        "concat assert [('v.weight', (3, 1))] == [('v.weight', (1, 3))]")
    assert headline("") == "" and len(headline("x\n" * 1000)) < 400


def test_the_workflow_results_are_printable_too():
    from grader.workflow import CourseRun, Diff

    assert CourseRun(Verdict.ERROR, (), error=UNPRINTABLE).error == SHOWN
    assert Diff(Verdict.ERROR, UNPRINTABLE).text == SHOWN


def test_a_terminal_shows_the_first_probe_lines_and_says_where_the_rest_are():
    """Thirty cases of a module wrong at its root came to some 200 lines (red team, round 27)."""
    report = sample()
    lines = tuple(f"dot, case {n}: differs in scores (every read)" for n in range(30))
    implementation = Implementation(**{**report.implementation.__dict__, "probe_disagreements": lines})
    text = render_text(Report(**{**report.__dict__, "implementation": implementation}))
    assert "case 5:" in text and "case 6:" not in text
    assert "and 24 more like them: the report in JSON (--format json) or HTML has every one" in " ".join(text.split())
    assert len(json.loads(render_json(Report(**{**report.__dict__, "implementation": implementation})))
               ["implementation"]["probe_disagreements"]) == 30


def test_a_pitfall_whose_course_test_stopped_at_the_module_s_exception_is_not_checked():
    """An unwritten method (raise NotImplementedError) read as "no sign of it" (red team, round 27);
    so did a pitfall whose own course test failed an assertion (honest students, round 30)."""
    report = sample()
    tests = (CourseTest("test_order", "failed", "luong.py:100: NotImplementedError: attentional: TODO"),
             CourseTest("test_mask", "failed", "test_luong.py:206: AssertionError: not exactly 0"))
    implementation = Implementation(**{**report.implementation.__dict__, "tests": tests, "behaves_like": ()})
    text = " ".join(render_text(Report(**{**report.__dict__, "implementation": implementation})).split())
    assert "not checked: test_order raised NotImplementedError" in text
    assert "│ s05 │ -1e9 │ its course test failed (test_mask)" in text  # an assertion: a sign, not "no sign of it"
    failed_import = "the module failed to import: ModuleNotFoundError: No module named 'scipy'"
    implementation = Implementation(**{**implementation.__dict__, "tests": (CourseTest("test_mask", "error", failed_import),)})
    text = render_text(Report(**{**report.__dict__, "implementation": implementation}), width=300)
    assert "not checked: the module failed to import" in text


def test_the_probes_legend_explains_only_what_the_shown_lines_name():
    """The whole legend came to some 35 lines of names, under a module that only raised (red team, round 28)."""
    from grader.report.text import probe_legend

    assert probe_legend([("every score (dot, general, concat) in every band of widths, lengths and dtypes (30 cases): "
                         "the implementation raised NotImplementedError: TODO (in the first read)")]) == ""
    assert probe_legend(["dot in float32: the implementation raised TypeError: dtype mismatch (in the frozen: read)"]) \
        .startswith("The reads: frozen: a fresh module built from an rng")
    legend = probe_legend([("dot, width 1-8, 3-11 tokens: differs in weights (reads first, with_proj:), "
                           "max abs difference 0.5")])
    assert "with_proj: through forward" in legend and "first: called as the course tests call it" in legend
    assert "in_a_model:" not in legend and "frozen:" not in legend and "exactly 0" not in legend
    assert "compared exactly" in probe_legend([("dot: differs in x (every read); not exactly 0 where it must be: y "
                                               "(read frozen:)")])
    assert probe_legend(["the probe run did not finish within 10 s"]) == ""


def test_a_module_that_differs_only_in_the_contract_is_said_to_disagree():
    """It read "Trusted probes: no answer to compare" (red team, round 28)."""
    report = sample()
    implementation = Implementation(**{**report.implementation.__dict__, "probe_disagreements": (
        "contract: initialisation: 'dot: does not draw from the rng it is given'",)})
    text = render_text(Report(**{**report.__dict__, "implementation": implementation}))
    assert "Trusted probes: disagree" in text
    implementation = Implementation(**{**report.implementation.__dict__, "probe_disagreements": (
        "the probe run crashed: killed by signal 9",)})
    assert "Trusted probes: no answer to compare" in render_text(Report(**{**report.__dict__,
                                                                            "implementation": implementation}))


def test_a_suite_with_score_enough_that_missed_a_pitfall_is_told_which_part_failed():
    """'score 0.80 (181/225)' beside 'to pass: a score of at least 0.80' read as short (red team, round 28)."""
    report = sample()
    enough = Tests(**{**report.tests.__dict__, "score": 0.9, "killed": 9, "total": 10})
    text = " ".join(render_text(Report(**{**report.__dict__, "tests": enough})).split())
    assert "every pitfall caught; the score is enough, the pitfalls missed are not (below)" in text
    assert "the score is enough" not in render_text(report)  # 0.5: short as well
