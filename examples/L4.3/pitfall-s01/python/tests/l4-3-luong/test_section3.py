"""The chapter's worked example (section 3) and the parameter names: my first tests for L4.3."""

from __future__ import annotations

import numpy as np

from tinyllm.autograd.tensor import Tensor
from tinyllm.seq2seq.luong import LuongAttention

H = Tensor(np.array([[1.0, 0.0]]))
KEYS = Tensor(np.array([[[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]]))
MASK = np.array([[True, True, False]])  # the third key is padding


def dot_attention(combine: np.ndarray) -> LuongAttention:
    module = LuongAttention(2, "dot").to(np.float64)
    module.load_state_dict({"combine.weight": combine})
    return module


def test_scores():
    module = dot_attention(np.hstack([np.eye(2), np.eye(2)]))
    np.testing.assert_allclose(module.scores(H, KEYS).numpy(), [[1.0, 0.0, 2.0]])


def test_weights_context_and_attentional_state():
    module = dot_attention(np.hstack([np.eye(2), np.eye(2)]))
    context, weights = module(H, KEYS, MASK)
    np.testing.assert_allclose(weights.numpy(), [[0.731059, 0.268941, 0.0]], atol=1e-6)
    np.testing.assert_allclose(context.numpy(), [[0.731059, 0.268941]], atol=1e-6)
    np.testing.assert_allclose(module.attentional(H, context).numpy(), [[0.939181, 0.262640]], atol=1e-6)


def test_context_is_the_first_half_of_the_combine_input():
    module = dot_attention(np.hstack([np.eye(2), np.zeros((2, 2))]))
    context, _ = module(H, KEYS, MASK)
    np.testing.assert_allclose(module.attentional(H, context).numpy(), np.tanh([[0.731059, 0.268941]]), atol=1e-6)


def test_parameter_names():
    names = {score: [name for name, _ in LuongAttention(3, score).named_parameters()]
             for score in ("dot", "general", "concat")}
    assert names == {
        "dot": ["combine.weight"],
        "general": ["score_proj.weight", "combine.weight"],
        "concat": ["score_proj.weight", "v.weight", "combine.weight"],
    }
