"""Finding where collected tests hold the placeholder's names (loader.rebinding_sites), against
what a student's objects can do to the search. The swap itself runs in real sandboxes
(tests/runner/test_driver.py); these are the search's own limits."""

from __future__ import annotations

import types

import pytest

from grader.runner.inside import loader


@pytest.fixture
def placeholder():
    """A placeholder bound under a package of its own, so the tests leave sys.modules as it was."""
    name = "rebinding_test_package.graded"
    package = types.ModuleType("rebinding_test_package")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(__import__("sys").modules, package.__name__, package)
        yield loader.install_placeholder(name, "/nowhere/graded.py")
        patch.delitem(__import__("sys").modules, name, raising=False)


def test_an_object_that_cannot_be_looked_into_is_passed_over(placeholder):
    """A holder whose ``__class__`` raises: the zygote died in the search, and the grade ended in
    an error that named no cause (red team, round 10)."""
    class Awkward:
        @property
        def __class__(self):
            raise RuntimeError("no")

    awkward = Awkward()
    awkward.held = placeholder.Thing
    plain = {"held": placeholder.Thing}
    real = types.ModuleType(placeholder.__name__)
    real.Thing = object()
    loader.rebind(placeholder, real, loader.rebinding_sites(placeholder))
    assert plain["held"] is real.Thing


def test_a_class_held_as_a_static_method_is_swapped(placeholder):
    class Holder:
        make = staticmethod(placeholder.Thing)

    real = types.ModuleType(placeholder.__name__)
    real.Thing = lambda: "built"
    loader.rebind(placeholder, real, loader.rebinding_sites(placeholder))
    assert Holder.make is real.Thing and Holder().make() == "built"


def test_more_names_than_are_looked_for_are_refused_at_once(placeholder):
    """The search compares each reference in the heap with each name: 400,000 names held a
    grade for two minutes before it ended in an error (red team, round 10)."""
    names = [getattr(placeholder, f"name{index}") for index in range(loader.MAX_STAND_INS + 1)]
    with pytest.raises(loader.TooManyNames, match="at most 10000"):
        loader.rebinding_sites(placeholder)
    assert names
