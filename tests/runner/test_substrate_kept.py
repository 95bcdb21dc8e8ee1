"""A run of the student's luong.py must leave the substrate as it found it (runner/inside/substrate.py).

A correct luong.py that kept the substrate's softmax for itself and replaced ``F.softmax`` for
every other module with one at temperature 2 passed every course test and probe (red team,
round 29). The replacements here compute the same numbers, so only the check can fail them.
"""

from __future__ import annotations

import pytest

from grader import grading
from grader.mutants import load_catalogue
from grader.runner.results import Outcome

AT_IMPORT = b"""
_kept = F.softmax
F.softmax = lambda *args, **kwargs: _kept(*args, **kwargs)
"""
WHEN_BUILT = b"""
_built = LuongAttention.__init__


def _init(self, *args, **kwargs):
    from tinyllm.autograd import tensor
    kept = tensor.Tensor.__add__
    tensor.Tensor.__add__ = lambda self, other: kept(self, other)
    _built(self, *args, **kwargs)


LuongAttention.__init__ = _init
"""


@pytest.fixture(scope="module")
def probe_payload(chapter) -> bytes:
    return grading.reference_probes(chapter, load_catalogue(chapter), seed=3)[0]


def test_a_module_that_replaces_a_substrate_function_at_import_fails_every_course_test(runner_for, reference):
    results = runner_for(None).course_tests(reference + AT_IMPORT, timeout=10.0, budget=30.0)
    assert len(results) == 11
    assert all(test.outcome is Outcome.ERROR for test in results), results
    assert all("changed tinyllm.autograd.functional.softmax at import" in test.message for test in results)


def test_a_module_that_rewrites_a_substrate_class_while_it_runs_fails_the_probes(runner_for, reference,
                                                                                probe_payload):
    runner = runner_for(None)
    honest = runner.call(reference, "probe", probe_payload, timeout=60.0)
    assert honest.outcome is Outcome.PASSED, honest.message
    changed = runner.call(reference + WHEN_BUILT, "probe", probe_payload, timeout=60.0)
    assert changed.outcome is Outcome.ERROR and changed.output == b""
    assert "changed tinyllm.autograd.tensor.Tensor.__add__ while it ran" in changed.message, changed.message
