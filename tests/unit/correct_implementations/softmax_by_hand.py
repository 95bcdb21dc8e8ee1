"""Luong attention (L4.3) with the masked softmax written out by hand from exp, sum and a
division: shift by the row's largest real score, exponentiate only the real positions, divide by
their sum, and give an empty row zeros."""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32

KINDS = {"dot", "general", "concat"}


def masked_softmax(scores: Tensor, mask: np.ndarray) -> Tensor:
    """Softmax over the True positions of each row; padding exactly 0, an empty row all 0."""
    empty = ~mask.any(axis=-1, keepdims=True)  # [B, 1]
    real = np.where(mask, scores.data, -np.inf)
    shift = real.max(axis=-1, keepdims=True) if real.shape[-1] else np.zeros(real.shape[:-1] + (1,))
    shift = np.where(empty, 0.0, shift).astype(scores.dtype)  # a constant: the softmax does not depend on it
    shifted = F.masked_fill(scores - shift, ~mask, -np.inf)  # padding -inf before exp
    numer = F.exp(shifted)  # exactly 0 at padding
    denom = numer.sum(axis=-1, keepdims=True)
    denom = F.where(empty, 1.0, denom)  # an empty row: 0 / 1 = 0, never 0 / 0
    return numer / denom


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if not (isinstance(score, str) and score in KINDS):
            raise ValueError(f"unknown score {score!r} (expected dot, general or concat)")
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or int(d) <= 0:
            raise ValueError(f"d must be a positive integer, got {d!r}")
        self.d = d = int(d)
        self.score = score
        if rng is None:
            rng = PCG32()
        if score == "general":
            self.score_proj = Linear(d, d, bias=False, rng=rng)
        elif score == "concat":
            self.score_proj = Linear(2 * d, d, bias=False, rng=rng)
            self.v = Linear(d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * d, d, bias=False, rng=rng)

    def _need(self, name, x, shape):
        if not isinstance(x, Tensor) or len(x.shape) != len(shape) or any(
                s is not None and s != t for s, t in zip(shape, x.shape)):
            raise ValueError(f"{name}: expected a Tensor of shape {shape}, got {getattr(x, 'shape', x)!r}")

    def project_keys(self, keys):
        self._need("keys", keys, (None, None, self.d))
        if self.score == "dot":
            return keys
        if self.score == "general":
            return F.linear(keys, self.score_proj.weight)
        return F.linear(keys, self.score_proj.weight[:, self.d:])

    def scores(self, query, keys, proj=None):
        self._need("query", query, (None, self.d))
        self._need("keys", keys, (query.shape[0], None, self.d))
        if proj is None:
            proj = self.project_keys(keys)
        self._need("proj", proj, keys.shape)
        if self.score == "concat":
            wh = F.linear(query, self.score_proj.weight[:, : self.d])
            return F.linear(F.tanh(proj + wh.unsqueeze(1)), self.v.weight).squeeze(-1)
        return (query.unsqueeze(1) * proj).sum(axis=-1)

    def forward(self, query, keys, mask, proj=None):
        self._need("query", query, (None, self.d))
        self._need("keys", keys, (query.shape[0], None, self.d))
        if not isinstance(mask, np.ndarray) or mask.dtype != bool:
            raise ValueError("mask must be a numpy bool array")
        if mask.shape != (query.shape[0], keys.shape[1]):
            raise ValueError(f"mask shape {mask.shape} is not [B, S] = {(query.shape[0], keys.shape[1])}")
        weights = masked_softmax(self.scores(query, keys, proj), mask)
        context = (weights.unsqueeze(-1) * keys).sum(axis=1)
        return context, weights

    def attentional(self, query, context):
        self._need("query", query, (None, self.d))
        self._need("context", context, query.shape)
        return F.tanh(F.linear(F.cat([context, query], axis=-1), self.combine.weight))
# regrade b
# regrade c
# regrade d
