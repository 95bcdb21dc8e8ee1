"""L4.3 Luong attention.

My masked read gathers each row's real scores with a 0/1 selection matrix, softmaxes only those,
and scatters them back with the transposed matrix, so padding never enters the softmax at all
(its weight is an exact 0 and it has no gradient path). Selection matrices depend only on the
mask's contents, so I memoise them on the mask's bytes. An empty row has no real score: its
weights are a constant zero row.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32

_VALID = ("dot", "general", "concat")
_CACHE_SIZE = 64


class _SelectionCache:
    def __init__(self) -> None:
        self._store: OrderedDict[tuple, list] = OrderedDict()

    def get(self, mask: np.ndarray) -> list:
        key = (mask.shape, mask.tobytes())
        hit = self._store.get(key)
        if hit is not None:
            self._store.move_to_end(key)
            return hit
        rows = []
        for b in range(mask.shape[0]):
            idx = np.flatnonzero(mask[b])
            sel = np.zeros((mask.shape[1], idx.size))  # [S, n_real], float64; cast per dtype on use
            sel[idx, np.arange(idx.size)] = 1.0
            rows.append(sel)
        self._store[key] = rows
        if len(self._store) > _CACHE_SIZE:
            self._store.popitem(last=False)
        return rows


_SELECTIONS = _SelectionCache()


def _masked_read(e: Tensor, keys: Tensor, mask: np.ndarray) -> tuple[Tensor, Tensor]:
    batch, length = e.shape
    per_row = []
    for b, sel in enumerate(_SELECTIONS.get(mask)):
        if sel.shape[1] == 0:
            per_row.append(Tensor(np.zeros((1, length), dtype=e.dtype)))
            continue
        s = Tensor(sel.astype(e.dtype))
        real = e[b : b + 1] @ s                 # [1, n_real]
        w = F.softmax(real, axis=-1) @ s.transpose(0, 1)   # back to [1, S]; padding exactly 0
        per_row.append(w)
    weights = F.cat(per_row, axis=0)
    context = (weights.unsqueeze(-1) * keys).sum(axis=1)
    return context, weights


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in _VALID:
            raise ValueError(f"score={score!r} is not supported; valid scores: {_VALID}")
        self.d = d
        self.score = score
        if rng is None:
            rng = PCG32()
        layers = []
        if score == "general":
            layers.append(("score_proj", Linear(d, d, bias=False, rng=rng)))
        elif score == "concat":
            layers.append(("score_proj", Linear(2 * d, d, bias=False, rng=rng)))
            layers.append(("v", Linear(d, 1, bias=False, rng=rng)))
        layers.append(("combine", Linear(2 * d, d, bias=False, rng=rng)))
        for name, layer in layers:
            setattr(self, name, layer)

    def _need(self, what, t, rank):
        if not isinstance(t, Tensor):
            raise ValueError(f"{what} must be a tinyllm Tensor")
        if t.ndim != rank or t.shape[-1] != self.d:
            raise ValueError(f"{what} has shape {t.shape}; its last axis must be d={self.d} and rank {rank}")

    def project_keys(self, keys: Tensor) -> Tensor:
        self._need("keys", keys, 3)
        return {
            "dot": lambda: keys,
            "general": lambda: self.score_proj(keys),
            "concat": lambda: F.linear(keys, self.score_proj.weight[:, self.d:]),
        }[self.score]()

    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor:
        self._need("query", query, 2)
        self._need("keys", keys, 3)
        if keys.shape[0] != query.shape[0]:
            raise ValueError("query and keys disagree on the batch size")
        proj = self.project_keys(keys) if proj is None else proj
        if proj.shape != keys.shape:
            raise ValueError("proj must be the output of project_keys(keys)")
        if self.score == "concat":
            h_part = self.score_proj.weight[:, : self.d]
            act = F.tanh(F.linear(query, h_part).unsqueeze(1) + proj)
            return (act * self.v.weight).sum(axis=-1)
        return (proj @ query.unsqueeze(-1)).squeeze(-1)

    def forward(self, query, keys, mask, proj=None, *, return_scores: bool = False):
        e = self.scores(query, keys, proj)
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != e.shape:
            raise ValueError(
                f"mask must be a bool ndarray of shape {e.shape}; got "
                f"{getattr(mask, 'dtype', type(mask).__name__)} {getattr(mask, 'shape', '')}")
        context, weights = _masked_read(e, keys, mask)
        return (context, weights, e) if return_scores else (context, weights)

    def attentional(self, query: Tensor, context: Tensor) -> Tensor:
        self._need("query", query, 2)
        self._need("context", context, 2)
        return F.tanh(self.combine(F.cat([context, query], axis=-1)))
