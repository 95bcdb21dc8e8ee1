"""Luong attention for L4.3 without nn.Linear: each weight lives in a tiny Module of my own
(`Weight`), so the checkpoint keys come out as score_proj.weight, v.weight, combine.weight.

Without a cached projection, general is computed from the query side, (W_a^T h) . k_s, and
concat from the literal concatenation W_a [h ; k_s]; with `proj` given, from the cache.
"""
from __future__ import annotations

import math

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Module, Parameter
from tinyllm.random import PCG32

_KINDS = {"dot", "general", "concat"}


class Weight(Module):
    """A bias-free weight [out, in], initialised like Linear: U(-1/sqrt(in), 1/sqrt(in))."""

    def __init__(self, n_in: int, n_out: int, rng: PCG32) -> None:
        super().__init__()
        bound = 1.0 / math.sqrt(n_in)
        self.weight = Parameter(rng.uniform(-bound, bound, size=(n_out, n_in)).astype(np.float32))

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.weight.transpose(0, 1)


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in _KINDS:
            raise ValueError(f"LuongAttention: score {score!r} is not one of dot/general/concat")
        if not isinstance(d, int) or d < 1:
            raise ValueError(f"LuongAttention: d={d!r} is not a positive int")
        self.d, self.score = d, score
        r = rng or PCG32()
        if score == "general":
            self.score_proj = Weight(d, d, r)
        elif score == "concat":
            self.score_proj = Weight(2 * d, d, r)
            self.v = Weight(d, 1, r)
        self.combine = Weight(2 * d, d, r)

    # -- helpers -------------------------------------------------------------------------------
    def _shape_check(self, query, keys) -> tuple[int, int]:
        if not (isinstance(keys, Tensor) and keys.ndim == 3 and keys.shape[2] == self.d):
            raise ValueError(f"keys must be [B, S, d={self.d}]")
        if not (isinstance(query, Tensor) and query.ndim == 2 and query.shape == (keys.shape[0], self.d)):
            raise ValueError(f"query must be [B={keys.shape[0]}, d={self.d}]")
        return keys.shape[0], keys.shape[1]

    def project_keys(self, keys: Tensor) -> Tensor:
        if not (isinstance(keys, Tensor) and keys.ndim == 3 and keys.shape[2] == self.d):
            raise ValueError(f"keys must be [B, S, d={self.d}]")
        if self.score == "dot":
            return keys
        W = self.score_proj.weight
        if self.score == "general":
            return keys @ W.transpose(0, 1)
        return keys @ W[:, self.d:].transpose(0, 1)

    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor:
        B, S = self._shape_check(query, keys)
        if proj is not None and (not isinstance(proj, Tensor) or proj.shape != keys.shape):
            raise ValueError("proj must have the shape of the keys")
        if self.score == "dot":
            return (keys @ query.reshape(B, self.d, 1)).reshape(B, S)
        if self.score == "general":
            if proj is not None:
                return (proj @ query.reshape(B, self.d, 1)).reshape(B, S)
            q = query @ self.score_proj.weight            # (W_a^T h) as a row: h^T W_a
            return (keys @ q.reshape(B, self.d, 1)).reshape(B, S)
        W = self.score_proj.weight
        if proj is not None:
            pre = proj + (query @ W[:, : self.d].transpose(0, 1)).reshape(B, 1, self.d)
        else:
            ones = Tensor(np.ones((B, S, 1), dtype=query.dtype))
            h_everywhere = ones * query.reshape(B, 1, self.d)       # [B, S, d]
            pre = F.cat([h_everywhere, keys], axis=2) @ W.transpose(0, 1)
        return (F.tanh(pre) @ self.v.weight.transpose(0, 1)).reshape(B, S)

    def forward(self, query, keys, mask, proj=None):
        B, S = self._shape_check(query, keys)
        if not isinstance(mask, np.ndarray) or mask.dtype.kind != "b":
            raise ValueError("mask: must be a boolean numpy array")
        if mask.shape != (B, S):
            raise ValueError(f"mask: shape {mask.shape} != (B, S) = {(B, S)}")
        e = self.scores(query, keys, proj)
        empty = ~mask.any(axis=1, keepdims=True)
        # padding -> -inf; an all-padding row keeps its scores for a throwaway softmax
        logits = F.masked_fill(e, ~mask & ~empty, -np.inf)
        a = F.where(np.broadcast_to(empty, (B, S)).copy(), 0.0, F.softmax(logits, axis=1))
        c = (a.reshape(B, 1, S) @ keys).reshape(B, self.d)
        return c, a

    def attentional(self, query: Tensor, context: Tensor) -> Tensor:
        if not (isinstance(query, Tensor) and query.ndim == 2 and query.shape[1] == self.d):
            raise ValueError("query must be [B, d]")
        if not (isinstance(context, Tensor) and context.shape == query.shape):
            raise ValueError("context must be [B, d] like the query")
        return F.tanh(self.combine(F.cat([context, query], axis=1)))
