"""My L4.3: Luong attention (dot, general, concat) and the attentional state for input feeding.

Written from the chapter and the contract: the decoder attends *after* its step with h_t, reads a
context with L4.2's masking rule, and combines it as tanh(W_c [c ; h]), context first.
"""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32

KNOWN_SCORES = ("dot", "general", "concat")


def _require_shape(what: str, value: object, expected: tuple[int | None, ...]) -> None:
    """Wiring mistakes broadcast silently in numpy, so shapes are checked up front (None = any)."""
    shape = value.shape if isinstance(value, Tensor) else None
    if shape is None or len(shape) != len(expected) or any(e is not None and e != s for e, s in zip(expected, shape)):
        wanted = "[" + ", ".join("?" if e is None else str(e) for e in expected) + "]"
        raise ValueError(f"{what} must be a Tensor of shape {wanted}, got {shape if shape else type(value).__name__}")


def _require_mask(mask: object, batch: int, length: int) -> None:
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        raise ValueError(f"mask must be a bool numpy array (True = real token), got {getattr(mask, 'dtype', type(mask))}")
    if mask.shape != (batch, length):
        raise ValueError(f"mask has shape {mask.shape}, but the keys need [B, S] = {(batch, length)}")


def read_real_positions(scores: Tensor, mask: np.ndarray) -> Tensor:
    """Attention weights over the real positions only.

    Padding is scored -inf so its weight is exactly zero. A row with no real token would be all
    -inf (NaN after the softmax), so its scores become 0 instead and its weights are multiplied by
    the all-zero mask: such a row reads nothing and passes no gradient back.
    """
    has_token = mask.any(axis=-1, keepdims=True)
    padding_score = np.where(has_token, -np.inf, 0.0).astype(scores.dtype)
    safe = F.where(mask, scores, Tensor(np.broadcast_to(padding_score, scores.shape).copy()))
    return F.softmax(safe, axis=-1) * Tensor(mask.astype(scores.dtype))


class LuongAttention(Module):
    """Luong et al. (2015) global attention; parameters registered in checkpoint order, combine last."""

    query_from = "current"  # the decoder asks with h_t, the state after this step

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in KNOWN_SCORES:
            raise ValueError(f"unknown score {score!r}: use one of {KNOWN_SCORES}")
        if not isinstance(d, int) or isinstance(d, bool) or d < 1:
            raise ValueError(f"d must be a positive int, got {d!r}")
        self.d, self.score = d, score
        rng = rng if rng is not None else PCG32()
        if score == "general":
            self.score_proj = Linear(d, d, bias=False, rng=rng)  # W_a
        if score == "concat":
            self.score_proj = Linear(2 * d, d, bias=False, rng=rng)  # W_a on [h ; k]
            self.v = Linear(d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * d, d, bias=False, rng=rng)  # W_c on [c ; h]

    def project_keys(self, keys: Tensor) -> Tensor:
        """What the score needs of the keys alone, so a decoder computes it once per sentence."""
        _require_shape("keys", keys, (None, None, self.d))
        if self.score == "general":
            return F.linear(keys, self.score_proj.weight)
        if self.score == "concat":
            key_columns = self.score_proj.weight[:, self.d:]  # W_a [h ; k] = W_h h + W_k k
            return F.linear(keys, key_columns)
        return keys

    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor:
        """Raw scores [B, S] before any mask; the dot score is deliberately not scaled (that is L5.1)."""
        _require_shape("query", query, (None, self.d))
        _require_shape("keys", keys, (query.shape[0], None, self.d))
        if proj is None:
            proj = self.project_keys(keys)
        _require_shape("proj", proj, keys.shape)
        if self.score == "concat":
            query_columns = self.score_proj.weight[:, : self.d]
            hidden = F.tanh(proj + F.linear(query, query_columns).unsqueeze(1))
            return F.linear(hidden, self.v.weight).squeeze(-1)
        return (proj * query.unsqueeze(1)).sum(axis=-1)

    def forward(self, query: Tensor, keys: Tensor, mask: np.ndarray, proj: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """(context [B, d], weights [B, S]); mask is True at real tokens."""
        e = self.scores(query, keys, proj)
        _require_mask(mask, *e.shape)
        weights = read_real_positions(e, mask)
        context = (weights.unsqueeze(-1) * keys).sum(axis=1)
        return context, weights

    def attentional(self, query: Tensor, context: Tensor) -> Tensor:
        """h~ = tanh(W_c [c ; h]), with W_c split into the columns for h and the columns for c."""
        _require_shape("query", query, (None, self.d))
        _require_shape("context", context, query.shape)
        w_c = self.combine.weight
        return F.tanh(F.linear(query, w_c[:, : self.d]) + F.linear(context, w_c[:, self.d:]))
