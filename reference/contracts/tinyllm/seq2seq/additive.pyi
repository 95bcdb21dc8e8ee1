# Contract of tinyllm.seq2seq.additive (course module L4.2).
# Masks are bool numpy arrays [B, S], True = real token.
import numpy as np

from tinyllm.autograd.tensor import Tensor
from tinyllm.nn.linear import Linear
from tinyllm.nn.module import Module
from tinyllm.random import PCG32

def length_mask(lengths: np.ndarray | list[int], max_len: int) -> np.ndarray: ...  # bool [B, max_len]
def check_mask(mask: object, batch: int, source_len: int) -> np.ndarray: ...  # ValueError unless bool [B, S]

# (context [B, d], weights [B, S]): -inf before the softmax, masked weights exactly 0 with no
# gradient; a row with no real token has zero weights and a zero context, and no nan anywhere.
def masked_read(scores: Tensor, keys: Tensor, mask: np.ndarray) -> tuple[Tensor, Tensor]: ...

class AdditiveAttention(Module):
    # score v . tanh(W_q q + W_k k_s); parameters query_proj.weight, key_proj.weight, v.weight
    d_query: int
    d_key: int
    d_attn: int
    query_proj: Linear  # weight [d_attn, d_query]
    key_proj: Linear  # weight [d_attn, d_key]
    v: Linear  # weight [1, d_attn]
    def __init__(self, d_query: int, d_key: int, d_attn: int, rng: PCG32 | None = None) -> None: ...
    def project_keys(self, keys: Tensor) -> Tensor: ...  # [B, S, d_key] -> [B, S, d_attn]
    def scores(self, query: Tensor, keys: Tensor, proj: Tensor | None = None) -> Tensor: ...  # [B, S], unmasked
    def forward(
        self, query: Tensor, keys: Tensor, mask: np.ndarray, proj: Tensor | None = None
    ) -> tuple[Tensor, Tensor]: ...  # (context [B, d_key], weights [B, S])
