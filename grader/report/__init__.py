"""Reports: one result model (model.py), rendered in each format by its own module."""

from grader.report.json_report import render_json
from grader.report.text import render_text

RENDERERS = {"text": render_text, "json": render_json}
