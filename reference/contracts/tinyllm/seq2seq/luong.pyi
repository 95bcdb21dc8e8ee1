# Contract of tinyllm.seq2seq.luong: the file students write in course module L4.3.
#
# Parameters, in registration order, no biases:
#   dot      combine.weight [d, 2d]
#   general  score_proj.weight [d, d], combine.weight [d, 2d]
#   concat   score_proj.weight [d, 2d], v.weight [1, d], combine.weight [d, 2d]
# mask is a bool numpy array [B, S], True = real token. Bad input (unknown score, wrong widths,
# wrong mask shape or dtype) raises ValueError naming the problem.
from typing import ClassVar, Literal

import numpy as np

from tinyllm.autograd.tensor import Tensor
from tinyllm.nn.module import Module
from tinyllm.random import PCG32

class LuongAttention(Module):
    query_from: ClassVar[str]  # "current": the decoder attends with the state after its step
    # Every parameter is drawn from rng, one stream for all of them (no two alike); with no rng,
    # from a fresh PCG32(), as Linear does, so the default initialisation is the same every time.
    # Any other score than these three, aliases included, raises ValueError naming the score.
    def __init__(self, d: int, score: Literal["dot", "general", "concat"], rng: PCG32 | None = None) -> None: ...
    # The keys as the score reads them [B, S, d]: keys (dot), W_a k (general), W_k k (concat,
    # the last d columns of W_a). Computed once per source sentence.
    def project_keys(self, keys: Tensor) -> Tensor: ...
    # Unmasked scores [B, S] for query [B, d] and keys [B, S, d]; dot is not scaled.
    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor: ...
    # (context [B, d], weights [B, S]): masked with -inf before the softmax; masked weights
    # exactly 0; an all-padding row has zero weights and a zero context, without nan.
    def forward(
        self, query: Tensor, keys: Tensor, mask: np.ndarray, proj: Tensor | None = None
    ) -> tuple[Tensor, Tensor]: ...
    # The attentional state tanh(W_c [c ; h]) [B, d], context first.
    def attentional(self, query: Tensor, context: Tensor) -> Tensor: ...
