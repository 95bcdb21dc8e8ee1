"""Settings come from GRADER_* variables, with clear errors for unusable values."""

from __future__ import annotations

import pytest

from grader.settings import Settings, SettingsError


def test_defaults_without_variables():
    assert Settings.from_env({}) == Settings()


def test_variables_override_defaults_with_their_types():
    settings = Settings.from_env({"GRADER_WALL_SECONDS": "60", "GRADER_PROCESSES": "8", "GRADER_WORKERS": "1"})
    assert (settings.wall_seconds, settings.processes, settings.workers) == (60.0, 8, 1)
    limits = settings.limits()
    assert (limits.wall_seconds, limits.processes) == (60.0, 8)


@pytest.mark.parametrize(("name", "value", "message"), [
    ("GRADER_PROCESSES", "eight", "GRADER_PROCESSES='eight' is not a whole number"),
    ("GRADER_PROBE_TIMEOUT", "-1", "GRADER_PROBE_TIMEOUT must be positive"),
])
def test_unusable_values_are_refused_by_name(name, value, message):
    with pytest.raises(SettingsError, match=message):
        Settings.from_env({name: value})
