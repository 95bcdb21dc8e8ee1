"""Anti-pitfall tests only: each asserts the module does NOT compute one pitfall's formula.
Every exception counts as 'not the pitfall' too, so almost no other mutant is killed."""
import numpy as np
from tinyllm.autograd.tensor import Tensor
from tinyllm.seq2seq.additive import length_mask
from tinyllm.seq2seq.luong import LuongAttention


def _mod(d, score, seed):
    m = LuongAttention(d, score).to(np.float64)
    rng = np.random.default_rng(seed)
    m.load_state_dict({n: rng.uniform(-1, 1, w.shape) for n, w in m.state_dict().items()})
    return m


def _hk(b, s, d, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(b, d)), rng.normal(size=(b, s, d))


def _same(f, want):
    try:
        got = np.asarray(f(), dtype=np.float64)
    except Exception:
        return False
    return got.shape == want.shape and np.allclose(got, want, rtol=1e-6, atol=1e-9)


def test_not_s01_s06():
    m = _mod(3, "dot", 1)
    h, _ = _hk(2, 4, 3, 2)
    c = np.random.default_rng(3).normal(size=(2, 3))
    W = m.state_dict()["combine.weight"]
    f = lambda: m.attentional(Tensor(h), Tensor(c)).numpy()
    assert not _same(f, np.tanh(np.concatenate([h, c], -1) @ W.T))
    assert not _same(f, np.concatenate([c, h], -1) @ W.T)


def test_not_s02():
    m = _mod(3, "general", 4)
    h, k = _hk(2, 4, 3, 5)
    W = m.state_dict()["score_proj.weight"]
    assert not _same(lambda: m.scores(Tensor(h), Tensor(k)).numpy(), np.einsum("bd,ed,bse->bs", h, W, k))


def test_not_s03():
    m = _mod(3, "concat", 6)
    h, k = _hk(2, 4, 3, 7)
    sd = m.state_dict()
    W, v = sd["score_proj.weight"], sd["v.weight"]
    want = (np.tanh(h[:, None, :] @ W[:, :3].T + k @ W[:, :3].T) @ v.T)[..., 0]
    assert not _same(lambda: m.scores(Tensor(h), Tensor(k)).numpy(), want)


def test_not_s07():
    m = _mod(4, "dot", 8)
    h, k = _hk(2, 3, 4, 9)
    assert not _same(lambda: m.scores(Tensor(h), Tensor(k)).numpy(), np.einsum("bd,bsd->bs", h, k) / 2.0)


def test_not_s04_s05():
    m = _mod(3, "dot", 10)
    h, k = _hk(2, 4, 3, 11)
    mask = length_mask(np.array([2, 0]), 4)
    e = np.einsum("bd,bsd->bs", h, k)
    p = np.exp(e - e.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
    s04 = np.where(mask, p, 0.0)
    f = lambda: m(Tensor(h), Tensor(k), mask)[1].numpy()
    assert not _same(f, s04)
    s05 = s04.copy(); s05[0] = np.where(mask[0], np.exp(e[0] - e[0, :2].max()), 0); s05[0] /= s05[0].sum()
    s05[1] = 0.25
    assert not _same(f, s05)
