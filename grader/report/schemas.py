"""JSON schemas the reports are checked against, each loaded and checked once."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema

HERE = Path(__file__).resolve().parent


@cache
def validator(relative_path: str) -> jsonschema.protocols.Validator:
    """The validator of the schema file at ``relative_path`` (from this folder), by its $schema."""
    schema = json.loads((HERE / relative_path).read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)
