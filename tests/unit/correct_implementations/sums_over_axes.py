"""L4.3 Luong attention, written from the chapter.

Different idioms on purpose: the scores are elementwise products summed over the last axis
(no batched matmul), the softmax is masked by hand with F.where, and the combine weight is
split into its two halves by slicing the Parameter.
"""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32

_KINDS = ("dot", "general", "concat")


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if not isinstance(score, str) or score not in _KINDS:
            raise ValueError(f"unknown score {score!r}; expected one of {_KINDS}")
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 1:
            raise ValueError(f"d must be a positive int, got {d!r}")
        if rng is None:
            rng = PCG32()
        self.d = int(d)
        self.score = score
        if score == "general":
            self.score_proj = Linear(self.d, self.d, bias=False, rng=rng)
        elif score == "concat":
            self.score_proj = Linear(2 * self.d, self.d, bias=False, rng=rng)
            self.v = Linear(self.d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * self.d, self.d, bias=False, rng=rng)

    # -- checks ------------------------------------------------------------------------------
    def _check_query(self, query: Tensor) -> None:
        if query.ndim != 2 or query.shape[1] != self.d:
            raise ValueError(f"query must be [B, d={self.d}], got {query.shape}")

    def _check_keys(self, keys: Tensor) -> None:
        if keys.ndim != 3 or keys.shape[2] != self.d:
            raise ValueError(f"keys must be [B, S, d={self.d}], got {keys.shape}")

    # -- the three pieces ---------------------------------------------------------------------
    def project_keys(self, keys: Tensor) -> Tensor:
        self._check_keys(keys)
        if self.score == "dot":
            return keys
        if self.score == "general":
            return F.linear(keys, self.score_proj.weight)  # W_a k
        return F.linear(keys, self.score_proj.weight[:, self.d:])  # W_k k, the key half

    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor:
        self._check_query(query)
        self._check_keys(keys)
        if query.shape[0] != keys.shape[0]:
            raise ValueError(f"query batch {query.shape[0]} != keys batch {keys.shape[0]}")
        if proj is None:
            proj = self.project_keys(keys)
        elif tuple(proj.shape) != tuple(keys.shape):
            raise ValueError(f"proj must have the keys' shape {keys.shape}, got {proj.shape}")
        h = query.unsqueeze(1)  # [B, 1, d]
        if self.score in ("dot", "general"):
            return (h * proj).sum(axis=-1)  # [B, S]
        w_h = self.score_proj.weight[:, : self.d]
        hidden = F.tanh(proj + F.linear(h, w_h))  # [B, S, d]
        return (hidden * self.v.weight[0]).sum(axis=-1)

    def _read(self, e: Tensor, keys: Tensor, mask: np.ndarray) -> tuple[Tensor, Tensor]:
        B, S = e.shape
        if not isinstance(mask, np.ndarray):
            raise ValueError(f"mask must be a numpy bool array, got {type(mask).__name__}")
        if mask.dtype != np.bool_:
            raise ValueError(f"mask must have dtype bool, got {mask.dtype}")
        if mask.shape != (B, S):
            raise ValueError(f"mask must be [B, S] = {(B, S)}, got {mask.shape}")
        has_any = np.zeros((B, 1), dtype=bool)
        for b in range(B):  # explicit loop: which rows have at least one real token
            for s in range(S):
                if mask[b, s]:
                    has_any[b, 0] = True
                    break
        keep = mask | ~has_any  # an empty row gets a harmless all-finite row
        neg = Tensor(np.full((B, S), -np.inf, dtype=e.dtype))
        filled = F.where(keep, e, neg)
        probs = F.softmax(filled, axis=-1)
        zero = Tensor(np.zeros((B, S), dtype=e.dtype))
        weights = F.where(mask & has_any, probs, zero)
        context = (weights.unsqueeze(-1) * keys).sum(axis=1)  # [B, d]
        return context, weights

    def forward(self, query: Tensor, keys: Tensor, mask: np.ndarray, proj: Tensor | None = None):
        e = self.scores(query, keys, proj)
        return self._read(e, keys, mask)

    def attentional(self, query: Tensor, context: Tensor) -> Tensor:
        self._check_query(query)
        if context.shape != query.shape:
            raise ValueError(f"context must be [B, d] = {query.shape}, got {context.shape}")
        w = self.combine.weight
        mixed = F.linear(context, w[:, : self.d]) + F.linear(query, w[:, self.d:])
        return F.tanh(mixed)
