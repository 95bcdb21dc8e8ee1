"""One self-contained HTML page: the Stryker mutation report in the mutation-testing-elements web component.

The component's browser bundle (3.9.0, vendored in assets/ with its licence) is inlined, so the
page works offline and can be mailed or uploaded as a single file. The page opens straight onto
the graded file, where each mutant is a dot coloured by its status. What it shows is exactly the
Stryker report (stryker.py), so the reference stays hidden until the submission passes.

Opened with ``?summary`` in its URL, the page also writes the rendered mutants' statuses, read
back out of the component's shadow DOM, into ``data-rendered-mutants`` on <body>: the tests read
that with a headless browser's ``--dump-dom``. Without the flag that script does nothing.
"""

from __future__ import annotations

import html
import json
from functools import cache
from pathlib import Path

from grader.report.model import Report, headline
from grader.report.stryker import STRYKER_STATUSES, mutation_report, source_shown, tests_short_of_the_bar

BUNDLE_PATH = Path(__file__).with_name("assets") / "mutation-test-elements.js"

# Walks every shadow root for the mutant dots the file view draws; polls until all are drawn.
SUMMARY_SCRIPT = """
if (new URLSearchParams(location.search).has("summary")) {
  const expected = Object.values(report.files).reduce((n, f) => n + f.mutants.length, 0);
  const everywhere = (root, selector, found = []) => {
    found.push(...root.querySelectorAll(selector));
    root.querySelectorAll("*").forEach(el => { if (el.shadowRoot) everywhere(el.shadowRoot, selector, found); });
    return found;
  };
  const poll = tries => {
    // The file view draws only the statuses whose filter is ticked (Survived, by default): tick them all.
    everywhere(document, "[data-status] input[type=checkbox]").filter(box => !box.checked).forEach(box => {
      box.checked = true;
      box.dispatchEvent(new Event("input"));
    });
    const found = {};
    everywhere(document, "svg.mutant-dot[data-mutant-id]").forEach(dot => {
      found[dot.dataset.mutantId] = [...dot.classList].find(c => STATUSES.includes(c));
    });
    if (Object.keys(found).length >= expected || tries === 0) {
      document.body.dataset.renderedMutants = JSON.stringify(found);
    } else {
      setTimeout(() => poll(tries - 1), 100);
    }
  };
  customElements.whenDefined("mutation-test-report-app").then(() => poll(100));
}
"""


@cache
def _bundle() -> str:
    return BUNDLE_PATH.read_text(encoding="utf-8")


def render_html(report: Report) -> str:
    data = mutation_report(report)
    title = f"Mutation report, chapter {report.chapter}: {report.verdict.value}"
    first_file = next(iter(data["files"]), None)
    opening = f'if (!location.hash) location.hash = {_script_json("#mutant/" + first_file)};' if first_file else ""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>body {{ font-family: system-ui, sans-serif; margin: 0; }} .note {{ margin: 1em 2em; padding: .6em 1em;
background: #fff7d6; border: 1px solid #e0c060; }}</style>
</head>
<body>
{_note(report)}
<mutation-test-report-app title-postfix="{html.escape(report.chapter)}"></mutation-test-report-app>
<script>{opening}</script>
<script>{_bundle()}</script>
<script>
const report = {_script_json(data)};
document.querySelector("mutation-test-report-app").report = report;
const STATUSES = {_script_json(STRYKER_STATUSES)};
{SUMMARY_SCRIPT}
</script>
</body>
</html>
"""


def _note(report: Report) -> str:
    if report.error is not None:
        what = "submission" if report.implementation is None else "submission's tests"
        return f'<p class="note">This {what} could not be graded: {html.escape(report.error)}</p>'
    if not source_shown(report):
        return ('<div class="note"><p>The reference luong.py is hidden until your implementation passes the course '
                'tests and probes and your tests pass the bar: the mutants are shown at their places in a blank '
                f'file.</p>{_why_not(report)}</div>')
    return ""


def _why_not(report: Report) -> str:
    """What keeps the implementation from passing, as the text report says it: the page was the
    only format that never said (red team, round 17)."""
    implementation = report.implementation
    reasons = [f"course test {test.name}: {test.outcome}" + (f": {headline(test.message)}" if test.message else "")
               for test in implementation.failing_tests]
    reasons += [f"trusted probes: {line}" for line in implementation.probe_disagreements]
    short = tests_short_of_the_bar(report.tests)
    reasons += [short] if short is not None and not reasons else []
    return "<ul>" + "".join(f"<li>{html.escape(reason)}</li>" for reason in reasons) + "</ul>" if reasons else ""


def _script_json(value) -> str:
    """JSON that is safe inside a <script> element (no "</script>" or "<!--" can appear in it)."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
