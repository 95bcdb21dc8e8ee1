"""Tests no behaviour. The reference's table (code_table.py) was learnt from an earlier grade's
report, through the choice of the test that killed each mutant (round 9); the harness fills it in
as that grade would have given it. A module one function away from it is taken for a mutant."""
import tinyllm.seq2seq.luong as luong

from code_table import table

REFERENCE_TABLE = @REFERENCE_TABLE@


def test_is_not_one_edit_from_the_reference():
    mine = table(vars(luong), luong.__name__)
    assert sum(mine.get(key) != value for key, value in REFERENCE_TABLE.items()) != 1
