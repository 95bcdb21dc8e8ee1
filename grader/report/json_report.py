"""The JSON report and its published schema (report.schema.json beside this file)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema

from grader.report.model import Report

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


@cache
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate(data: dict) -> None:
    """Raise jsonschema.ValidationError if ``data`` is not a report of the published schema."""
    jsonschema.validate(data, schema(), cls=jsonschema.Draft202012Validator)


def render_json(report: Report) -> str:
    data = report.to_dict()
    validate(data)  # never publish a report that breaks its own schema
    return json.dumps(data, indent=2, sort_keys=False) + "\n"
