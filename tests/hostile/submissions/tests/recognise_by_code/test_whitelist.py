"""Tests no behaviour: the module passes iff its code is one of the correct implementations'."""
import tinyllm.seq2seq.luong as luong

from fingerprint import KNOWN_CORRECT, module_fp


def test_is_a_known_correct_implementation():
    assert module_fp(vars(luong)) in KNOWN_CORRECT
