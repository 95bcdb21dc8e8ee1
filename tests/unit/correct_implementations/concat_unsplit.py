"""Luong attention (L4.3) as the formulas read, without the precomputation where none is asked for:
with no ``proj``, concat applies W_a to the concatenation [h ; k_s] itself, and general computes
(h^T W_a) . k_s. Only when the caller hands in ``project_keys(keys)`` is the split used
(W_h h + W_k k_s, or h . (W_a k_s)), which is the same number."""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32
from tinyllm.seq2seq.additive import check_mask


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in ["dot", "general", "concat"]:
            raise ValueError(f"unknown attention score {score!r}")
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
            raise ValueError(f"d must be a positive int, got {d!r}")
        self.d, self.score = int(d), score
        if rng is None:
            rng = PCG32()
        if score == "general":
            self.score_proj = Linear(self.d, self.d, bias=False, rng=rng)
        elif score == "concat":
            self.score_proj = Linear(2 * self.d, self.d, bias=False, rng=rng)
            self.v = Linear(self.d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * self.d, self.d, bias=False, rng=rng)

    @staticmethod
    def _expect(name, x, shape, text):
        if not (isinstance(x, Tensor) and x.ndim == len(shape)
                and all(w is None or w == g for w, g in zip(shape, x.shape))):
            raise ValueError(f"{name} must be a Tensor {text}, got {x.shape if isinstance(x, Tensor) else type(x).__name__}")

    def _inputs(self, query, keys):
        self._expect("query", query, (None, self.d), f"[B, d={self.d}]")
        self._expect("keys", keys, (query.shape[0], None, self.d), f"[B, S, d={self.d}]")

    def project_keys(self, keys):
        self._expect("keys", keys, (None, None, self.d), f"[B, S, d={self.d}]")
        if self.score == "dot":
            return keys
        if self.score == "general":
            return self.score_proj(keys)
        return F.linear(keys, self.score_proj.weight[:, self.d:])

    def scores(self, query, keys, proj=None):
        self._inputs(query, keys)
        if proj is not None:
            self._expect("proj", proj, keys.shape, "shaped as the keys")
            if self.score == "concat":
                hidden = F.tanh(proj + F.linear(query, self.score_proj.weight[:, : self.d]).unsqueeze(1))
                return F.linear(hidden, self.v.weight).squeeze(-1)
            return (proj @ query.unsqueeze(-1)).squeeze(-1)
        length = keys.shape[1]
        if self.score == "concat":
            # [h ; k_s] for every s: the query repeated along the source, then W_a on the 2d vector
            repeated = query.unsqueeze(1)[:, np.zeros(length, dtype=np.intp), :]  # [B, S, d]
            both = F.cat([repeated, keys], axis=-1)  # [B, S, 2d]
            hidden = F.tanh(self.score_proj(both))
            return self.v(hidden).squeeze(-1)
        if self.score == "general":
            row = query @ self.score_proj.weight  # h^T W_a, [B, d]
        else:
            row = query
        return (keys @ row.unsqueeze(-1)).squeeze(-1)

    def forward(self, query, keys, mask, proj=None):
        self._inputs(query, keys)
        check_mask(mask, query.shape[0], keys.shape[1])
        e = self.scores(query, keys, proj)
        empty = ~mask.any(axis=-1, keepdims=True)
        keep = mask & ~empty  # (every real position of a non-empty row)
        e = F.masked_fill(e, ~mask, -np.inf)
        e = F.masked_fill(e, np.broadcast_to(empty, mask.shape), 0.0)
        weights = F.masked_fill(F.softmax(e, axis=-1), ~keep, 0.0)
        context = (weights.unsqueeze(-1) * keys).sum(axis=1)
        return context, weights

    def attentional(self, query, context):
        self._expect("query", query, (None, self.d), f"[B, d={self.d}]")
        self._expect("context", context, query.shape, "shaped as the query")
        return F.tanh(self.combine(F.cat([context, query], axis=-1)))
# regrade b
# regrade c
# regrade d
