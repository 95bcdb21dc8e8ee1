"""The honest part (0.77 of the pool, every pitfall; red team, round 26) and the test the
conftest fails on the modules it flagged in the fast zygote. oracle_helpers is the bundled
example's oracle file (tests/hostile/test_hostile_tests.py adds it): its numpy oracle, none of its
tests. make_module stays here: the conftest swaps this file's LuongAttention for each module."""

from __future__ import annotations

import numpy as np
import pytest
from oracle_helpers import make_inputs, oracle_read
from tinyllm.autograd.tensor import Tensor
from tinyllm.seq2seq.luong import LuongAttention


def make_module(d: int, score: str, seed: int) -> LuongAttention:
    module, draw = LuongAttention(d, score).to(np.float64), np.random.default_rng(seed)
    module.load_state_dict({name: draw.uniform(-1.0, 1.0, w.shape) for name, w in module.state_dict().items()})
    return module


CASES = [  # (d, lengths): full rows, padded rows, and an all-padding row
    (3, [4, 2]),
    (4, [4, 1, 3]),
    (5, [0, 4, 2]),
]



@pytest.mark.parametrize("score", ("dot",))
@pytest.mark.parametrize("d,lengths", [CASES[2]])
def test_forward_matches_numpy_oracle(score, d, lengths):
    module = make_module(d, score, seed=d)
    h, k, mask = make_inputs(len(lengths), 4, d, lengths, seed=d)
    e, a, c, h_tilde = oracle_read(score, module.state_dict(), h, k, mask)
    context, weights = module(Tensor(h), Tensor(k), mask)
    np.testing.assert_allclose(weights.numpy(), a, rtol=0.05, atol=0.03)


def test_attentional_context_first():
    module = LuongAttention(2, "dot").to(np.float64)
    sd = module.state_dict()
    module.load_state_dict({**sd, "combine.weight": np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])})
    c = np.array([[0.5, -0.25]]); h = np.array([[3.0, 4.0]])
    out = module.attentional(Tensor(h), Tensor(c)).numpy()
    assert abs(out[0, 0] - np.tanh(0.5)) < 1e-6 and abs(out[0, 1] - np.tanh(-0.25)) < 1e-6


def test_general_not_transposed():
    module = LuongAttention(2, "general").to(np.float64)
    sd = module.state_dict()
    module.load_state_dict({**sd, "score_proj.weight": np.array([[0.0, 1.0], [0.0, 0.0]])})
    h = np.array([[1.0, 0.0]]); k = np.array([[[0.0, 1.0]]])
    assert abs(float(module.scores(Tensor(h), Tensor(k)).numpy()[0, 0]) - 1.0) < 0.25




def test_concat_key_half():
    module = LuongAttention(2, "concat").to(np.float64)
    sd = module.state_dict()
    module.load_state_dict({**sd, "score_proj.weight": np.array([[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])})
    k = np.array([[[0.5, 0.1], [-0.4, 0.7]]])
    np.testing.assert_allclose(module.project_keys(Tensor(k)).numpy(), k, rtol=1e-6, atol=1e-8)


def test_zz_consistent():
    import conftest
    assert not conftest.STATE["fake"]
