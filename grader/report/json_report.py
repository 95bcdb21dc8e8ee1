"""The JSON report and its published schema (report.schema.json beside this file)."""

from __future__ import annotations

import json

from grader.report.model import Report
from grader.report.schemas import validator


def validate(data: dict) -> None:
    """Raise jsonschema.ValidationError if ``data`` is not a report of the published schema."""
    validator("report.schema.json").validate(data)


def render_json(report: Report) -> str:
    data = report.to_dict()
    validate(data)  # never publish a report that breaks its own schema
    return json.dumps(data, indent=2, sort_keys=False) + "\n"
