"""PCG32 reproduces O'Neill's reference generator and draws the distributions the course uses."""

from __future__ import annotations

import numpy as np
import pytest

from tinyllm.random import PCG32

# pcg32-demo.c (pcg-random.org) seeded with pcg32_srandom_r(&rng, 42u, 54u).
DEMO_OUTPUTS = [0xA15C02B7, 0x7B47F409, 0xBA1D3330, 0x83D2F293, 0xBFA4784B, 0xCBED606E]


def test_reproduces_the_published_demo_values():
    rng = PCG32(42, 54)
    assert [rng.next_u32() for _ in DEMO_OUTPUTS] == DEMO_OUTPUTS


def test_uniform_is_the_32_bit_output_scaled_to_the_interval():
    assert PCG32(42, 54).uniform() == DEMO_OUTPUTS[0] / 2**32
    assert PCG32(42, 54).uniform(-1.0, 3.0) == -1.0 + 4.0 * DEMO_OUTPUTS[0] / 2**32


def test_a_seed_and_stream_fix_the_sequence():
    assert PCG32().uniform(size=5).tolist() == PCG32(11, 0).uniform(size=5).tolist()
    assert PCG32(11).next_u32() != PCG32(12).next_u32()
    assert PCG32(11, 0).next_u32() != PCG32(11, 1).next_u32()


def test_uniform_shapes_and_range():
    draws = PCG32().uniform(-2.0, 2.0, size=(50, 40))
    assert draws.shape == (50, 40) and draws.dtype == np.float64
    assert draws.min() >= -2.0 and draws.max() < 2.0
    assert abs(draws.mean()) < 0.05
    assert isinstance(PCG32().uniform(), float)


def test_an_array_draw_equals_the_same_number_of_single_draws():
    one_by_one = PCG32(7)
    singles = [one_by_one.uniform() for _ in range(6)]
    assert PCG32(7).uniform(size=(2, 3)).ravel().tolist() == singles


def test_normal_has_the_requested_moments():
    draws = PCG32().normal(3.0, 2.0, size=20000)
    assert abs(draws.mean() - 3.0) < 0.05
    assert abs(draws.std() - 2.0) < 0.05
    assert isinstance(PCG32().normal(), float)


@pytest.mark.parametrize(
    "bad",
    [
        lambda: PCG32(-1),
        lambda: PCG32(1.5),
        lambda: PCG32(stream=-3),
        lambda: PCG32().uniform(1.0, 0.0),
        lambda: PCG32().normal(0.0, -1.0),
        lambda: PCG32().uniform(size=(2, -1)),
        lambda: PCG32().uniform(size=2.0),
    ],
)
def test_bad_arguments_raise_value_error(bad):
    with pytest.raises(ValueError):
        bad()


@pytest.mark.parametrize("seed, stream", [(42, 54), (11, 0), (2**63 + 5, 2**62), (0, 0)])
def test_array_draws_are_the_generator_outputs_in_order_and_leave_it_past_them(seed, stream):
    """Array draws are computed by jumping ahead in numpy; they must be next_u32's outputs, bit
    for bit, at every count around the doublings, and leave the state where single steps would."""
    for count in (0, 1, 2, 3, 63, 64, 65, 1000):
        drawn, stepped = PCG32(seed, stream), PCG32(seed, stream)
        outputs = drawn.uniform(size=count) * 2**32
        assert outputs.tolist() == [float(stepped.next_u32()) for _ in range(count)]
        assert drawn.next_u32() == stepped.next_u32()
