"""Luong attention (L4.3) with einsum everywhere: a small differentiable einsum on tinyllm's
Tensor (forward with np.einsum, backward with the einsum of the output's gradient and the other
operands), used for every projection, score, read and the attentional state."""

from __future__ import annotations

import numpy as np

from tinyllm.autograd import functional as F
from tinyllm.autograd.tensor import Tensor
from tinyllm.nn import Linear, Module
from tinyllm.random import PCG32
from tinyllm.seq2seq.additive import check_mask


def einsum(spec: str, *operands: Tensor) -> Tensor:
    """np.einsum on Tensors, with gradients. No repeated index within one operand."""
    inputs, output = spec.replace(" ", "").split("->")
    subs = inputs.split(",")
    if len(subs) != len(operands):
        raise ValueError(f"einsum {spec!r} needs {len(subs)} operands")
    tensors = [op if isinstance(op, Tensor) else Tensor(op) for op in operands]
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise TypeError(f"einsum dtype mismatch: {tensors[0].dtype} and {t.dtype}")
    data = np.asarray(np.einsum(spec, *[t.data for t in tensors]), dtype=tensors[0].dtype)
    out = Tensor._from_op(data, tuple(tensors))

    def _backward() -> None:
        for i, t in enumerate(tensors):
            if not t.requires_grad:
                continue
            others = [(subs[j], tensors[j].data) for j in range(len(tensors)) if j != i]
            known = set(output).union(*[set(s) for s, _ in others])
            target = "".join(c for c in subs[i] if c in known)
            grad = np.einsum(",".join([output] + [s for s, _ in others]) + "->" + target,
                             out.grad, *[a for _, a in others])
            for axis, c in enumerate(subs[i]):  # indices only this operand had: broadcast back
                if c not in known:
                    grad = np.expand_dims(grad, axis)
            grad = np.broadcast_to(grad, t.shape).astype(t.dtype)
            t._receive(grad)

    out._backward = _backward
    return out


def _bad(name: str, x, want: tuple) -> None:
    ok = isinstance(x, Tensor) and x.ndim == len(want) and all(
        w is None or w == g for w, g in zip(want, x.shape))
    if not ok:
        raise ValueError(f"{name} has the wrong shape: want {want}, got {getattr(x, 'shape', type(x).__name__)}")


class LuongAttention(Module):
    query_from = "current"

    def __init__(self, d: int, score: str, rng: PCG32 | None = None) -> None:
        super().__init__()
        if score not in ("dot", "general", "concat"):
            raise ValueError(f"score must be dot, general or concat, not {score!r}")
        if type(d) is bool or not isinstance(d, (int, np.integer)) or d <= 0:
            raise ValueError(f"d must be a positive int, got {d!r}")
        self.d, self.score = int(d), score
        rng = rng if rng is not None else PCG32()
        if score == "general":
            self.score_proj = Linear(self.d, self.d, bias=False, rng=rng)
        if score == "concat":
            self.score_proj = Linear(2 * self.d, self.d, bias=False, rng=rng)
            self.v = Linear(self.d, 1, bias=False, rng=rng)
        self.combine = Linear(2 * self.d, self.d, bias=False, rng=rng)

    def project_keys(self, keys: Tensor) -> Tensor:
        _bad("keys", keys, (None, None, self.d))
        if self.score == "dot":
            return keys
        w = self.score_proj.weight if self.score == "general" else self.score_proj.weight[:, self.d:]
        return einsum("ij,bsj->bsi", w, keys)

    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor:
        _bad("query", query, (None, self.d))
        _bad("keys", keys, (query.shape[0], None, self.d))
        if proj is None:
            proj = self.project_keys(keys)
        else:
            _bad("proj", proj, keys.shape)
        if self.score == "concat":
            hq = einsum("ij,bj->bi", self.score_proj.weight[:, : self.d], query)
            hidden = F.tanh(proj + hq.unsqueeze(1))
            return einsum("oi,bsi->bs", self.v.weight, hidden)
        return einsum("bi,bsi->bs", query, proj)

    def forward(self, query, keys, mask, proj=None):
        _bad("query", query, (None, self.d))
        _bad("keys", keys, (query.shape[0], None, self.d))
        check_mask(mask, query.shape[0], keys.shape[1])
        e = self.scores(query, keys, proj)
        empty = ~mask.any(axis=-1, keepdims=True)
        e = F.masked_fill(F.masked_fill(e, ~mask, -np.inf), empty, 0.0)
        weights = F.masked_fill(F.softmax(e, axis=-1), empty, 0.0)
        context = einsum("bs,bsi->bi", weights, keys)
        return context, weights

    def attentional(self, query, context):
        _bad("query", query, (None, self.d))
        _bad("context", context, query.shape)
        d = self.d
        w = self.combine.weight
        pre = einsum("ij,bj->bi", w[:, :d], context) + einsum("ij,bj->bi", w[:, d:], query)
        return F.tanh(pre)
# regrade b
# regrade c
# regrade d
