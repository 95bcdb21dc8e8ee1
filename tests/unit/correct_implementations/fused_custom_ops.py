"""L4.3 Luong attention with two hand-written autograd ops.

I wrote the two hot spots as fused ops with their own backward (the chapter's M09.2 reading
derives them), instead of chaining many small Tensor ops:

* bilinear_scores(query, proj): e[b, s] = sum_i q[b, i] p[b, s, i]
    dq[b] = sum_s g[b, s] p[b, s];   dp[b, s] = g[b, s] q[b]
* masked_softmax(e, mask): softmax over the real positions, exactly 0 on padding, and an all
  padding row gives zeros; backward y * (g - sum(g * y)), which is exactly 0 where y is 0.

Everything else (the Linear layers, tanh, cat, the read) uses tinyllm's own ops.
"""
from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32


def bilinear_scores(query: Tensor, proj: Tensor) -> Tensor:
    q, p = query, query._coerce(proj)
    out = Tensor._from_op(np.einsum("bi,bsi->bs", q.data, p.data), (q, p))

    def _backward():
        g = out.grad
        if q.requires_grad:
            q._receive(np.einsum("bs,bsi->bi", g, p.data))
        if p.requires_grad:
            p._receive(np.einsum("bs,bi->bsi", g, q.data))

    out._backward = _backward
    return out


def masked_softmax(e: Tensor, mask: np.ndarray) -> Tensor:
    x = np.where(mask, e.data, -np.inf)
    has = mask.any(axis=-1, keepdims=True)
    top = np.where(has, x.max(axis=-1, keepdims=True), 0.0)
    z = np.exp(x - top)  # exp(-inf) = 0 on padding
    tot = z.sum(axis=-1, keepdims=True)
    y = np.divide(z, tot, out=np.zeros_like(z), where=has)
    out = Tensor._from_op(y.astype(e.dtype), (e,))

    def _backward():
        g = out.grad
        e._receive(y * (g - (g * y).sum(axis=-1, keepdims=True)))

    out._backward = _backward
    return out


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in {"dot", "general", "concat"}:
            raise ValueError(f"{score!r}: not a valid score (expected 'dot', 'general' or 'concat')")
        if not isinstance(d, int) or isinstance(d, bool) or d < 1:
            raise ValueError("d must be a positive int")
        self.d, self.score = d, score
        rng = rng or PCG32()
        if score == "general":
            self.score_proj = Linear(d, d, bias=False, rng=rng)
        if score == "concat":
            self.score_proj = Linear(2 * d, d, bias=False, rng=rng)
            self.v = Linear(d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * d, d, bias=False, rng=rng)

    def _need(self, **named):
        for name, (t, shape) in named.items():
            good = isinstance(t, Tensor) and t.ndim == len(shape) and all(
                s is None or s == n for s, n in zip(shape, t.shape))
            if not good:
                raise ValueError(f"{name} has the wrong shape: {getattr(t, 'shape', t)}, expected {shape}")

    def project_keys(self, keys):
        self._need(keys=(keys, (None, None, self.d)))
        if self.score == "dot":
            return keys
        if self.score == "general":
            return self.score_proj(keys)
        return F.linear(keys, self.score_proj.weight[:, self.d:])

    def scores(self, query, keys, proj=None):
        self._need(query=(query, (None, self.d)))
        self._need(keys=(keys, (query.shape[0], None, self.d)))
        if proj is None:
            proj = self.project_keys(keys)
        if self.score == "concat":
            h_part = F.linear(query, self.score_proj.weight[:, : self.d])
            return self.v(F.tanh(proj + h_part.unsqueeze(1))).squeeze(-1)
        return bilinear_scores(query, proj)

    def forward(self, query, keys, mask, proj=None):
        self._need(query=(query, (None, self.d)))
        self._need(keys=(keys, (query.shape[0], None, self.d)))
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise ValueError("mask should be a numpy array of bools")
        if mask.shape != (query.shape[0], keys.shape[1]):
            raise ValueError(f"mask should have shape {(query.shape[0], keys.shape[1])}, got {mask.shape}")
        a = masked_softmax(self.scores(query, keys, proj), mask)
        ctx = (a.unsqueeze(1) @ keys).squeeze(1)
        return ctx, a

    def attentional(self, query, context):
        self._need(query=(query, (None, self.d)), context=(context, query.shape))
        return F.tanh(self.combine(F.cat([context, query], axis=-1)))
