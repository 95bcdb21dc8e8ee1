"""An honest suite that kills every pitfall and 0.77 of the pool (red team, round 22), and the
test the conftest fails at random in the fast pass. oracle_helpers is the bundled example's
oracle file (tests/hostile/test_hostile_tests.py adds it): its helpers, none of its tests."""

from __future__ import annotations

import numpy as np
from oracle_helpers import HAND_H, HAND_K, HAND_MASK, hand_module, make_inputs, make_module, oracle_read
from tinyllm.autograd.tensor import Tensor


def test_y_s02():
    module = make_module(2, "general", 0)
    module.load_state_dict({**module.state_dict(), "score_proj.weight": np.array([[0.0, 1.0], [0.0, 0.0]])})
    h = Tensor(np.array([[1.0, 0.0]]))
    k = Tensor(np.array([[[0.0, 1.0], [1.0, 0.0]]]))
    np.testing.assert_allclose(module.scores(h, k).numpy(), [[1.0, 0.0]], atol=1e-6)


def test_y_s03_proj():
    _, k, _ = make_inputs(2, 3, 4, [3, 3], seed=3)
    concat = make_module(4, "concat", 3)
    w_a = concat.state_dict()["score_proj.weight"]
    np.testing.assert_allclose(concat.project_keys(Tensor(k)).numpy(), k @ w_a[:, 4:].T, atol=1e-6)


def test_y_s04_padzero():
    module = hand_module(np.hstack([np.eye(2), np.eye(2)]))
    _, weights = module(Tensor(HAND_H), Tensor(HAND_K), HAND_MASK)
    w = weights.numpy()
    assert w[0, 2] == 0.0
    np.testing.assert_allclose(w.sum(), 1.0, atol=1e-6)


def test_y_s05_empty():
    module = hand_module(np.hstack([np.eye(2), np.eye(2)]))
    _, weights = module(Tensor(HAND_H), Tensor(HAND_K), np.array([[False, False, False]]))
    np.testing.assert_array_equal(weights.numpy(), np.zeros((1, 3)))


def test_y_forward_context_dot():
    module = make_module(3, "dot", seed=3)
    h, k, mask = make_inputs(2, 4, 3, [4, 2], seed=3)
    _, _, c, _ = oracle_read("dot", module.state_dict(), h, k, mask)
    context, _ = module(Tensor(h), Tensor(k), mask)
    np.testing.assert_allclose(context.numpy(), c, atol=1e-6)


def test_y_attentional_concat():
    module = make_module(3, "concat", seed=3)
    h, k, mask = make_inputs(2, 4, 3, [4, 2], seed=3)
    _, _, c, h_tilde = oracle_read("concat", module.state_dict(), h, k, mask)
    np.testing.assert_allclose(module.attentional(Tensor(h), Tensor(c)).numpy(), h_tilde, atol=1e-6)


def test_zz_fake(faked_kill):
    assert not faked_kill
