"""The instructor's oracle tests for L4.3: a student-style suite, graded like a student's.

The oracle is the chapter's formula in float64 numpy, fed the module's own weights read back
through ``state_dict()``: the three scores, the masked softmax, the context and the attentional
state. Around it: the section 3 numbers, a finite-difference check of every gradient against the
numpy formula, an empty row, the parameter names and shapes, and the validation errors.

Only the contract modules are imported (tinyllm.seq2seq.luong, tinyllm.seq2seq.additive,
tinyllm.autograd.tensor), so the suite runs wherever a student's suite runs. It does not install
the implementation itself: the grader's runner installs each module under test as
``tinyllm.seq2seq.luong``. To run it by hand against one file, pass the course-test folder too,
whose conftest installs ``--luong FILE`` for the whole session:

    pytest reference/tests/L4.3 reference/oracle/L4.3 --luong FILE -p no:cacheprovider

and add ``--ignore=reference/tests/L4.3/test_luong.py`` to run only these tests (the folder is
still needed for its conftest). Running this folder alone does not work: nothing installs the
module. The grader runs the suite once per mutant and stops at the first failure, so the cheap,
sharp comparisons come first; the whole suite takes about 0.1 s on the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

from tinyllm.autograd.tensor import Tensor
from tinyllm.seq2seq.additive import length_mask
from tinyllm.seq2seq.luong import LuongAttention

SCORES = ("dot", "general", "concat")
D, S = 3, 4
LENGTHS = [4, 2, 0]  # a full row, a padded row, an empty row
EXACT = dict(rtol=1e-10, atol=1e-12)


# -- the numpy oracle -----------------------------------------------------------------------------


def oracle_scores(score: str, weights: dict, query: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """e[b, s] straight from the chapter's table (section 2.2), no caching, no shortcuts."""
    if score == "dot":
        return np.einsum("bd,bsd->bs", query, keys)
    if score == "general":
        return np.einsum("bd,bsd->bs", query, keys @ weights["score_proj.weight"].T)
    pairs = np.concatenate([np.broadcast_to(query[:, None, :], keys.shape), keys], axis=-1)  # [h ; k_s]
    hidden = np.tanh(pairs @ weights["score_proj.weight"].T)
    return hidden @ weights["v.weight"][0]


def oracle_cached_scores(score: str, weights: dict, query: np.ndarray, proj: np.ndarray) -> np.ndarray:
    """e[b, s] from a cached projection (section 2.3): h . proj_s, or v . tanh(W_h h + proj_s)."""
    if score != "concat":
        return np.einsum("bd,bsd->bs", query, proj)
    query_half = query @ weights["score_proj.weight"][:, :D].T
    return np.tanh(proj + query_half[:, None, :]) @ weights["v.weight"][0]


def oracle_softmax(raw: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Softmax over real positions; padding exactly 0; an all-padding row all 0."""
    masked = np.where(mask, raw, -np.inf)
    has_token = mask.any(axis=-1, keepdims=True)
    shifted = np.exp(masked - np.where(has_token, masked.max(axis=-1, keepdims=True), 0.0))
    return np.where(has_token, shifted / np.where(has_token, shifted.sum(-1, keepdims=True), 1.0), 0.0)


def oracle_read(score, weights, query, keys, mask, raw=None):
    """(scores, weights, context, attentional state); ``raw`` overrides the scores."""
    raw = oracle_scores(score, weights, query, keys) if raw is None else raw
    attn = oracle_softmax(raw, mask)
    context = np.einsum("bs,bsd->bd", attn, keys)
    state = np.tanh(np.concatenate([context, query], axis=-1) @ weights["combine.weight"].T)
    return raw, attn, context, state


# -- helpers --------------------------------------------------------------------------------------


def make_case(score: str, dtype=np.float64, seed: int = 0):
    """A module with random O(1) weights (so no tanh saturates) and inputs in ``dtype``."""
    rng = np.random.default_rng(seed)
    module = LuongAttention(D, score)
    module.to(dtype)
    state = {name: rng.normal(size=value.shape).astype(dtype) for name, value in module.state_dict().items()}
    module.load_state_dict(state)
    query = rng.normal(size=(len(LENGTHS), D)).astype(dtype)
    keys = rng.normal(size=(len(LENGTHS), S, D)).astype(dtype)
    return module, query, keys, length_mask(np.array(LENGTHS), S)


def weights_of(module) -> dict:
    return {name: np.asarray(value, dtype=np.float64) for name, value in module.state_dict().items()}


def run(module, query, keys, mask):
    """(scores, weights, context, attentional state) as the module computes them."""
    q, k = Tensor(query), Tensor(keys)
    context, attn = module(q, k, mask)
    return module.scores(q, k), attn, context, module.attentional(q, context)


def loss_probes(seed: int = 1):
    rng = np.random.default_rng(seed)
    b = len(LENGTHS)
    return rng.normal(size=(b, S)), rng.normal(size=(b, D)), rng.normal(size=(b, D))


def central_difference(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        saved = x[index]
        x[index] = saved + eps
        up = f()
        x[index] = saved - eps
        down = f()
        x[index] = saved
        grad[index] = (up - down) / (2 * eps)
    return grad


# -- the oracle comparison (first: it kills most faults in one cheap call) -------------------------


@pytest.mark.parametrize("score", SCORES)
def test_read_matches_the_formula(score):
    module, query, keys, mask = make_case(score)
    got = run(module, query, keys, mask)
    want = oracle_read(score, weights_of(module), query, keys, mask)
    for name, g, w in zip(("scores", "weights", "context", "attentional"), got, want):
        assert g.dtype == np.float64, name
        np.testing.assert_allclose(g.numpy(), w, **EXACT, err_msg=name)


@pytest.mark.parametrize("score", SCORES)
def test_float32_in_float32_out(score):
    module, query, keys, mask = make_case(score, dtype=np.float32)
    got = run(module, query, keys, mask)
    want = oracle_read(score, weights_of(module), query.astype(np.float64), keys.astype(np.float64), mask)
    for name, g, w in zip(("scores", "weights", "context", "attentional"), got, want):
        assert g.dtype == np.float32, name
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6, err_msg=name)


def test_section3_hand_example():
    module = LuongAttention(2, "dot")
    module.to(np.float64)
    eye = np.eye(2)
    module.load_state_dict({"combine.weight": np.concatenate([eye, eye], axis=1)})
    query = Tensor(np.array([[1.0, 0.0]]))
    keys = Tensor(np.array([[[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]]))
    mask = np.array([[True, True, False]])
    np.testing.assert_array_equal(module.scores(query, keys).numpy(), [[1.0, 0.0, 2.0]])
    context, attn = module(query, keys, mask)
    np.testing.assert_allclose(attn.numpy(), [[0.731059, 0.268941, 0.0]], atol=1e-6)
    assert attn.numpy()[0, 2] == 0.0
    np.testing.assert_allclose(context.numpy(), [[0.731059, 0.268941]], atol=1e-6)
    np.testing.assert_allclose(module.attentional(query, context).numpy(), [[0.939181, 0.262640]], atol=1e-6)
    module.load_state_dict({"combine.weight": np.concatenate([eye, 0 * eye], axis=1)})
    np.testing.assert_allclose(module.attentional(query, context).numpy(), np.tanh(context.numpy()), **EXACT)


@pytest.mark.parametrize("score", SCORES)
def test_cached_projection_gives_the_same_read(score):
    module, query, keys, mask = make_case(score)
    proj = module.project_keys(Tensor(keys))
    assert proj.shape == keys.shape
    if score == "concat":  # the cache is W_k k with W_k the key half: the last d columns
        np.testing.assert_allclose(proj.numpy(), keys @ weights_of(module)["score_proj.weight"][:, D:].T, **EXACT)
    q, k = Tensor(query), Tensor(keys)
    np.testing.assert_allclose(module.scores(q, k, proj).numpy(), module.scores(q, k).numpy(), **EXACT)
    context, attn = module(q, k, mask, proj=proj)
    want = oracle_read(score, weights_of(module), query, keys, mask)
    np.testing.assert_allclose(attn.numpy(), want[1], **EXACT)
    np.testing.assert_allclose(context.numpy(), want[2], **EXACT)


@pytest.mark.parametrize("score", SCORES)
def test_forward_scores_with_the_projection_it_is_given(score):
    module, query, keys, mask = make_case(score)
    proj = np.random.default_rng(2).normal(size=keys.shape)  # a cache unlike project_keys(keys)
    context, attn = module(Tensor(query), Tensor(keys), mask, proj=Tensor(proj))
    weights = weights_of(module)
    raw = oracle_cached_scores(score, weights, query, proj)
    _, want_attn, want_context, _ = oracle_read(score, weights, query, keys, mask, raw=raw)
    np.testing.assert_allclose(attn.numpy(), want_attn, **EXACT)
    np.testing.assert_allclose(context.numpy(), want_context, **EXACT)


# -- padding and the empty row --------------------------------------------------------------------


@pytest.mark.parametrize("score", SCORES)
def test_padding_is_exactly_zero_and_an_empty_row_reads_nothing(score):
    module, query, keys, mask = make_case(score)
    keys[~mask] = 1e3  # loud padding: any leak shows
    context, attn = module(Tensor(query), Tensor(keys), mask)
    a, c = attn.numpy(), context.numpy()
    assert np.all(a[~mask] == 0.0)
    np.testing.assert_allclose(a[mask.any(-1)].sum(-1), 1.0, **EXACT)
    assert np.all(a[2] == 0.0) and np.all(c[2] == 0.0)
    assert np.isfinite(a).all() and np.isfinite(c).all()


# -- gradients: the module's backward against central differences of the numpy formula ------------


@pytest.mark.parametrize("score", SCORES)
def test_gradients_match_finite_differences(score):
    module, query, keys, mask = make_case(score)
    probe_attn, probe_context, probe_state = loss_probes()
    q, k = Tensor(query.copy(), requires_grad=True), Tensor(keys.copy(), requires_grad=True)
    context, attn = module(q, k, mask)
    state = module.attentional(q, context)
    loss = (attn * Tensor(probe_attn)).sum() + (context * Tensor(probe_context)).sum()
    (loss + (state * Tensor(probe_state)).sum()).backward()

    weights = weights_of(module)

    def oracle_loss():
        _, a, c, h = oracle_read(score, weights, query, keys, mask)
        return (a * probe_attn).sum() + (c * probe_context).sum() + (h * probe_state).sum()

    tolerance = dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(k.grad, central_difference(oracle_loss, keys), **tolerance, err_msg="keys")
    np.testing.assert_allclose(q.grad, central_difference(oracle_loss, query), **tolerance, err_msg="query")
    for name, parameter in module.named_parameters():
        numeric = central_difference(oracle_loss, weights[name])
        np.testing.assert_allclose(parameter.grad, numeric, **tolerance, err_msg=name)
    assert np.all(k.grad[~mask] == 0.0), "padded keys must get exactly no gradient"


# -- the interface --------------------------------------------------------------------------------

EXPECTED_PARAMETERS = {
    "dot": [("combine.weight", (D, 2 * D))],
    "general": [("score_proj.weight", (D, D)), ("combine.weight", (D, 2 * D))],
    "concat": [("score_proj.weight", (D, 2 * D)), ("v.weight", (1, D)), ("combine.weight", (D, 2 * D))],
}


@pytest.mark.parametrize("score", SCORES)
def test_parameter_names_and_shapes(score):
    module = LuongAttention(D, score)
    got = [(name, tuple(p.shape)) for name, p in module.named_parameters()]
    assert got == EXPECTED_PARAMETERS[score]
    assert all(p.dtype == np.float32 for _, p in module.named_parameters())
    assert list(module.state_dict()) == [name for name, _ in EXPECTED_PARAMETERS[score]]
    assert LuongAttention.query_from == "current"


class SeededUniform:
    """A stand-in for the course generator (its ``uniform`` and ``normal``), seeded by the test."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._rng.uniform(low, high, size)

    def normal(self, mean=0.0, std=1.0, size=None):
        return self._rng.normal(mean, std, size)


@pytest.mark.parametrize("score", SCORES)
def test_the_given_rng_initialises_every_parameter(score):
    first = LuongAttention(D, score, rng=SeededUniform(1)).state_dict()
    again = LuongAttention(D, score, rng=SeededUniform(1)).state_dict()
    other = LuongAttention(D, score, rng=SeededUniform(2)).state_dict()
    for name in first:
        np.testing.assert_array_equal(first[name], again[name], err_msg=name)
        assert not np.array_equal(first[name], other[name]), f"{name} ignores the rng"


def test_default_initialised_layers_start_different():
    state = LuongAttention(D, "concat").state_dict()
    assert not np.array_equal(state["score_proj.weight"], state["combine.weight"])


@pytest.mark.parametrize("d", [0, -1, 2.5, True, "3"])
def test_width_must_be_a_positive_int(d):
    with pytest.raises(ValueError):
        LuongAttention(d, "dot")


def test_width_one_is_valid():
    module = LuongAttention(1, "general")
    context, attn = module(Tensor(np.ones((1, 1), np.float32)), Tensor(np.ones((1, 2, 1), np.float32)), np.ones((1, 2), bool))
    np.testing.assert_allclose(attn.numpy(), [[0.5, 0.5]])


def _bad_calls(module, query, keys, mask):
    """Each call is wrong in exactly one way the contract says must raise ValueError."""
    wide_query = Tensor(np.zeros((len(LENGTHS), D + 1)))
    wide_keys = Tensor(np.zeros((len(LENGTHS), S, D + 1)))
    return {
        "query width": lambda: module.scores(wide_query, keys),
        "query type": lambda: module.scores(query.numpy().tolist(), keys),
        "keys type": lambda: module.scores(query, keys.numpy().tolist()),
        "keys width": lambda: module.scores(query, wide_keys),
        "keys width in project_keys": lambda: module.project_keys(wide_keys),
        "mask shape": lambda: module(query, keys, mask[:, :-1]),
        "mask dtype": lambda: module(query, keys, mask.astype(np.int64)),
    }


@pytest.mark.parametrize("score", SCORES)
def test_bad_input_raises_value_error(score):
    module, query, keys, mask = make_case(score)
    for problem, call in _bad_calls(module, Tensor(query), Tensor(keys), mask).items():
        with pytest.raises(ValueError):
            call()
            pytest.fail(f"no ValueError for a wrong {problem}")


def test_unknown_score_raises_value_error_naming_it():
    with pytest.raises(ValueError, match="additive"):
        LuongAttention(D, "additive")
