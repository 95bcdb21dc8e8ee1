"""Luong attention (L4.3): the dot, general and concat scores, the masked read, and the
attentional state that input feeding passes on.

Luong, Pham and Manning (2015) attend with the decoder state computed at this step
(``query_from = "current"``), score it against each source position, read a context as in L4.2,
and combine context and state into ``tanh(W_c [c ; h])``, the state the output layer reads and the
next step's input is fed. The course checks this file's numbers against torch, so every formula
here is the paper's, with the course's masking rule.
"""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32
from tinyllm.seq2seq.additive import check_mask

SCORES = ("dot", "general", "concat")
# Padding is scored -inf, not a large negative number: with a finite value an all-padding row
# would softmax to uniform weights and read padding. -inf also marks which rows are empty.
NEG_INF = -np.inf


def _check_tensor(name: str, x: Tensor, shape: tuple[int | None, ...], meaning: str) -> None:
    """ValueError unless ``x`` is a Tensor of ``shape`` (None matches any size): wiring bugs
    between encoder, decoder and attention would otherwise broadcast into wrong numbers."""
    fits = (
        isinstance(x, Tensor)
        and x.ndim == len(shape)
        and all(want is None or want == got for want, got in zip(shape, x.shape))
    )
    if not fits:
        got = x.shape if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"{name} must be a Tensor of shape {meaning}, got {got}")


def masked_softmax(scores: Tensor, mask: np.ndarray) -> Tensor:
    """Softmax over real positions only; padding gets weight exactly 0 and no gradient.

    A row whose every filled score is -inf has nothing to read: its scores are zeroed before the
    softmax (so it cannot produce NaN) and its weights are zeroed after, so it reads nothing.
    """
    filled = F.masked_fill(scores, ~mask, NEG_INF)
    empty = np.isneginf(filled.data).all(axis=-1, keepdims=True)
    weights = F.softmax(F.masked_fill(filled, empty, 0.0), axis=-1)
    return F.masked_fill(weights, empty, 0.0)


class LuongAttention(Module):
    """Scores a decoder state against encoder outputs of the same width ``d``.

    Parameters (registration order is the checkpoint order, ``combine`` last, no biases):
    dot: ``combine.weight [d, 2d]``; general: ``score_proj.weight [d, d]`` (W_a) first;
    concat: ``score_proj.weight [d, 2d]`` (W_a) and ``v.weight [1, d]`` first.
    """

    query_from = "current"  # the decoder attends after its recurrent step, with h_t

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in SCORES:
            raise ValueError(f"unknown score {score!r}; expected one of {', '.join(SCORES)}")
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
            raise ValueError(f"d must be a positive int, got {d!r}")
        d = self.d = int(d)
        self.score = score
        rng = PCG32() if rng is None else rng  # one stream, so the layers start different
        if score == "general":
            self.score_proj = Linear(d, d, bias=False, rng=rng)
        elif score == "concat":
            self.score_proj = Linear(2 * d, d, bias=False, rng=rng)
            self.v = Linear(d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * d, d, bias=False, rng=rng)

    def _check_inputs(self, query: Tensor, keys: Tensor) -> tuple[int, int]:
        """(B, S) of a query [B, d] and keys [B, S, d], or a ValueError naming what is wrong."""
        _check_tensor("query", query, (None, self.d), f"[B, d={self.d}]")
        batch = query.shape[0]
        _check_tensor("keys", keys, (batch, None, self.d), f"[B={batch} (as the query), S, d={self.d}]")
        return batch, keys.shape[1]

    def project_keys(self, keys: Tensor) -> Tensor:
        """The part of the score that depends on the keys alone, computed once per sentence.

        dot: the keys; general: W_a k_s; concat: W_k k_s, W_k the last d columns of W_a (the
        columns that multiply k in W_a [h ; k]).
        """
        _check_tensor("keys", keys, (None, None, self.d), f"[B, S, d={self.d}]")
        if self.score == "dot":
            return keys
        if self.score == "general":
            return self.score_proj(keys)
        return F.linear(keys, self.score_proj.weight[:, self.d :])

    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor:
        """Unmasked scores [B, S]; ``proj`` is ``project_keys(keys)`` when the caller cached it."""
        self._check_inputs(query, keys)
        if proj is None:
            proj = self.project_keys(keys)
        else:
            _check_tensor("proj", proj, keys.shape, f"{keys.shape}, that of project_keys(keys)")
        if self.score == "concat":
            w_h = self.score_proj.weight[:, : self.d]  # the columns that multiply h in W_a [h ; k]
            hidden = F.tanh(proj + F.linear(query, w_h).unsqueeze(1))
            return self.v(hidden).squeeze(-1)
        # dot and general: h . proj_s, with proj_s = k_s or W_a k_s. Not scaled by 1/sqrt(d).
        return (proj @ query.unsqueeze(-1)).squeeze(-1)

    def forward(
        self, query: Tensor, keys: Tensor, mask: np.ndarray, proj: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """(context [B, d], weights [B, S]) of a masked read; ``mask`` is True at real tokens."""
        check_mask(mask, *self._check_inputs(query, keys))
        weights = masked_softmax(self.scores(query, keys, proj), mask)
        context = (weights.unsqueeze(1) @ keys).squeeze(1)
        return context, weights

    def attentional(self, query: Tensor, context: Tensor) -> Tensor:
        """tanh(W_c [c ; h]): context first, as Luong trained W_c (input feeding passes it on)."""
        _check_tensor("query", query, (None, self.d), f"[B, d={self.d}]")
        _check_tensor("context", context, query.shape, f"{query.shape}, that of the query")
        return F.tanh(self.combine(F.cat([context, query], axis=-1)))
