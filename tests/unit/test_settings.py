"""Settings come from GRADER_* variables, with clear errors for unusable values."""

from __future__ import annotations

import pytest

from grader.runner.driver import FIRST_RUN_SECONDS
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


def test_a_run_alone_may_take_as_long_as_the_mutation_pass_lets_the_reference():
    """A suite the mutation pass accepts (its first run on the reference within FIRST_RUN_SECONDS)
    must not time out run alone, where it is collected as well: a 12 s suite was reported
    invalid because the runs alone had 10 s."""
    assert Settings().alone_timeout >= FIRST_RUN_SECONDS + 5.0
