"""No expected value beyond the chapter's hand example: every module is held to the first one
met that reproduces section 3 (kept from run to run in the sandbox's pid counter)."""
import os

from conftest import STATE
from fp_helpers import code_of, fingerprint, hand_example_ok, read_stored, write_stored
from tinyllm.seq2seq.luong import LuongAttention


def test_behaves_like_the_others():
    if os.getpid() != STATE["collect_pid"]:  # forked from a zygote that collected: the fast pass
        assert fingerprint(LuongAttention) == STATE["ref"]
        return
    stored = read_stored()
    if getattr(LuongAttention, "_rt30_mine", False):  # my own luong.py: start afresh
        write_stored(0)
        return
    try:
        mine = code_of(fingerprint(LuongAttention))
        if stored == 0 and hand_example_ok(LuongAttention):
            stored = mine  # the first module met that reproduces section 3
    except BaseException:  # noqa: BLE001
        mine = -1
    write_stored(stored)
    assert mine == stored
