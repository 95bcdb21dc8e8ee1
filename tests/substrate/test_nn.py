"""Module bookkeeping (names, order, checkpoints, dtype) and Linear's initialisation."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest

from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module, Parameter
from tinyllm.random import PCG32


class Block(Module):
    """A parameter, a submodule, then another parameter: order must survive the mix."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = Parameter(np.ones(3, np.float32))
        self.inner = Linear(3, 2, rng=PCG32(1))
        self.shift = Parameter(np.zeros(2, np.float32))

    def forward(self, x: Tensor) -> Tensor:
        return self.inner(x * self.scale) + self.shift


def test_parameter_requires_grad():
    assert Parameter([1.0]).requires_grad


def test_named_parameters_are_dotted_and_in_registration_order():
    block = Block()
    assert [name for name, _ in block.named_parameters()] == ["scale", "inner.weight", "inner.bias", "shift"]
    assert block.parameters() == [p for _, p in block.named_parameters()]


def test_a_shared_parameter_is_listed_once():
    block = Block()
    block.again = block.scale
    assert [name for name, _ in block.named_parameters()] == ["scale", "inner.weight", "inner.bias", "shift"]


def test_assigning_a_non_parameter_unregisters_the_name():
    block = Block()
    block.shift = None
    del block.inner
    assert [name for name, _ in block.named_parameters()] == ["scale"]


def test_forgetting_super_init_is_a_clear_error():
    class Broken(Module):
        def __init__(self) -> None:
            self.weight = Parameter([1.0])

    with pytest.raises(AttributeError, match="super"):
        Broken()


def test_plain_attributes_may_come_before_super_init():
    class Scaled(Module):
        def __init__(self) -> None:
            self.factor = 2.0
            super().__init__()
            self.weight = Parameter([1.0])

    assert [name for name, _ in Scaled().named_parameters()] == ["weight"]


def test_call_runs_forward():
    block = Block()
    x = Tensor(np.ones((4, 3), np.float32))
    np.testing.assert_array_equal(block(x).data, block.forward(x).data)
    with pytest.raises(NotImplementedError):
        Module()(x)


def test_state_dict_is_an_ordered_dict_of_copies():
    block = Block()
    state = block.state_dict()
    assert isinstance(state, OrderedDict)
    assert list(state) == ["scale", "inner.weight", "inner.bias", "shift"]
    state["scale"][:] = 7.0
    assert block.scale.data.tolist() == [1.0, 1.0, 1.0]


def test_load_state_dict_round_trips_and_casts_to_the_parameter_dtype():
    source, target = Block(), Block()
    state = {name: value.astype(np.float64) + 1 for name, value in source.state_dict().items()}
    result = target.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for name, value in target.state_dict().items():
        assert value.dtype == np.float32
        np.testing.assert_array_equal(value, state[name].astype(np.float32))
    state["shift"][:] = 9.0
    assert target.shift.data.tolist() == [1.0, 1.0]  # loading copied, did not alias


def test_load_state_dict_accepts_tensors():
    source, target = Block(), Block()
    source.inner.weight.data = source.inner.weight.data + 1
    target.load_state_dict(dict(source.named_parameters()))
    np.testing.assert_array_equal(target.inner.weight.data, source.inner.weight.data)
    assert target.inner.weight.data is not source.inner.weight.data


def test_load_state_dict_strict_names_missing_and_unexpected_keys():
    block = Block()
    state = block.state_dict()
    del state["inner.bias"]
    state["inner.gain"] = np.ones(2)
    with pytest.raises(KeyError, match=r"missing keys \['inner.bias'\], unexpected keys \['inner.gain'\]"):
        block.load_state_dict(state)


def test_load_state_dict_non_strict_reports_what_it_skipped():
    block = Block()
    state = {"shift": np.full(2, 5.0), "extra": np.ones(1)}
    result = block.load_state_dict(state, strict=False)
    assert result.missing_keys == ["scale", "inner.weight", "inner.bias"]
    assert result.unexpected_keys == ["extra"]
    assert block.shift.data.tolist() == [5.0, 5.0]


@pytest.mark.parametrize("strict", [True, False])
def test_a_shape_mismatch_always_raises_and_loads_nothing(strict):
    block = Block()
    state = {name: value + 1 for name, value in block.state_dict().items()}
    state["inner.weight"] = state["inner.weight"].T
    before = block.state_dict()
    with pytest.raises(ValueError, match=r"inner.weight: checkpoint \(3, 2\), module \(2, 3\)"):
        block.load_state_dict(state, strict=strict)
    for name, value in block.state_dict().items():
        np.testing.assert_array_equal(value, before[name])


def test_zero_grad_clears_every_gradient():
    block = Block()
    block(Tensor(np.ones((1, 3), np.float32))).sum().backward()
    assert all(p.grad is not None for p in block.parameters())
    block.zero_grad()
    assert all(p.grad is None for p in block.parameters())


def test_to_casts_parameters_and_gradients_in_place():
    block = Block()
    block(Tensor(np.ones((1, 3), np.float32))).sum().backward()
    assert block.to(np.float64) is block
    assert all(p.dtype == np.float64 and p.grad.dtype == np.float64 for p in block.parameters())
    assert block(Tensor(np.ones((1, 3)))).dtype == np.float64
    with pytest.raises(TypeError, match="float32 or np.float64"):
        block.to(np.int32)


def test_linear_shapes_dtype_and_range():
    layer = Linear(16, 5)
    assert layer.weight.shape == (5, 16) and layer.bias.shape == (5,)
    assert layer.weight.dtype == np.float32 and layer.bias.dtype == np.float32
    bound = 1 / math.sqrt(16)
    for p in layer.parameters():
        assert np.all(np.abs(p.data) <= bound)
    assert layer.weight.data.std() > bound / 3  # spread over the range, not collapsed


def test_linear_draws_weight_then_bias_from_the_generator():
    bound = 1 / math.sqrt(3)
    expected = PCG32(5, 2)
    layer = Linear(3, 4, rng=PCG32(5, 2))
    np.testing.assert_array_equal(layer.weight.data, expected.uniform(-bound, bound, size=(4, 3)).astype(np.float32))
    np.testing.assert_array_equal(layer.bias.data, expected.uniform(-bound, bound, size=4).astype(np.float32))


def test_linear_default_init_is_deterministic_and_a_shared_rng_varies_layers():
    np.testing.assert_array_equal(Linear(4, 4).weight.data, Linear(4, 4).weight.data)
    rng = PCG32(3)
    assert not np.array_equal(Linear(4, 4, rng=rng).weight.data, Linear(4, 4, rng=rng).weight.data)


def test_linear_without_bias():
    layer = Linear(3, 2, bias=False)
    assert layer.bias is None
    assert [name for name, _ in layer.named_parameters()] == ["weight"]
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(layer(Tensor(x)).data, x @ layer.weight.data.T)


@pytest.mark.parametrize("features", [(0, 2), (2, -1), (2.0, 3), (True, 3)])
def test_linear_refuses_bad_sizes(features):
    with pytest.raises(ValueError, match="positive int"):
        Linear(*features)
