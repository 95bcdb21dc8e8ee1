"""Luong attention (L4.3), written with explicit Python loops over the batch and the source
positions: each score is one dot product, each context a running sum over the source in order."""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32


def _fits(x, shape):
    if not isinstance(x, Tensor) or x.ndim != len(shape):
        return False
    return all(w is None or w == g for w, g in zip(shape, x.shape))


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if not isinstance(score, str) or score not in ("dot", "general", "concat"):
            raise ValueError(f"unknown score {score!r}: use dot, general or concat")
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"d must be a positive int, got {d!r}")
        self.d = int(d)
        self.score = str(score)
        if rng is None:
            rng = PCG32()
        if score == "general":
            self.score_proj = Linear(self.d, self.d, bias=False, rng=rng)
        elif score == "concat":
            self.score_proj = Linear(2 * self.d, self.d, bias=False, rng=rng)
            self.v = Linear(self.d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * self.d, self.d, bias=False, rng=rng)

    # -- checks -----------------------------------------------------------------------------
    def _check(self, query, keys):
        if not _fits(query, (None, self.d)):
            raise ValueError(f"query must be a Tensor [B, d={self.d}], got {getattr(query, 'shape', query)}")
        if not _fits(keys, (query.shape[0], None, self.d)):
            raise ValueError(f"keys must be a Tensor [B, S, d={self.d}], got {getattr(keys, 'shape', keys)}")
        return keys.shape[0], keys.shape[1]

    # -- the parts ---------------------------------------------------------------------------
    def project_keys(self, keys: Tensor) -> Tensor:
        if not _fits(keys, (None, None, self.d)):
            raise ValueError(f"keys must be a Tensor [B, S, d={self.d}]")
        if self.score == "dot":
            return keys
        if self.score == "general":
            return self.score_proj(keys)
        return F.linear(keys, self.score_proj.weight[:, self.d:])

    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor:
        batch, length = self._check(query, keys)
        if proj is None:
            proj = self.project_keys(keys)
        elif not _fits(proj, keys.shape):
            raise ValueError(f"proj must have the keys' shape {keys.shape}")
        if batch == 0 or length == 0:
            return (proj.sum(axis=-1) * 0.0) if self.score != "concat" else proj.sum(axis=-1) * 0.0
        if self.score == "concat":
            hq = F.linear(query, self.score_proj.weight[:, : self.d])  # W_h h, [B, d]
            v = self.v.weight[0]
        rows = []
        for b in range(batch):
            proj_b = proj[b]
            if self.score == "concat":
                h_b = hq[b]
            else:
                h_b = query[b]
            row = []
            for s in range(length):
                if self.score == "concat":
                    e = (v * F.tanh(proj_b[s] + h_b)).sum()
                else:
                    e = (h_b * proj_b[s]).sum()
                row.append(e.reshape(1, 1))
            rows.append(F.cat(row, axis=1))
        return F.cat(rows, axis=0)

    def forward(self, query, keys, mask, proj=None):
        batch, length = self._check(query, keys)
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise ValueError("mask must be a bool numpy array")
        if mask.shape != (batch, length):
            raise ValueError(f"mask has shape {mask.shape}, expected {(batch, length)}")
        scores = self.scores(query, keys, proj)
        empty = ~mask.any(axis=1, keepdims=True)
        filled = F.masked_fill(F.masked_fill(scores, ~mask, -np.inf), np.broadcast_to(empty, mask.shape), 0.0)
        weights = F.masked_fill(F.softmax(filled, axis=-1), np.broadcast_to(empty, mask.shape), 0.0)
        contexts = []
        for b in range(batch):
            w_b, k_b = weights[b], keys[b]
            acc = None
            for s in range(length):
                term = w_b[s] * k_b[s]
                acc = term if acc is None else acc + term
            if acc is None:
                acc = keys.sum(axis=1)[b] * 0.0
            contexts.append(acc.reshape(1, self.d))
        context = F.cat(contexts, axis=0) if contexts else keys.sum(axis=1)
        return context, weights

    def attentional(self, query, context):
        if not _fits(query, (None, self.d)):
            raise ValueError(f"query must be a Tensor [B, d={self.d}]")
        if not _fits(context, query.shape):
            raise ValueError(f"context must have the query's shape {query.shape}")
        return F.tanh(self.combine(F.cat([context, query], axis=-1)))
# regrade b
# regrade c
# regrade d
