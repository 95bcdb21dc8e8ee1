"""The terminal report: per-pitfall lines first, then the implementation and the tests."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from grader.probes import FIRST_READ, NAMES_READS, OUTPUTS_NAMED, resized_reads
from grader.probes import compared as probes_compared
from grader.report.model import Report, TestsVerdict, Verdict, headline
from grader.report.survivors import survivors_by_place
from grader.runner.inside.probe import AGAIN, CACHED, FROZEN, MODEL, NEXT, RESIZED
from grader.runner.inside.records import IMPORT_FAILED

# Of the probes' disagreements, the ones a terminal shows: a module wrong at its root differs in
# every case, and thirty such lines came to some 200 (red team, round 27); the first ones say it.
MAX_PROBE_LINES = 6
SLOW_SUITE_SECONDS = 1.0  # the student's tests on their own luong.py: slower, and the report says what it costs
RAISED = re.compile(r"[^\s:]+\.py:\d+: ([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\b")
STYLE = {"pass": "bold green", "fail": "bold red", "invalid": "bold red", "error": "bold yellow"}
# The legend of the probes' lines, a sentence for each thing a shown line names: all of it came
# to some 35 lines of names, printed under a module that only raised (red team, round 28).
LEGEND_OPENING = ("each case reads the module several times; a name in parentheses says in which reads an output "
                  "differs, \"every read\" meaning each read that gives it.")
READ_LEGEND = (  # (the read prefixes a line names, what those reads do)
    ((FIRST_READ,), f"{FIRST_READ}: called as the course tests call it"),  # named as "(read first)"
    ((CACHED,), (f"{CACHED} through forward(..., proj=project_keys(keys)) (proj and scores_from_proj are what it "
                "made of them; scores_from_given_proj and weights_from_given_proj what scores and forward read from a "
                "proj unlike project_keys(keys), its positions reversed: general's and concat's scores read the proj they are "
                "given, the W_a k_s computed once per sentence)")),
    ((FROZEN,), (f"{FROZEN} a fresh module built from an rng, never loaded (its weights written in place, as an "
                "optimiser writes them), called with every argument named as the contract names it, trained over "
                "inputs that need no gradient (its parameters still do; inference_ with the query constant too); "
                "then changed_ with one real key replaced, as the next sentence is; cached_ and decoded_ through "
                "proj=project_keys(keys), with the query's gradient and without; next_decoded_ the next step before "
                "the first's outputs are read; proj_kept says proj came back unchanged; step_ a second backward pass "
                "through the same proj; stepped_ after an optimiser's step written into the weights in place; "
                "cast_ after the module is cast to float64")),
    ((NEXT, CACHED + NEXT), (f"{NEXT} and {CACHED + NEXT}: both modules again with other weights and the next batch, "
                            "given the keys tensor and mask array of their first read, refilled")),
    ((RESIZED, CACHED + RESIZED), (f"{RESIZED} and {CACHED + RESIZED}: both again, with a batch of another size and "
                                  f"source length ({resized_reads()})")),
    ((CACHED + AGAIN,), (f"{CACHED + AGAIN} the cached one a last time, without proj, its first keys refilled into "
                        "the same tensor again")),
    ((FROZEN + RESIZED,), (f"{FROZEN + RESIZED} the first one with the other batch again, its query constant "
                          "(inference_ with the keys constant too)")),
    ((MODEL,), (f"{MODEL} a fresh module held by a model of tinyllm's Module, which casts and loads it as a whole, "
               "first in the other dtype (its parameters named as the model names them and taken before any call, "
               "grad:attention.NAME), with the next batch's inputs passed through the model's own layer and tanh "
               "(grad:bridge.NAME), once directly and once through proj, then fed_ a step whose query is made from "
               "the attentional state (input feeding), then decoding with no padding and nothing needing a "
               "gradient: bucket_ the batch, sentence_ its first row alone, beam_ its first row's keys for every "
               "query")),
)
OUTPUTS_LEGEND = (
    "The outputs: context, weights, attentional and scores as the module gives them; later_ at a decoder's later "
    "step, a new query and mask on the same keys and proj; grad_query and grad_keys the inputs' gradients and "
    "grad:NAME a parameter's, of a sum of the outputs weighed at random; inputs_kept says the inputs came back "
    "unchanged."
)
EXACT_LEGEND = (
    "What must be exactly 0 is compared exactly (a padded position's weight and gradient, an empty row's context, "
    "the query's gradient when one token takes all the weight): a number there, however small, comes from a path "
    "that should not exist."
)
EXTREME_LEGEND = (
    "Among the rows: one whose real token scores far below zero (-2^120 in float32, -2^1000 in float64: a "
    "difference of 1e+36 or 1e+300 is that row's score), which padding filled with any finite number would "
    "outweigh, and one whose scores reach 200 in float32, 2000 in float64, which exp overflows on unless the "
    "softmax subtracts the row's maximum."
)
SURVIVORS_HINT = (
    "a pool mutant is the reference with one small change; its code is not shown, as it would show the "
    "reference. Under each place, what tests catch its mutants:"
)


def render_text(report: Report, *, width: int = 110) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=False, color_system=None)
    console.print(_document(report))
    return "".join(line.rstrip() + "\n" for line in console.file.getvalue().splitlines())  # no padding to the width


def _document(report: Report) -> Group:
    parts: list = [_headline(report)]
    if report.error:
        parts.append(_hanging("error: ", report.error, style=STYLE["error"]))
    if report.implementation is None:  # nothing was graded (an error that stopped the tests alone keeps it)
        return Group(*parts)
    parts.append(_pitfall_table(report))
    parts.append(_implementation(report))
    parts.append(_tests(report))
    return Group(*parts)


def _hanging(prefix: str, text: str, style: str = "") -> Table:
    """``prefix`` and ``text``, every further line of the text, its own or the terminal's wrap,
    indented under its first. The text can come from the student's code (an exception's message,
    an assertion's, a test's id), and a line of its own at the margin could pass for one of the
    report's ("Tests: PASS")."""
    grid = Table.grid()
    grid.add_column(no_wrap=True)
    grid.add_column()
    grid.add_row(Text(prefix, style=style), Text(text, style=style))
    return grid


def _headline(report: Report) -> Text:
    seconds = report.timing.get("total")
    took = f", {seconds:.1f} s" if seconds is not None else ""
    text = Text(f"Chapter {report.chapter}: ")
    text.append(report.verdict.value.upper(), style=STYLE[report.verdict.value])
    pool = f"mutant pool {report.pool_version[:12]}, " if report.pool_version else ""  # none read before an error
    text.append(f"   ({pool}sandbox {report.backend}{took})")
    return text


def _pitfall_table(report: Report) -> Table:
    table = Table(title="Pitfalls", title_justify="left", expand=True)
    table.add_column("id", no_wrap=True)
    table.add_column("pitfall")
    table.add_column("your implementation")
    table.add_column("your tests")
    implementation = report.implementation
    mutants = {m.id: m for m in report.tests.mutants} if report.tests else {}
    failing = implementation is not None and implementation.verdict is not Verdict.PASS
    stopped = {test.name: why for test in implementation.tests if (why := _stopped(test.name, test.message))} \
        if failing else {}
    failed = {test.name for test in implementation.tests if test.outcome == "failed"} if failing else set()
    for pitfall in report.pitfalls:
        falls_in = implementation is not None and pitfall.id in implementation.behaves_like
        impl_cell = (Text(f"falls in: {pitfall.symptom}", style="red") if falls_in
                     # the test that would show it stopped at an exception of the module's: an unwritten
                     # method read as "no sign of it" (round 27)
                     else Text(f"not checked: {stopped[pitfall.caught_by]}", style="dim", overflow="fold")
                     if pitfall.caught_by in stopped
                     # its own course test failed an assertion: "no sign of it" beside that was read as
                     # a contradiction (honest students, round 30: scores those of s02, another proj)
                     else Text(f"its course test failed ({pitfall.caught_by})", style="yellow", overflow="fold")
                     if pitfall.caught_by in failed
                     # wrong, but the probes showed nothing of this pitfall: it may still be in it beside
                     # another bug ("not recognised" read as "your file was not recognised": round 26)
                     else Text("no sign of it", style="dim") if failing
                     else Text("ok"))
        # Text(), never a bare str: rich would read "[h ; c]" (or a hostile message) as markup
        table.add_row(Text(pitfall.id), Text(pitfall.pitfall), impl_cell, _tests_cell(mutants.get(pitfall.id), report))
    return table


def _failed_alike(validity) -> dict[tuple[str, str | None], list[str]]:
    """The correct implementations that did not pass, by outcome and test: fourteen variants
    failing one test took fourteen lines (red team, round 28)."""
    alike: dict[tuple[str, str | None], list[str]] = {}
    for run in validity:
        if run.outcome != "passed":
            alike.setdefault((run.outcome, run.failed_test), []).append(run.implementation)
    return alike


def _runs_label(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 3 else f"{', '.join(names[:2])} and {len(names) - 2} more runs"


def _stopped(test: str, message: str) -> str | None:
    """Why a failed test checked nothing, from its message: the module did not import, or it
    raised an exception that is no assertion's (pytest's message reads "luong.py:100:
    NotImplementedError: attentional: TODO")."""
    if message.startswith(IMPORT_FAILED):
        return "the module failed to import"
    match = RAISED.match(message)
    return f"{test} raised {match[1]}" if match and match[1] != "AssertionError" else None


def _tests_cell(mutant, report: Report) -> Text:
    if report.tests is None:
        return Text("no tests submitted", style="dim")
    if mutant is None:
        why = "tests not graded" if report.tests.verdict is TestsVerdict.ERROR else "tests invalid"
        return Text(f"not run ({why})", style="dim")
    if mutant.outcome.is_killed:
        if report.tests.verdict is TestsVerdict.INVALID:  # a kill by an invalid suite proves nothing
            return Text("killed, not counted (tests invalid)", style="dim")
        if mutant.killed_by:
            # the test, without its file, and whole: a parametrized id is often wider than the column
            return Text(f"caught by {mutant.killed_by.rpartition('::')[2]}", overflow="fold")
        return Text(f"caught ({mutant.outcome.value})")
    return Text("MISSED", style="bold red")


def _implementation(report: Report) -> Group:
    impl = report.implementation
    head = Text("Implementation: ")
    head.append(impl.verdict.value.upper(), style=STYLE[impl.verdict.value])
    table = course_test_table(impl.tests)
    compared = probes_compared(impl.probe_disagreements)  # not a run that timed out
    probes = Text("Trusted probes: " + ("agree with the reference" if impl.probes_agree else
                                        "disagree" if compared else "no answer to compare"))
    shown, more = impl.probe_disagreements[:MAX_PROBE_LINES], len(impl.probe_disagreements) - MAX_PROBE_LINES
    lines = [head, table, probes] + [_hanging("  - ", d, style="red") for d in shown]
    if more > 0:
        lines.append(_hanging("  - ", f"and {more} more like them: the report in JSON (--format json) or HTML has "
                              "every one", style="red"))
    legend = probe_legend(shown)
    if legend:
        lines.append(_hanging("  Reading them: ", legend, style="yellow"))
    if compared and all(test.outcome == "passed" for test in impl.tests):
        lines.append(_hanging("  ", "Every course test passes, but the probes check more than they do (other widths, "
                              "lengths and batches, both dtypes, a decoder's repeated reads, a module built from an "
                              "rng and never loaded, inputs that need no gradient, scores far from zero, the "
                              "contract's edge cases): the lines above say where your module differs from the "
                              "reference.", style="yellow"))
    return Group(*lines)


def probe_legend(lines: Sequence[str]) -> str:
    """What the names in the probes' ``lines`` mean, and nothing they do not name: none for lines
    that name no read (a module that raised at once, a run that timed out)."""
    if not any(NAMES_READS.search(line) for line in lines):
        return ""
    text = " ".join(lines)
    outputs = bool(OUTPUTS_NAMED.search(text))  # else only the reads an exception came from
    reads = [words for prefixes, words in READ_LEGEND if any(prefix in text for prefix in prefixes)
             and (outputs or prefixes != (FIRST_READ,))]  # "in the first read" needs no legend
    parts = [LEGEND_OPENING if outputs else "", "The reads: " + "; ".join(reads) + "." if reads else "",
             OUTPUTS_LEGEND if outputs else "", EXACT_LEGEND if "exactly 0" in text else "",
             EXTREME_LEGEND if "e+3" in text else ""]
    return " ".join(part for part in parts if part)


def course_test_table(tests, *, title: str | None = None) -> Table:
    """One row per course test: its name, outcome and the first line of its message."""
    table = Table(title=title, title_justify="left", expand=True)
    table.add_column("course test", no_wrap=True)
    table.add_column("outcome", no_wrap=True)
    table.add_column("message")
    for test in tests:
        style = "green" if test.outcome == "passed" else "red"
        # Text(), never a bare str: rich would read brackets in a message as markup
        table.add_row(Text(test.name), Text(test.outcome, style=style), Text(headline(test.message)))
    return table


def _tests(report: Report) -> Text | Group:
    tests = report.tests
    if tests is None:
        return Text("Tests: none submitted")
    head = Text("Tests: ")
    head.append(tests.verdict.value.upper(), style=STYLE[tests.verdict.value])
    if tests.verdict is TestsVerdict.ERROR:  # "score 0.00 (0/0 mutants killed)" read as a grade (round 26)
        return Text.assemble(head, "   not graded: the error at the top says why")
    if tests.verdict is TestsVerdict.INVALID:  # their kills prove nothing, so no score (round 27)
        head.append("   not scored: a test fails on a correct implementation (below)")
    else:
        head.append(f"   score {tests.score:.2f} ({tests.killed}/{tests.total} mutants killed); {tests.bar}")
        if tests.verdict is TestsVerdict.FAIL and tests.score >= tests.threshold and tests.pitfalls_missed:
            head.append("; the score is enough, the pitfalls missed are not (below)")  # 0.80 read as short (round 28)
    lines: list = [head]
    # the correct implementations they passed on in one line (some twenty-five runs: the variants, the
    # decoys among them, and the runs alone), counted when that is all of them (a list of names a
    # student meets nowhere else: red team, round 24), each they did not pass on in a line of its own
    passed = [run.implementation for run in tests.validity if run.outcome == "passed"]
    if passed and len(passed) == len(tests.validity):
        lines.append(Text(f"  passed on every correct implementation: {len(passed)} runs, on the reference and the "
                          "grader's variants, among the mutants and alone"))
    elif passed:
        lines.append(_hanging("  passed on: ", ", ".join(passed)))
    lines += [_hanging(f"  {_runs_label(names)}: {outcome}", f" ({failed_test})" if failed_test else "")
              for (outcome, failed_test), names in _failed_alike(tests.validity).items()]
    yours = tests.on_your_implementation
    if yours is not None:
        failed = f" ({yours.failed_test})" if yours.failed_test else ""
        said = f": {headline(yours.message)}" if yours.message else ""
        # a failure here read as what sank the grade (round 26): it is there to explain the others
        counts = "; this run counts for nothing, it shows what your tests say" if yours.outcome != "passed" else ""
        lines.append(_hanging(f"  on {yours.implementation}: ", f"{yours.outcome}{failed}{said}{counts}"))
    slow = _slow_suite(report)
    if slow:
        lines.append(_hanging("  slow: ", slow, style="yellow"))
    if tests.invalid_reason:
        lines.append(_hanging("  invalid: ", tests.invalid_reason, style="red"))
    if tests.pitfalls_missed and tests.verdict in (TestsVerdict.PASS, TestsVerdict.FAIL):  # else none was run
        lines.append(Text(f"  pitfalls missed: {', '.join(tests.pitfalls_missed)}", style="red"))
        described = {pitfall.id: pitfall for pitfall in report.pitfalls}
        lines += [_hanging(f"    {pitfall_id}: ", described[pitfall_id].when_missed, style="red")
                  for pitfall_id in tests.pitfalls_missed if pitfall_id in described]
    survivors = [m for m in tests.mutants if not m.outcome.is_killed and not m.pitfall]
    if survivors:
        lines.append(Text(f"  pool mutants that survived ({len(survivors)}), by where they change the module:"))
        lines.append(_hanging("  ", SURVIVORS_HINT, style="yellow"))
        hints = tests.place_hints
        for where, ids in survivors_by_place(survivors).items():
            lines.append(_hanging("    ", f"in {where} ({len(ids)}): {', '.join(ids)}"))
            if where in hints:
                lines.append(_hanging("      ", hints[where], style="yellow"))
    return Group(*lines)


def _slow_suite(report: Report) -> str:
    """Why the grade took long, when the student's tests did: a suite that took 203 s to grade
    was told nothing of it (red team, round 28). Timed by their run on the student's own luong.py."""
    took, total = report.timing.get("yours"), report.timing.get("total")
    if took is None or total is None or took < SLOW_SUITE_SECONDS:
        return ""
    return (f"your tests took {took:.1f} s on your luong.py; they run to their first failure on each of the "
            f"{report.tests.total} mutants and whole in {len(report.tests.validity)} runs of correct implementations, "
            f"so this grade took {total:.0f} s. Smaller inputs and fewer sizes or repetitions keep the same checks "
            "and grade in seconds.")
