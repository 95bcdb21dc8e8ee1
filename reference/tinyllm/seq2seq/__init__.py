"""Sequence-to-sequence attention (course modules L4.x).

``additive`` holds L4.2's Bahdanau attention, ``length_mask`` and the masked read that every
attention here shares. IMPORTANT: ``luong`` is deliberately absent: it is the graded file of L4.3,
installed at run time as ``tinyllm.seq2seq.luong``, so nothing here may import it.
"""

from tinyllm.seq2seq.additive import AdditiveAttention, length_mask, masked_read

__all__ = ["AdditiveAttention", "length_mask", "masked_read"]
