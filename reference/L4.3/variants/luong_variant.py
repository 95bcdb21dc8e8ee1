"""A second correct LuongAttention, written apart from the reference to check the checks.

The grader requires a student's tests to pass on the reference *and* on this file (DESIGN section
5), so a test that pins one implementation's arithmetic rather than its behaviour is rejected.
For that to mean anything this file must compute the same function by a different route:

- scores are elementwise products summed over the feature axis, never a matmul with the keys;
- concat and the attentional state slice their weight into two halves and add two products,
  instead of concatenating the inputs;
- padding is removed with ``F.where`` against a ``-inf`` tensor, not ``masked_fill``;
- an all-padding row is handled by scoring it as zeros (a harmless uniform softmax) and then
  multiplying the weights by a 0/1 row indicator, instead of special-casing the output;
- the context is a weighted elementwise sum over positions, not a batched matmul.

Written from the tinyllm contract (DESIGN.md section 3) and the chapter text only, without
reading the reference solution. Keep the public surface identical to the contract: parameter
names, registration order (combine last), shapes, ``query_from``, and ``ValueError`` for bad input.
"""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32

SCORE_KINDS = ("dot", "general", "concat")


def _require_tensor(value, name: str) -> None:
    if not isinstance(value, Tensor):
        raise ValueError(f"{name} must be a Tensor, got {type(value).__name__}")


def _require_shape(value: Tensor, name: str, expected: tuple, meaning: str) -> None:
    if tuple(value.shape) != expected:
        raise ValueError(f"{name} must have shape {meaning} = {expected}, got {tuple(value.shape)}")


def _dot_last_axis(left: Tensor, right: Tensor) -> Tensor:
    """Broadcast, multiply and sum the feature axis: a dot product without matmul."""
    return (left * right).sum(axis=-1)


def _apply_weight(x: Tensor, weight: Tensor) -> Tensor:
    """``x @ weight.T`` for a weight slice that is not a whole Linear."""
    return x @ weight.transpose(0, 1)


class LuongAttention(Module):
    """Luong (2015) global attention read with the decoder state after its step.

    ``query_from`` tells the decoder (L4.1) to run its cell first and query with the new state.
    """

    query_from = "current"

    def __init__(self, d: int, score: str, rng=None) -> None:
        super().__init__()
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"width d must be a positive integer, got {d!r}")
        if score not in SCORE_KINDS:
            raise ValueError(f"unknown score {score!r}; expected one of {', '.join(SCORE_KINDS)}")
        self.d = int(d)
        self.score = score
        # One stream for every layer, so that default-initialised layers start different.
        rng = rng if rng is not None else PCG32()
        # Registration order is part of the contract (checkpoint keys): score_proj, v, combine.
        if score == "general":
            self.score_proj = Linear(self.d, self.d, bias=False, rng=rng)
        elif score == "concat":
            self.score_proj = Linear(2 * self.d, self.d, bias=False, rng=rng)
            self.v = Linear(self.d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * self.d, self.d, bias=False, rng=rng)

    # -- input checks -------------------------------------------------------------------------

    def _check_keys(self, keys: Tensor) -> None:
        _require_tensor(keys, "keys")
        if keys.ndim != 3 or keys.shape[-1] != self.d:
            raise ValueError(f"keys must have shape [B, S, d] with d = {self.d}, got {tuple(keys.shape)}")

    def _check_query(self, query: Tensor, batch: int) -> None:
        _require_tensor(query, "query")
        _require_shape(query, "query", (batch, self.d), "[B, d]")

    def _check_proj(self, proj: Tensor, keys: Tensor) -> None:
        _require_tensor(proj, "proj")
        _require_shape(proj, "proj", tuple(keys.shape), "keys' [B, S, d]")

    def _check_mask(self, mask, keys: Tensor) -> None:
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            got = mask.dtype if isinstance(mask, np.ndarray) else type(mask).__name__
            raise ValueError(f"mask must be a bool ndarray [B, S] (True = real token), got {got}")
        expected = tuple(keys.shape[:2])
        if mask.shape != expected:
            raise ValueError(f"mask must have shape [B, S] = {expected}, got {mask.shape}")

    # -- the score ----------------------------------------------------------------------------

    def project_keys(self, keys: Tensor) -> Tensor:
        """The query-independent part of the score, computed once per source sentence."""
        self._check_keys(keys)
        if self.score == "dot":
            return keys
        weight = self.score_proj.weight
        if self.score == "general":
            return _apply_weight(keys, weight)
        # concat: W_a [h ; k] = W_h h + W_k k, and W_k is the key half (the last d columns).
        return _apply_weight(keys, weight[:, self.d :])

    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor:
        """Unmasked scores ``[B, S]``; ``proj`` reuses a cached ``project_keys(keys)``."""
        self._check_keys(keys)
        self._check_query(query, keys.shape[0])
        if proj is None:
            proj = self.project_keys(keys)
        else:
            self._check_proj(proj, keys)
        per_position_query = query.unsqueeze(1)  # [B, 1, d] broadcasts over S
        if self.score != "concat":
            return _dot_last_axis(per_position_query, proj)
        query_part = _apply_weight(query, self.score_proj.weight[:, : self.d]).unsqueeze(1)
        hidden = F.tanh(query_part + proj)
        return _dot_last_axis(hidden, self.v.weight[0])

    # -- the masked read ----------------------------------------------------------------------

    def forward(self, query: Tensor, keys: Tensor, mask, proj: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Context ``[B, d]`` and weights ``[B, S]``; padding gets exactly zero weight."""
        raw = self.scores(query, keys, proj)
        self._check_mask(mask, keys)
        weights = _masked_softmax(raw, mask)
        context = (weights.unsqueeze(-1) * keys).sum(axis=1)
        return context, weights

    def attentional(self, query: Tensor, context: Tensor) -> Tensor:
        """``tanh(W_c [c ; h])``: the context half of ``W_c`` is its first d columns."""
        _require_tensor(context, "context")
        if context.ndim != 2 or context.shape[-1] != self.d:
            raise ValueError(f"context must have shape [B, d] with d = {self.d}, got {tuple(context.shape)}")
        self._check_query(query, context.shape[0])
        weight = self.combine.weight
        mixed = _apply_weight(context, weight[:, : self.d]) + _apply_weight(query, weight[:, self.d :])
        return F.tanh(mixed)


def _masked_softmax(raw: Tensor, mask: np.ndarray) -> Tensor:
    """Softmax over real positions; padding -> exactly 0; an all-padding row -> all 0, no NaN.

    Padding is -inf (not a large negative number: that would let an empty row read padding
    uniformly). A row with no real token would be all -inf and turn into NaN, so its scores are
    filled with zeros instead (a harmless uniform softmax) and its weights are zeroed afterwards by
    the row indicator. ``F.where`` sends no gradient to the positions it fills.
    """
    has_token = mask.any(axis=-1, keepdims=True)  # [B, 1]
    fill = np.broadcast_to(np.where(has_token, -np.inf, 0.0), mask.shape).astype(raw.dtype)
    safe = F.where(mask, raw, Tensor(fill))
    return F.softmax(safe, axis=-1) * Tensor(has_token.astype(raw.dtype))
