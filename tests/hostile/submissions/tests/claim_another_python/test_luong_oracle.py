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


# ---- the forward pass against the oracle ---------------------------------------------------

@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("d,lengths", CASES)
def test_forward_matches_numpy_oracle(score, d, lengths):
    module = make_module(d, score, seed=d)
    h, k, mask = make_inputs(len(lengths), 4, d, lengths, seed=d)
    e, a, c, h_tilde = oracle_read(score, module.state_dict(), h, k, mask)

    np.testing.assert_allclose(module.scores(Tensor(h), Tensor(k)).numpy(), e, **TIGHT)
    context, weights = module(Tensor(h), Tensor(k), mask)
    np.testing.assert_allclose(weights.numpy(), a, **TIGHT)
    np.testing.assert_allclose(context.numpy(), c, **TIGHT)
    np.testing.assert_allclose(module.attentional(Tensor(h), context).numpy(), h_tilde, **TIGHT)


@pytest.mark.parametrize("score", SCORES)
def test_cached_keys_give_the_same_read(score):
    module = make_module(3, score, seed=7)
    h, k, mask = make_inputs(2, 5, 3, [5, 3], seed=7)
    proj = module.project_keys(Tensor(k))
    assert proj.shape == (2, 5, 3)
    e, a, c, _ = oracle_read(score, module.state_dict(), h, k, mask)
    np.testing.assert_allclose(module.scores(Tensor(h), Tensor(k), proj).numpy(), e, **TIGHT)
    context, weights = module(Tensor(h), Tensor(k), mask, proj=proj)
    np.testing.assert_allclose(weights.numpy(), a, **TIGHT)
    np.testing.assert_allclose(context.numpy(), c, **TIGHT)


def test_project_keys_per_score():
    """dot: the keys; general: W_a k; concat: the last d columns of W_a times k."""
    h, k, _ = make_inputs(2, 3, 4, [3, 3], seed=3)
    np.testing.assert_allclose(make_module(4, "dot", 1).project_keys(Tensor(k)).numpy(), k, **TIGHT)
    general = make_module(4, "general", 2)
    w_a = general.state_dict()["score_proj.weight"]
    np.testing.assert_allclose(general.project_keys(Tensor(k)).numpy(), k @ w_a.T, **TIGHT)
    concat = make_module(4, "concat", 3)
    w_a = concat.state_dict()["score_proj.weight"]
    np.testing.assert_allclose(concat.project_keys(Tensor(k)).numpy(), k @ w_a[:, 4:].T, **TIGHT)


def test_general_is_bilinear_not_transposed():
    module = make_module(2, "general", 0)
    module.load_state_dict({**module.state_dict(), "score_proj.weight": np.array([[0.0, 1.0], [0.0, 0.0]])})
    h = Tensor(np.array([[1.0, 0.0]]))
    k = Tensor(np.array([[[0.0, 1.0], [1.0, 0.0]]]))
    # h . (W_a k): only k_1 = (0, 1) reaches h's first coordinate through W_a[0, 1].
    np.testing.assert_array_equal(module.scores(h, k).numpy(), [[1.0, 0.0]])


def test_general_with_identity_is_dot():
    general, dot = make_module(3, "general", 4), make_module(3, "dot", 4)
    general.load_state_dict({**general.state_dict(), "score_proj.weight": np.eye(3)})
    h, k, mask = make_inputs(2, 4, 3, [4, 2], seed=4)
    np.testing.assert_allclose(general.scores(Tensor(h), Tensor(k)).numpy(),
                               dot.scores(Tensor(h), Tensor(k)).numpy(), **TIGHT)


def test_float32_stays_float32():
    module = LuongAttention(3, "concat")
    h, k, mask = make_inputs(2, 4, 3, [4, 2], seed=5)
    context, weights = module(Tensor(h.astype(np.float32)), Tensor(k.astype(np.float32)), mask)
    assert context.dtype == np.float32 and weights.dtype == np.float32
    assert module.attentional(Tensor(h.astype(np.float32)), context).dtype == np.float32


# ---- the chapter's section 3, by hand --------------------------------------------------------

HAND_H = np.array([[1.0, 0.0]])
HAND_K = np.array([[[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]])
HAND_MASK = np.array([[True, True, False]])


def hand_module(combine: np.ndarray) -> LuongAttention:
    module = LuongAttention(2, "dot").to(np.float64)
    module.load_state_dict({"combine.weight": combine})
    return module


def test_hand_example_scores_are_not_scaled():
    module = hand_module(np.hstack([np.eye(2), np.eye(2)]))
    np.testing.assert_array_equal(module.scores(Tensor(HAND_H), Tensor(HAND_K)).numpy(), [[1.0, 0.0, 2.0]])


def test_hand_example_read_and_attentional_state():
    module = hand_module(np.hstack([np.eye(2), np.eye(2)]))
    context, weights = module(Tensor(HAND_H), Tensor(HAND_K), HAND_MASK)
    np.testing.assert_allclose(weights.numpy(), [[0.731059, 0.268941, 0.0]], atol=1e-6)
    assert weights.numpy()[0, 2] == 0.0
    np.testing.assert_allclose(context.numpy(), [[0.731059, 0.268941]], atol=1e-6)
    h_tilde = module.attentional(Tensor(HAND_H), context)
    np.testing.assert_allclose(h_tilde.numpy(), [[0.939181, 0.262640]], atol=1e-6)


def test_hand_example_context_comes_first():
    module = hand_module(np.hstack([np.eye(2), np.zeros((2, 2))]))
    context, _ = module(Tensor(HAND_H), Tensor(HAND_K), HAND_MASK)
    h_tilde = module.attentional(Tensor(HAND_H), context)
    np.testing.assert_allclose(h_tilde.numpy(), np.tanh([[0.731059, 0.268941]]), atol=1e-6)


def test_attentional_state_is_bounded_by_tanh():
    module = hand_module(100.0 * np.hstack([np.eye(2), np.eye(2)]))
    context = Tensor(np.array([[0.5, -0.5]]))
    np.testing.assert_allclose(module.attentional(Tensor(HAND_H), context).numpy(), np.tanh([[150.0, -50.0]]))


# ---- padding and the empty row ----------------------------------------------------------------

@pytest.mark.parametrize("score", SCORES)
def test_empty_row_reads_nothing(score):
    module = make_module(3, score, seed=11)
    h, k, mask = make_inputs(2, 4, 3, [0, 3], seed=11)
    query, keys = Tensor(h, requires_grad=True), Tensor(k, requires_grad=True)
    context, weights = module(query, keys, mask)
    assert np.all(np.isfinite(weights.numpy())) and np.all(np.isfinite(context.numpy()))
    np.testing.assert_array_equal(weights.numpy()[0], np.zeros(4))
    np.testing.assert_array_equal(context.numpy()[0], np.zeros(3))
    np.testing.assert_allclose(weights.numpy()[1].sum(), 1.0, rtol=1e-12)
    (context.sum() + (weights * Tensor(np.arange(8.0).reshape(2, 4))).sum()).backward()
    np.testing.assert_array_equal(keys.grad[0], np.zeros((4, 3)))
    np.testing.assert_array_equal(query.grad[0], np.zeros(3))


@pytest.mark.parametrize("score", SCORES)
def test_padding_gets_exactly_zero_weight_and_no_gradient(score):
    module = make_module(3, score, seed=12)
    h, k, mask = make_inputs(2, 5, 3, [2, 4], seed=12)
    k[~mask] = 50.0  # huge padding keys would dominate any read that lets them in
    query, keys = Tensor(h, requires_grad=True), Tensor(k, requires_grad=True)
    context, weights = module(query, keys, mask)
    assert np.all(weights.numpy()[~mask] == 0.0)
    np.testing.assert_allclose(weights.numpy().sum(axis=-1), [1.0, 1.0], rtol=1e-12)
    (context.sum() + module.attentional(query, context).sum()).backward()
    assert np.all(keys.grad[~mask] == 0.0)


# ---- gradients by central differences -------------------------------------------------------

def loss_of(module, h, k, mask, up):
    context, weights = module(Tensor(h), Tensor(k), mask)
    h_tilde = module.attentional(Tensor(h), context)
    return float((context.numpy() * up[0]).sum() + (weights.numpy() * up[1]).sum() + (h_tilde.numpy() * up[2]).sum())


@pytest.mark.parametrize("score", SCORES)
def test_gradients_match_central_differences(score):
    d, lengths = 3, [4, 2, 0]
    module = make_module(d, score, seed=21)
    h, k, mask = make_inputs(3, 4, d, lengths, seed=21)
    rng = np.random.default_rng(22)
    up = (rng.normal(size=(3, d)), rng.normal(size=(3, 4)), rng.normal(size=(3, d)))

    query, keys = Tensor(h, requires_grad=True), Tensor(k, requires_grad=True)
    context, weights = module(query, keys, mask)
    h_tilde = module.attentional(query, context)
    ((context * Tensor(up[0])).sum() + (weights * Tensor(up[1])).sum() + (h_tilde * Tensor(up[2])).sum()).backward()

    step = 1e-6
    for name, value, grad in (("keys", k, keys.grad), ("query", h, query.grad)):
        numeric = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            plus, minus = value.copy(), value.copy()
            plus[index] += step
            minus[index] -= step
            args = (plus, k) if name == "query" else (h, plus)
            args_minus = (minus, k) if name == "query" else (h, minus)
            numeric[index] = (loss_of(module, *args, mask, up) - loss_of(module, *args_minus, mask, up)) / (2 * step)
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7, err_msg=f"gradient of {name}")

    state = module.state_dict()
    for name, parameter in module.named_parameters():
        numeric = np.zeros_like(state[name])
        for index in np.ndindex(numeric.shape):
            for sign in (1, -1):
                nudged = {**state, name: state[name].copy()}
                nudged[name][index] += sign * step
                module.load_state_dict(nudged)
                numeric[index] += sign * loss_of(module, h, k, mask, up) / (2 * step)
        module.load_state_dict(state)
        np.testing.assert_allclose(parameter.grad, numeric, rtol=1e-5, atol=1e-7, err_msg=f"gradient of {name}")


# ---- the interface ------------------------------------------------------------------------

def test_parameter_names_and_shapes():
    d = 4
    expected = {
        "dot": [("combine.weight", (d, 2 * d))],
        "general": [("score_proj.weight", (d, d)), ("combine.weight", (d, 2 * d))],
        "concat": [("score_proj.weight", (d, 2 * d)), ("v.weight", (1, d)), ("combine.weight", (d, 2 * d))],
    }
    for score, names in expected.items():
        module = LuongAttention(d, score)
        assert [(n, p.shape) for n, p in module.named_parameters()] == names
        assert list(module.state_dict()) == [n for n, _ in names]
    assert LuongAttention.query_from == "current"


def test_default_init_is_reproducible():
    a, b = LuongAttention(3, "concat"), LuongAttention(3, "concat")
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        np.testing.assert_array_equal(x, y, err_msg=name)


def test_output_shapes():
    module = LuongAttention(3, "general")
    h, k, mask = make_inputs(2, 5, 3, [5, 1], seed=30)
    context, weights = module(Tensor(h.astype(np.float32)), Tensor(k.astype(np.float32)), mask)
    assert context.shape == (2, 3) and weights.shape == (2, 5)


def test_width_one_works():
    module = LuongAttention(1, "dot").to(np.float64)
    module.load_state_dict({"combine.weight": np.array([[1.0, 1.0]])})
    context, weights = module(Tensor(np.array([[2.0]])), Tensor(np.array([[[1.0], [-1.0]]])), np.array([[True, True]]))
    np.testing.assert_allclose(weights.numpy(), [[1 / (1 + np.exp(-4.0)), 1 / (1 + np.exp(4.0))]])


@pytest.mark.parametrize("score", ["", "Dot", "additive", "scaled_dot"])
def test_unknown_score_is_refused(score):
    with pytest.raises(ValueError, match="score"):
        LuongAttention(3, score)


@pytest.mark.parametrize("score", SCORES)
def test_wrong_widths_are_refused(score):
    module = LuongAttention(3, score)
    good_h, good_k = Tensor(np.zeros((2, 3), np.float32)), Tensor(np.zeros((2, 4, 3), np.float32))
    mask = np.ones((2, 4), bool)
    with pytest.raises(ValueError):
        module(Tensor(np.zeros((2, 4), np.float32)), good_k, mask)
    with pytest.raises(ValueError):
        module(good_h, Tensor(np.zeros((2, 4, 2), np.float32)), mask)
    with pytest.raises(ValueError):
        module(good_h, Tensor(np.zeros((3, 4, 3), np.float32)), np.ones((3, 4), bool))
    with pytest.raises(ValueError):
        module.project_keys(Tensor(np.zeros((2, 4, 5), np.float32)))
    with pytest.raises(ValueError):
        module.attentional(good_h, Tensor(np.zeros((2, 4), np.float32)))
    context, _ = module(good_h, good_k, mask)
    assert context.shape == (2, 3)


@pytest.mark.parametrize("mask", [
    np.ones((2, 3), bool),  # wrong length
    np.ones((1, 4), bool),  # wrong batch
    np.ones((2, 4), np.int64),  # not bool
    np.ones((2, 4), np.float32),
])
def test_bad_masks_are_refused(mask):
    module = LuongAttention(3, "dot")
    with pytest.raises(ValueError, match="mask"):
        module(Tensor(np.zeros((2, 3), np.float32)), Tensor(np.zeros((2, 4, 3), np.float32)), mask)


# ---- what the constructor and the cache promise ------------------------------------------

class SeededUniform:
    """A stand-in for the course generator (tests may not import tinyllm.random): same draws per seed."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._rng.uniform(low, high, size)

    def normal(self, mean=0.0, std=1.0, size=None):
        return self._rng.normal(mean, std, size)


@pytest.mark.parametrize("score", SCORES)
def test_every_parameter_is_drawn_from_the_given_rng(score):
    first = LuongAttention(3, score, rng=SeededUniform(1)).state_dict()
    again = LuongAttention(3, score, rng=SeededUniform(1)).state_dict()
    other = LuongAttention(3, score, rng=SeededUniform(2)).state_dict()
    for name in first:
        np.testing.assert_array_equal(first[name], again[name], err_msg=name)
        assert not np.array_equal(first[name], other[name]), f"{name} ignores the rng"


@pytest.mark.parametrize("score", SCORES)
def test_forward_reads_with_the_cache_it_is_given(score):
    module = make_module(3, score, seed=9)
    h, k, mask = make_inputs(2, 4, 3, [4, 3], seed=9)
    cache = Tensor(np.random.default_rng(9).normal(size=k.shape))  # unlike project_keys(k)
    _, weights = module(Tensor(h), Tensor(k), mask, proj=cache)
    expected = oracle_weights(module.scores(Tensor(h), Tensor(k), cache).numpy(), mask)
    np.testing.assert_allclose(weights.numpy(), expected, **TIGHT)
    _, uncached = module(Tensor(h), Tensor(k), mask)
    assert not np.allclose(weights.numpy(), uncached.numpy())


@pytest.mark.parametrize("d", [0, -2, 2.5, True])
def test_bad_widths_are_refused_at_construction(d):
    with pytest.raises(ValueError):
        LuongAttention(d, "dot")
