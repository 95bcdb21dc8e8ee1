"""Luong attention (L4.3), one sentence at a time: for each row of the batch, take its real
positions only, softmax their scores, read their keys, and scatter the weights back into a row
of the source's length (zeros at padding). A row with no real token reads nothing."""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32
from tinyllm.seq2seq.additive import check_mask


def _check(name: str, x, shape) -> None:
    if not isinstance(x, Tensor):
        raise ValueError(f"{name} must be a Tensor, got {type(x).__name__}")
    if len(x.shape) != len(shape) or any(w is not None and w != g for w, g in zip(shape, x.shape)):
        raise ValueError(f"{name} must have shape {shape}, got {x.shape}")


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in {"dot": 0, "general": 1, "concat": 2}:
            raise ValueError(f"score must be 'dot', 'general' or 'concat', got {score!r}")
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
            raise ValueError(f"d must be a positive int, got {d!r}")
        self.d = int(d)
        self.score = score
        if rng is None:
            rng = PCG32()
        if score == "general":
            self.score_proj = Linear(self.d, self.d, bias=False, rng=rng)
        elif score == "concat":
            self.score_proj = Linear(2 * self.d, self.d, bias=False, rng=rng)
            self.v = Linear(self.d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * self.d, self.d, bias=False, rng=rng)

    def project_keys(self, keys):
        _check("keys", keys, (None, None, self.d))
        if self.score == "dot":
            return keys
        if self.score == "general":
            return self.score_proj(keys)
        return F.linear(keys, self.score_proj.weight[:, self.d:])

    def _row_scores(self, query_b: Tensor, proj_b: Tensor) -> Tensor:
        """Scores [n] of one query [d] against its projected keys [n, d]."""
        if self.score == "concat":
            wh = F.linear(query_b, self.score_proj.weight[:, : self.d])  # [d]
            return F.linear(F.tanh(proj_b + wh), self.v.weight).squeeze(-1)
        return proj_b @ query_b

    def scores(self, query, keys, proj=None):
        _check("query", query, (None, self.d))
        _check("keys", keys, (query.shape[0], None, self.d))
        if proj is None:
            proj = self.project_keys(keys)
        _check("proj", proj, keys.shape)
        if self.score == "concat":
            wh = F.linear(query, self.score_proj.weight[:, : self.d])
            return F.linear(F.tanh(proj + wh.unsqueeze(1)), self.v.weight).squeeze(-1)
        return (proj @ query.unsqueeze(2)).squeeze(2)

    def forward(self, query, keys, mask, proj=None):
        _check("query", query, (None, self.d))
        _check("keys", keys, (query.shape[0], None, self.d))
        batch, length = query.shape[0], keys.shape[1]
        check_mask(mask, batch, length)
        if proj is None:
            proj = self.project_keys(keys)
        _check("proj", proj, keys.shape)
        dtype = query.dtype
        contexts, rows = [], []
        for b in range(batch):
            real = np.flatnonzero(mask[b])
            if real.size == 0:
                rows.append(Tensor(np.zeros((1, length), dtype=dtype)))
                contexts.append(Tensor(np.zeros((1, self.d), dtype=dtype)))
                continue
            e = self._row_scores(query[b], proj[b][real])  # [n]
            w = F.softmax(e, axis=-1)
            contexts.append((w @ keys[b][real]).reshape(1, self.d))
            scatter = np.zeros((real.size, length), dtype=dtype)
            scatter[np.arange(real.size), real] = 1.0
            rows.append((w @ scatter).reshape(1, length))
        if batch == 0:
            return (Tensor(np.zeros((0, self.d), dtype=dtype)), Tensor(np.zeros((0, length), dtype=dtype)))
        return F.cat(contexts, axis=0), F.cat(rows, axis=0)

    def attentional(self, query, context):
        _check("query", query, (None, self.d))
        _check("context", context, query.shape)
        return F.tanh(self.combine(F.cat([context, query], axis=-1)))
# regrade b
# regrade c
# regrade d
