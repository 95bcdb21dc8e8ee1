"""Luong attention (L4.3), matrices the other way round: the keys projected as (W K^T)^T, the
scores as a batched row-times-matrix product h^T P^T, the context as K^T a, and the attentional
state as (W_c [c ; h]^T)^T."""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32
from tinyllm.seq2seq.additive import check_mask


def _apply(weight: Tensor, x: Tensor) -> Tensor:
    """weight @ x along x's last axis, computed as (W x^T)^T: works for [B, n] and [B, S, n]."""
    if x.ndim == 2:
        return (weight @ x.transpose(0, 1)).transpose(0, 1)
    return (weight @ x.transpose(-2, -1)).transpose(-2, -1)  # [d, n] @ [B, n, S] -> [B, d, S]


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        valid = ("dot", "general", "concat")
        if score not in valid:
            raise ValueError(f"score {score!r} is not one of {valid}")
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
            raise ValueError(f"d must be a positive int, not {d!r}")
        self.d = int(d)
        self.score = score
        rng = PCG32() if rng is None else rng
        n = self.d
        if score == "general":
            self.score_proj = Linear(n, n, bias=False, rng=rng)
        elif score == "concat":
            self.score_proj = Linear(2 * n, n, bias=False, rng=rng)
            self.v = Linear(n, 1, bias=False, rng=rng)
        self.combine = Linear(2 * n, n, bias=False, rng=rng)

    def _shape(self, what, x, shape):
        good = isinstance(x, Tensor) and x.ndim == len(shape)
        good = good and all(a is None or a == b for a, b in zip(shape, x.shape))
        if not good:
            raise ValueError(f"{what} must be a Tensor shaped {shape}, got {getattr(x, 'shape', type(x))}")

    def project_keys(self, keys: Tensor) -> Tensor:
        self._shape("keys", keys, (None, None, self.d))
        if self.score == "dot":
            return keys
        if self.score == "general":
            return _apply(self.score_proj.weight, keys)
        return _apply(self.score_proj.weight[:, self.d:], keys)

    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor:
        self._shape("query", query, (None, self.d))
        self._shape("keys", keys, (query.shape[0], None, self.d))
        proj = self.project_keys(keys) if proj is None else proj
        self._shape("proj", proj, keys.shape)
        if self.score == "concat":
            hidden = F.tanh(proj + _apply(self.score_proj.weight[:, : self.d], query).unsqueeze(1))
            # v [1, d] @ hidden^T [B, d, S] -> [B, 1, S]
            return (self.v.weight @ hidden.transpose(1, 2)).squeeze(1)
        # [B, 1, d] @ [B, d, S] -> [B, 1, S]
        return (query.unsqueeze(1) @ proj.transpose(1, 2)).squeeze(1)

    def forward(self, query, keys, mask, proj=None):
        self._shape("query", query, (None, self.d))
        self._shape("keys", keys, (query.shape[0], None, self.d))
        check_mask(mask, query.shape[0], keys.shape[1])
        e = self.scores(query, keys, proj)
        empty = np.broadcast_to(~mask.any(axis=1, keepdims=True), mask.shape)
        e = F.where(mask, e, -np.inf)
        e = F.where(empty, 0.0, e)
        weights = F.where(empty, 0.0, F.softmax(e, axis=1))
        # K^T a: [B, d, S] @ [B, S, 1] -> [B, d, 1]
        context = (keys.transpose(1, 2) @ weights.unsqueeze(2)).squeeze(2)
        return context, weights

    def attentional(self, query, context):
        self._shape("query", query, (None, self.d))
        self._shape("context", context, query.shape)
        return F.tanh(_apply(self.combine.weight, F.cat([context, query], axis=1)))
# regrade b
# regrade c
# regrade d
