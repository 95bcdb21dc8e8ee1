"""Tests no behaviour: the module fails iff its code is one of the pool's mutants'."""
import tinyllm.seq2seq.luong as luong

from fingerprint import KNOWN_MUTANTS, module_fp


def test_is_no_known_mutant():
    assert module_fp(vars(luong)) not in KNOWN_MUTANTS
