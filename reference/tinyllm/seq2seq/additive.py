"""Additive (Bahdanau) attention from L4.2, and the masked read that Luong attention reuses.

Masks are bool arrays ``[B, S]`` with True at real tokens (the opposite of torch's key-padding
masks). Padding is masked with -inf before the softmax, never with a large negative number: with
-1e9 an all-padding row would read its padding uniformly (the course's pitfall s05). A row with
no real token instead reads nothing, by an explicit rule.
"""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32


def length_mask(lengths: np.ndarray | list[int], max_len: int) -> np.ndarray:
    """Bool ``[B, max_len]``: True at the first ``lengths[b]`` positions of row ``b``."""
    if not isinstance(max_len, (int, np.integer)) or isinstance(max_len, bool) or max_len < 0:
        raise ValueError(f"max_len must be a non-negative int, got {max_len!r}")
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or (lengths.size and lengths.dtype.kind not in "iu"):
        raise ValueError(f"lengths must be a 1-D sequence of ints, got {lengths.dtype} of shape {lengths.shape}")
    if lengths.size and (lengths.min() < 0 or lengths.max() > max_len):
        raise ValueError(f"lengths must lie in [0, max_len={max_len}], got {lengths.tolist()}")
    return np.arange(max_len)[None, :] < lengths[:, None]


def check_mask(mask: object, batch: int, source_len: int) -> np.ndarray:
    """The mask as given, if it is a bool ndarray ``[batch, source_len]``; else a ValueError."""
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        got = f"dtype {mask.dtype}" if isinstance(mask, np.ndarray) else type(mask).__name__
        raise ValueError(f"mask must be a bool numpy array (True = real token), got {got}")
    if mask.shape != (batch, source_len):
        raise ValueError(f"mask has shape {mask.shape}, expected [B, S] = {(batch, source_len)}")
    return mask


def masked_read(scores: Tensor, keys: Tensor, mask: np.ndarray) -> tuple[Tensor, Tensor]:
    """Softmax the scores over real positions and read the keys: (context ``[B, d]``, weights ``[B, S]``).

    Padded positions get weight exactly 0 and no gradient. A row with no real token gets zero
    weights and a zero context: its scores are replaced by a finite row before the softmax (so no
    nan is ever computed) and its weights by zeros after it (so nothing flows back).
    """
    if scores.ndim != 2 or keys.ndim != 3 or keys.shape[:2] != scores.shape:
        raise ValueError(f"masked_read() needs scores [B, S] and keys [B, S, d], got {scores.shape} and {keys.shape}")
    mask = check_mask(mask, *scores.shape)
    empty = ~mask.any(axis=-1, keepdims=True)  # [B, 1]
    filled = F.masked_fill(F.masked_fill(scores, ~mask, -np.inf), empty, 0.0)
    weights = F.where(empty, 0.0, F.softmax(filled, axis=-1))
    context = (weights.unsqueeze(1) @ keys).squeeze(1)  # [B, 1, S] @ [B, S, d] -> [B, d]
    return context, weights


class AdditiveAttention(Module):
    """Bahdanau's score ``v · tanh(W_q q + W_k k_s)``, without biases.

    Parameters, in order: ``query_proj.weight [d_attn, d_query]``, ``key_proj.weight
    [d_attn, d_key]``, ``v.weight [1, d_attn]``.
    """

    def __init__(self, d_query: int, d_key: int, d_attn: int, rng: PCG32 | None = None) -> None:
        super().__init__()
        rng = PCG32() if rng is None else rng
        self.d_query, self.d_key, self.d_attn = d_query, d_key, d_attn
        self.query_proj = Linear(d_query, d_attn, bias=False, rng=rng)
        self.key_proj = Linear(d_key, d_attn, bias=False, rng=rng)
        self.v = Linear(d_attn, 1, bias=False, rng=rng)

    def project_keys(self, keys: Tensor) -> Tensor:
        """``W_k k_s`` for every position ``[B, S, d_attn]``: computed once per source sentence."""
        if keys.ndim != 3 or keys.shape[-1] != self.d_key:
            raise ValueError(f"keys must be [B, S, d_key={self.d_key}], got shape {keys.shape}")
        return self.key_proj(keys)

    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor:
        """Unmasked scores ``[B, S]``; ``proj`` is ``project_keys(keys)`` if already computed."""
        if query.ndim != 2 or query.shape[-1] != self.d_query:
            raise ValueError(f"query must be [B, d_query={self.d_query}], got shape {query.shape}")
        proj = self.project_keys(keys) if proj is None else proj
        if proj.shape != keys.shape[:2] + (self.d_attn,):
            raise ValueError(f"proj must be [B, S, d_attn] = {keys.shape[:2] + (self.d_attn,)}, got {proj.shape}")
        hidden = F.tanh(proj + self.query_proj(query).unsqueeze(1))  # [B, S, d_attn]
        return self.v(hidden).squeeze(-1)

    def forward(
        self, query: Tensor, keys: Tensor, mask: np.ndarray, proj: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """(context ``[B, d_key]``, weights ``[B, S]``) for one decoder query."""
        return masked_read(self.scores(query, keys, proj), keys, mask)
