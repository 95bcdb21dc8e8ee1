"""Every report format by its name on the command line (`--format NAME`)."""

from grader.report.gradescope import render_gradescope
from grader.report.html import render_html
from grader.report.json_report import render_json
from grader.report.junit import render_junit
from grader.report.stryker import render_stryker
from grader.report.text import render_text

RENDERERS = {
    "text": render_text,
    "json": render_json,
    "gradescope": render_gradescope,
    "junit": render_junit,
    "stryker": render_stryker,
    "html": render_html,
}
