"""The HTML page from real grades, opened in headless Chromium: the web component draws every mutant.

The component renders into nested shadow roots, which ``--dump-dom`` does not print, so the page
(opened with ``?summary``) copies the drawn mutants' statuses into an attribute of <body>.
Screenshots are kept in test-artifacts/ for a person to look at.
"""

from __future__ import annotations

import html
import json
import re

import pytest

from grader.report.html import render_html
from grader.report.model import Report
from grader.report.stryker import mutation_report
from tests.reports.conftest import ARTIFACTS

pytestmark = pytest.mark.slow
RENDERED = re.compile(r'data-rendered-mutants="([^"]*)"')
VIRTUAL_TIME = "--virtual-time-budget=20000"


def write_page(report: Report, name: str):
    ARTIFACTS.mkdir(exist_ok=True)
    page = ARTIFACTS / f"{name}.html"
    page.write_text(render_html(report), encoding="utf-8")
    return page


def rendered_statuses(open_page, page) -> dict[str, str]:
    dom = open_page(f"{page.as_uri()}?summary", VIRTUAL_TIME, "--dump-dom")
    match = RENDERED.search(dom)
    assert match, "the page never reported its rendered mutants"
    return json.loads(html.unescape(match.group(1)))


def expected_statuses(report: Report) -> dict[str, str]:
    ((file,),) = [list(mutation_report(report)["files"].values())]
    return {m["id"]: m["status"] for m in file["mutants"]}


@pytest.mark.parametrize("which", ["passing", "pitfall"])
def test_the_page_draws_every_mutant_with_its_status(which, request, open_page):
    report = request.getfixturevalue(f"{which}_report")
    page = write_page(report, f"report-{which}")
    drawn = rendered_statuses(open_page, page)
    assert drawn == expected_statuses(report)
    assert {"Killed"} <= set(drawn.values())
    screenshot = ARTIFACTS / f"report-{which}.png"
    open_page(page.as_uri(), VIRTUAL_TIME, "--window-size=1280,1400", f"--screenshot={screenshot}")
    assert screenshot.stat().st_size > 20_000  # a drawn page, not a blank one


def test_the_page_is_self_contained_and_hides_the_reference_until_it_passes(passing_report, pitfall_report, chapter):
    reference_line = "return F.tanh(self.combine(F.cat([context, query], axis=-1)))"
    hidden, shown = render_html(pitfall_report), render_html(passing_report)
    assert reference_line not in hidden and "reference luong.py is hidden" in hidden
    # and why, as the other formats say it (round 17: the page never said)
    assert "<li>course test test_hand_example_attentional_order: failed" in hidden
    assert "<li>trusted probes: " in hidden
    assert reference_line in shown and "is hidden" not in shown
    for page in (hidden, shown):
        assert "<script src" not in page and "http://" not in page.split("<script>")[0]
