"""Luong attention (L4.3) with a "null slot": every row gets one extra score column that is
-inf when the row has a real token and 0 when it has none. After the softmax I drop that column:
a real row is an ordinary masked softmax, and an empty row puts all its mass on the null slot,
so its real weights are exactly 0 and it reads nothing, without any NaN.
"""
from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str = "dot", rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in ("dot", "general", "concat"):
            raise ValueError(f"score {score!r} not understood; choose dot, general or concat")
        if not isinstance(d, int) or d < 1:
            raise ValueError("d must be a positive int")
        self.d = d
        self.score = score
        self.rng = PCG32() if rng is None else rng
        if score in ("general", "concat"):
            self.score_proj = Linear((1 if score == "general" else 2) * d, d, bias=False, rng=self.rng)
        if score == "concat":
            self.v = Linear(d, 1, bias=False, rng=self.rng)
        self.combine = Linear(2 * d, d, bias=False, rng=self.rng)

    def _qk(self, query, keys):
        if not isinstance(query, Tensor) or query.ndim != 2 or query.shape[-1] != self.d:
            raise ValueError(f"query must be [B, d={self.d}]")
        if not isinstance(keys, Tensor) or keys.ndim != 3 or keys.shape[-1] != self.d or keys.shape[0] != query.shape[0]:
            raise ValueError(f"keys must be [B, S, d={self.d}] with the query's B")

    def project_keys(self, keys):
        if not isinstance(keys, Tensor) or keys.ndim != 3 or keys.shape[-1] != self.d:
            raise ValueError(f"keys must be [B, S, d={self.d}]")
        if self.score == "general":
            return F.matmul(keys, self.score_proj.weight.transpose(0, 1))
        if self.score == "concat":
            return F.matmul(keys, self.score_proj.weight[:, self.d:].transpose(0, 1))
        return keys

    def scores(self, query, keys, proj=None):
        self._qk(query, keys)
        p = self.project_keys(keys) if proj is None else proj
        if self.score == "concat":
            wh = self.score_proj.weight[:, : self.d]
            u = F.tanh(p + F.matmul(query, wh.transpose(0, 1)).unsqueeze(1))
            return F.matmul(u, self.v.weight.transpose(0, 1)).squeeze(-1)
        return F.matmul(p, query.unsqueeze(-1)).squeeze(-1)

    def forward(self, query, keys, mask, proj=None):
        self._qk(query, keys)
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != keys.shape[:2]:
            raise ValueError(f"mask must be a bool array shaped {keys.shape[:2]}")
        e = F.masked_fill(self.scores(query, keys, proj), ~mask, -np.inf)
        B, S = mask.shape
        empty = ~mask.any(axis=1, keepdims=True)
        null = Tensor(np.where(empty, 0.0, -np.inf).astype(e.dtype))
        a = F.softmax(F.cat([e, null], axis=1), axis=1)[:, :S]
        c = F.matmul(a.unsqueeze(1), keys).squeeze(1)
        return c, a

    def attentional(self, query, context):
        if not isinstance(query, Tensor) or not isinstance(context, Tensor) or query.ndim != 2 \
                or query.shape[-1] != self.d or context.shape != query.shape:
            raise ValueError(f"query and context must be [B, d={self.d}]")
        return F.tanh(self.combine(F.cat([context, query], axis=-1)))
