"""The random numbers a student's tests draw without a seed, keyed per run by the driver.

A test that draws from numpy's or Python's global generator without seeding it (np.random.randn,
random.random), or makes a generator with no seed (np.random.default_rng()), would otherwise draw
in every child whatever the zygote held when it forked: the same numbers in every run of a grade,
other numbers in the next grade of the same files. A test failing one time in six so passed
every run of a grade (red team, round 28), and a regrade could fail it. Seeded per run, from the
submission's keyed seed and the run (driver.WarmRunner.draws_seed), such a test draws anew on
each correct implementation, the reference's second run included, so chance shows as an invalid
suite, and the same files draw the same numbers in every grade. A collection draws from one seed
in both zygotes, so that a test parametrized with drawn values has the same id everywhere.
"""

from __future__ import annotations

import random

import numpy as np
from numpy.random import bit_generator

SEED_BITS = 32  # np.random.seed takes no more


def route_fresh_generators() -> None:
    """Make a generator made without a seed (np.random.default_rng(), SeedSequence()) take its
    entropy from Python's global generator, which seed() sets. numpy looks the entropy function
    up by this name at each call; a numpy without it must fail here, loudly, not draw unseeded."""
    if not hasattr(bit_generator, "randbits"):
        raise RuntimeError("numpy.random.bit_generator.randbits is gone: unseeded generators cannot be keyed")
    bit_generator.randbits = random.getrandbits


def is_seed(value: object) -> bool:
    """Whether ``value`` can seed both generators (a request's or the config's, checked on arrival)."""
    return type(value) is int and 0 <= value < 1 << SEED_BITS


def seed(value: int) -> None:
    """Seed both global generators (and, through route_fresh_generators, every unseeded one)."""
    random.seed(value)
    np.random.seed(value)
