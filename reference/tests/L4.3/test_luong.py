"""The course tests of L4.3 (Luong attention): what the chapter's section 4 table checks.

They grade the reference, every submission, every mutant and every correct variant alike, so they
use only the contract API of ``tinyllm.seq2seq.luong``: weights are set through ``state_dict`` /
``load_state_dict`` / ``named_parameters``, never through private attributes, and error messages
are matched loosely. Each test loops over the scores itself, so the suite is exactly 11 tests.
"""

from __future__ import annotations

import numpy as np
import pytest

from tinyllm.autograd.tensor import Tensor
from tinyllm.seq2seq.luong import LuongAttention

SCORES = ("dot", "general", "concat")
DTYPES = (np.float32, np.float64)

# Section 3 of the chapter: d = 2, dot score, the third key is padding.
HAND_QUERY = [[1.0, 0.0]]
HAND_KEYS = [[[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]]
HAND_MASK = np.array([[True, True, False]])
EYE, ZERO = np.eye(2), np.zeros((2, 2))
HAND_WEIGHTS = [[0.731059, 0.268941, 0.0]]
HAND_CONTEXT = [[0.731059, 0.268941]]
SIX_DECIMALS = 1e-6


def tensor(values, dtype=np.float64) -> Tensor:
    return Tensor(np.array(values, dtype=dtype), requires_grad=True)


def attention(d: int, score: str, dtype=np.float64, weights: dict[str, np.ndarray] | None = None):
    """A module in ``dtype`` with the given weights by state_dict name; the rest as initialised."""
    module = LuongAttention(d, score).to(dtype)
    state = module.state_dict()
    state.update(weights or {})
    module.load_state_dict(state)
    return module


def random_weights(d: int, score: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Every parameter of ``score`` drawn in [-1, 1], larger than the default init on purpose."""
    shapes = {name: p.shape for name, p in LuongAttention(d, score).named_parameters()}
    return {name: rng.uniform(-1.0, 1.0, shape) for name, shape in shapes.items()}


def read_and_combine(module, query, keys, mask, upstream=None):
    """(context, weights, attentional, loss); the loss weights each output by an upstream grad."""
    context, weights = module(query, keys, mask)
    attentional = module.attentional(query, context)
    loss = None
    if upstream is not None:
        g_context, g_weights, g_attentional = upstream
        loss = (context * g_context).sum() + (weights * g_weights).sum() + (attentional * g_attentional).sum()
    return context, weights, attentional, loss


def upstream_grads(batch: int, source_len: int, d: int, rng: np.random.Generator, dtype=np.float64):
    shapes = ((batch, d), (batch, source_len), (batch, d))
    return tuple(rng.standard_normal(shape).astype(dtype) for shape in shapes)


def masked_softmax(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The numpy oracle: softmax over the real positions, and zeros for a row with none."""
    filled = np.where(mask, scores, -np.inf)
    peak = np.where(mask.any(-1, keepdims=True), filled.max(-1, keepdims=True), 0.0)
    e = np.where(mask, np.exp(filled - peak), 0.0)
    total = e.sum(-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def test_hand_example_dot():
    for dtype in DTYPES:
        module = attention(2, "dot", dtype, {"combine.weight": np.hstack([EYE, EYE])})
        query, keys = tensor(HAND_QUERY, dtype), tensor(HAND_KEYS, dtype)
        np.testing.assert_allclose(module.scores(query, keys).numpy(), [[1.0, 0.0, 2.0]], atol=SIX_DECIMALS)
        context, weights, attentional, _ = read_and_combine(module, query, keys, HAND_MASK)
        np.testing.assert_allclose(weights.numpy(), HAND_WEIGHTS, atol=SIX_DECIMALS)
        assert weights.numpy()[0, 2] == 0.0, "the padded key must get weight exactly 0"
        np.testing.assert_allclose(context.numpy(), HAND_CONTEXT, atol=SIX_DECIMALS)
        np.testing.assert_allclose(attentional.numpy(), [[0.939181, 0.262640]], atol=SIX_DECIMALS)
        assert attentional.dtype == dtype


def test_hand_example_attentional_order():
    """W_c = [I 0] keeps the context half, so W_c [c ; h] must put the context first."""
    query, keys = tensor(HAND_QUERY), tensor(HAND_KEYS)
    halves = ((np.hstack([EYE, ZERO]), np.tanh(HAND_CONTEXT)), (np.hstack([ZERO, EYE]), np.tanh(HAND_QUERY)))
    for combine, expected in halves:
        module = attention(2, "dot", weights={"combine.weight": combine})
        _, _, attentional, _ = read_and_combine(module, query, keys, HAND_MASK)
        np.testing.assert_allclose(attentional.numpy(), expected, atol=SIX_DECIMALS)


def test_golden_torch(golden):
    for score in SCORES:
        case = {key.split("/", 1)[1]: value for key, value in golden.items() if key.startswith(f"{score}/")}
        params = {key.removeprefix("param/"): value for key, value in case.items() if key.startswith("param/")}
        module = LuongAttention(int(case["d"]), score).to(np.float64)
        module.load_state_dict(params)
        query, keys = tensor(case["query"]), tensor(case["keys"])
        upstream = tuple(case[f"upstream/{name}"] for name in ("context", "weights", "attentional"))
        context, weights, attentional, loss = read_and_combine(module, query, keys, case["mask"], upstream)
        loss.backward()
        got = {"expected/context": context, "expected/weights": weights, "expected/attentional": attentional}
        got.update({"grad/query": query.grad, "grad/keys": keys.grad})
        got.update({f"grad/param/{name}": p.grad for name, p in module.named_parameters()})
        assert sorted(got) == sorted(key for key in case if key.startswith(("expected/", "grad/")))
        for key, value in got.items():
            assert value is not None, f"{score}: no gradient for {key}"
            actual = value.numpy() if isinstance(value, Tensor) else value
            np.testing.assert_allclose(actual, case[key], rtol=1e-7, atol=1e-9, err_msg=f"{score}: {key}")


def test_gradcheck_every_input_and_parameter():
    """Float64 central differences for the query, the keys and every parameter, each score."""
    rng = np.random.default_rng(2015)
    batch, source_len, d, eps = 2, 3, 3, 1e-6
    mask = np.array([[True, True, True], [True, True, False]])  # row 1 has a padded position
    for score in SCORES:
        module = attention(d, score, weights=random_weights(d, score, rng))
        query = tensor(rng.standard_normal((batch, d)))
        keys = tensor(rng.standard_normal((batch, source_len, d)))
        upstream = upstream_grads(batch, source_len, d, rng)
        read_and_combine(module, query, keys, mask, upstream)[3].backward()
        leaves = [("query", query), ("keys", keys), *module.named_parameters()]
        for name, leaf in leaves:
            assert leaf.grad is not None, f"{score}: {name} got no gradient"
            numeric = np.zeros_like(leaf.data)
            for index in np.ndindex(leaf.shape):
                original = leaf.data[index]
                losses = []
                for shifted in (original + eps, original - eps):
                    leaf.data[index] = shifted
                    losses.append(read_and_combine(module, query, keys, mask, upstream)[3].item())
                leaf.data[index] = original
                numeric[index] = (losses[0] - losses[1]) / (2 * eps)
            np.testing.assert_allclose(leaf.grad, numeric, rtol=1e-5, atol=1e-7, err_msg=f"{score}: {name}")


def test_general_with_identity_is_dot():
    rng = np.random.default_rng(3)
    d, mask = 4, np.array([[True, True, True, False, False], [True, True, True, True, True]])
    combine = rng.uniform(-1.0, 1.0, (d, 2 * d))
    query, keys = tensor(rng.standard_normal((2, d))), tensor(rng.standard_normal((2, 5, d)))
    dot = attention(d, "dot", weights={"combine.weight": combine})
    general = attention(d, "general", weights={"combine.weight": combine, "score_proj.weight": np.eye(d)})
    np.testing.assert_allclose(general.scores(query, keys).numpy(), dot.scores(query, keys).numpy(), atol=1e-12)
    from_dot, from_general = (read_and_combine(m, query, keys, mask)[:3] for m in (dot, general))
    for expected, actual in zip(from_dot, from_general):
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), atol=1e-12)


def test_general_is_not_symmetric():
    """h . (W_a k): a checkpoint's W_a must not be read transposed."""
    rng = np.random.default_rng(4)
    d = 3
    w_a = rng.uniform(-1.0, 1.0, (d, d))
    query, keys = rng.standard_normal((2, d)), rng.standard_normal((2, 4, d))
    expected = np.einsum("bd,de,bse->bs", query, w_a, keys)
    transposed = np.einsum("bd,ed,bse->bs", query, w_a, keys)
    assert not np.allclose(expected, transposed, atol=1e-3), "the test needs a clearly asymmetric W_a"
    module = attention(d, "general", weights={"score_proj.weight": w_a})
    np.testing.assert_allclose(module.project_keys(tensor(keys)).numpy(), keys @ w_a.T, atol=1e-12)
    np.testing.assert_allclose(module.scores(tensor(query), tensor(keys)).numpy(), expected, atol=1e-12)


def test_concat_projection_splits_the_weight():
    """project_keys is W_k k (the last d columns of W_a) and the score is v . tanh(W_a [h ; k])."""
    rng = np.random.default_rng(5)
    d, mask = 3, np.array([[True, True, True, False], [True, True, True, True]])
    w_a, v = rng.uniform(-1.0, 1.0, (d, 2 * d)), rng.uniform(-1.0, 1.0, (1, d))
    query, keys = rng.standard_normal((2, d)), rng.standard_normal((2, 4, d))
    both = np.concatenate([np.broadcast_to(query[:, None, :], keys.shape), keys], axis=-1)
    expected = (np.tanh(both @ w_a.T) @ v.T)[..., 0]
    module = attention(d, "concat", weights={"score_proj.weight": w_a, "v.weight": v})
    proj = module.project_keys(tensor(keys))
    np.testing.assert_allclose(proj.numpy(), keys @ w_a[:, d:].T, atol=1e-12)
    np.testing.assert_allclose(module.scores(tensor(query), tensor(keys)).numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(module.scores(tensor(query), tensor(keys), proj).numpy(), expected, atol=1e-12)
    cached, fresh = module(tensor(query), tensor(keys), mask, proj), module(tensor(query), tensor(keys), mask)
    for with_cache, without in zip(cached, fresh):
        np.testing.assert_allclose(with_cache.numpy(), without.numpy(), atol=1e-12)


def test_masked_weights_are_exactly_zero():
    """Padding gets weight 0 and no gradient, real weights sum to 1, an empty row reads nothing."""
    rng = np.random.default_rng(6)
    batch, source_len, d = 3, 4, 3
    mask = np.array([[True, True, False, False], [False, False, False, False], [True, True, True, True]])
    real_rows, empty_row = mask.any(-1), ~mask.any(-1)
    for score in SCORES:
        for dtype in DTYPES:
            module = attention(d, score, dtype, random_weights(d, score, rng))
            query = tensor(rng.standard_normal((batch, d)), dtype)
            keys_values = 3.0 * rng.standard_normal((batch, source_len, d))
            keys = tensor(keys_values, dtype)
            upstream = upstream_grads(batch, source_len, d, rng, dtype)
            context, weights, attentional, loss = read_and_combine(module, query, keys, mask, upstream)
            loss.backward()
            where = f"{score}, {np.dtype(dtype).name}"
            assert np.all(weights.numpy()[~mask] == 0.0), f"{where}: padding weights are not exactly 0"
            expected = masked_softmax(module.scores(query, keys).numpy().astype(np.float64), mask)
            np.testing.assert_allclose(weights.numpy(), expected, rtol=1e-5, atol=1e-6, err_msg=where)
            np.testing.assert_allclose(weights.numpy()[real_rows].sum(-1), 1.0, rtol=1e-5, err_msg=where)
            assert np.all(context.numpy()[empty_row] == 0.0), f"{where}: an empty row must read nothing"
            grads = [query.grad, keys.grad] + [p.grad for _, p in module.named_parameters()]
            for array in [context.numpy(), weights.numpy(), attentional.numpy(), *grads]:
                assert np.all(np.isfinite(array)), f"{where}: non-finite output or gradient"
            assert np.all(keys.grad[~mask] == 0.0), f"{where}: gradient reached padded keys"
            padding_changed = np.where(mask[..., None], keys_values, -keys_values + 1.0)
            context_again, weights_again = module(tensor(query.numpy(), dtype), tensor(padding_changed, dtype), mask)
            np.testing.assert_array_equal(weights_again.numpy(), weights.numpy(), err_msg=f"{where}: padding was read")
            np.testing.assert_array_equal(context_again.numpy(), context.numpy(), err_msg=f"{where}: padding was read")


def test_dot_is_not_scaled():
    """Luong's dot is h . k; dividing by sqrt(d) is the transformer's change (L5.1)."""
    for dtype in DTYPES:
        module = attention(2, "dot", dtype)
        scores = module.scores(tensor(HAND_QUERY, dtype), tensor(HAND_KEYS, dtype)).numpy()
        np.testing.assert_array_equal(scores, [[1.0, 0.0, 2.0]])
    rng = np.random.default_rng(7)
    query, keys = rng.integers(-3, 4, (2, 4)).astype(float), rng.integers(-3, 4, (2, 5, 4)).astype(float)
    scores = attention(4, "dot").scores(tensor(query), tensor(keys)).numpy()
    np.testing.assert_array_equal(scores, np.einsum("bd,bsd->bs", query, keys))


def test_parameter_names_and_shapes():
    d = 3
    expected = {
        "dot": [("combine.weight", (d, 2 * d))],
        "general": [("score_proj.weight", (d, d)), ("combine.weight", (d, 2 * d))],
        "concat": [("score_proj.weight", (d, 2 * d)), ("v.weight", (1, d)), ("combine.weight", (d, 2 * d))],
    }
    assert LuongAttention.query_from == "current"
    for score, names_and_shapes in expected.items():
        module = LuongAttention(d, score)
        assert [(name, p.shape) for name, p in module.named_parameters()] == names_and_shapes, score
        assert list(module.state_dict()) == [name for name, _ in names_and_shapes], score
        assert all(p.dtype == np.float32 for p in module.parameters()), f"{score}: float32 by default"
        assert module.query_from == "current"


def test_validation():
    with pytest.raises(ValueError, match="(?i)score"):
        LuongAttention(3, "cosine")
    batch, source_len, d = 2, 4, 3
    query, keys = tensor(np.ones((batch, d))), tensor(np.ones((batch, source_len, d)))
    mask = np.ones((batch, source_len), dtype=bool)
    for score in SCORES:
        module = LuongAttention(d, score).to(np.float64)
        module(query, keys, mask)  # the well-formed call works
        for bad_query, bad_keys in (
            (tensor(np.ones((batch, d + 1))), keys),
            (query, tensor(np.ones((batch, source_len, d - 1)))),
        ):
            with pytest.raises(ValueError):
                module(bad_query, bad_keys, mask)
            with pytest.raises(ValueError):
                module.scores(bad_query, bad_keys)
        for bad_mask in (
            np.ones((batch, source_len - 1), dtype=bool),
            np.ones((source_len, batch), dtype=bool),
            np.ones((batch, source_len), dtype=np.float32),
            np.ones((batch, source_len), dtype=np.int64),
        ):
            with pytest.raises(ValueError, match="(?i)mask"):
                module(query, keys, bad_mask)
