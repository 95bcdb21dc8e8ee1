"""Luong attention (L4.3) with the masked softmax computed in float64 whatever the input dtype:
the scores are cast up (a differentiable cast: the gradient is cast back down), masked and
normalised in double precision, and the weights cast back to the input's dtype."""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32
from tinyllm.seq2seq.additive import check_mask


def cast(x: Tensor, dtype) -> Tensor:
    """x as ``dtype``, in the graph: the backward casts the gradient back to x's dtype."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    out = Tensor._from_op(x.data.astype(dtype), (x,))

    def _backward() -> None:
        x._receive(out.grad.astype(x.dtype))

    out._backward = _backward
    return out


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in ("dot", "general", "concat"):
            raise ValueError(f"unknown score {score!r}; the scores are dot, general and concat")
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
            raise ValueError(f"d must be a positive int, got {d!r}")
        self.d = int(d)
        self.score = score
        gen = PCG32() if rng is None else rng
        if score == "general":
            self.score_proj = Linear(self.d, self.d, bias=False, rng=gen)
        elif score == "concat":
            self.score_proj = Linear(2 * self.d, self.d, bias=False, rng=gen)
            self.v = Linear(self.d, 1, bias=False, rng=gen)
        self.combine = Linear(2 * self.d, self.d, bias=False, rng=gen)

    def _valid(self, name, x, shape):
        if not (isinstance(x, Tensor) and x.ndim == len(shape)
                and all(a is None or a == b for a, b in zip(shape, x.shape))):
            raise ValueError(f"{name} must be a Tensor of shape {shape}, got {getattr(x, 'shape', type(x).__name__)}")

    def project_keys(self, keys):
        self._valid("keys", keys, (None, None, self.d))
        if self.score == "dot":
            return keys
        if self.score == "general":
            return self.score_proj(keys)
        return F.linear(keys, self.score_proj.weight[:, self.d:])

    def scores(self, query, keys, proj=None):
        self._valid("query", query, (None, self.d))
        self._valid("keys", keys, (query.shape[0], None, self.d))
        if proj is None:
            proj = self.project_keys(keys)
        else:
            self._valid("proj", proj, keys.shape)
        if self.score == "concat":
            pre = proj + F.linear(query, self.score_proj.weight[:, : self.d]).unsqueeze(1)
            return self.v(F.tanh(pre)).squeeze(-1)
        return (proj @ query.unsqueeze(-1)).squeeze(-1)

    def forward(self, query, keys, mask, proj=None):
        self._valid("query", query, (None, self.d))
        self._valid("keys", keys, (query.shape[0], None, self.d))
        check_mask(mask, query.shape[0], keys.shape[1])
        e64 = cast(self.scores(query, keys, proj), np.float64)
        empty = ~mask.any(axis=-1, keepdims=True)
        e64 = F.where(mask, e64, -np.inf)
        e64 = F.where(empty, 0.0, e64)
        w64 = F.where(empty, 0.0, F.softmax(e64, axis=-1))
        weights = cast(w64, query.dtype)
        context = (weights.unsqueeze(1) @ keys).squeeze(1)
        return context, weights

    def attentional(self, query, context):
        self._valid("query", query, (None, self.d))
        self._valid("context", context, query.shape)
        return F.tanh(self.combine(F.cat([context, query], axis=-1)))
# regrade b
# regrade c
# regrade d
