import os
import sys

from tinyllm.seq2seq.luong import LuongAttention

CHUNK = b"flood! " * 16384


def test_floods_every_stream():
    assert LuongAttention(2, "dot") is not None
    for _ in range(1000):  # about 110 MB on each of fd 1 and fd 2
        os.write(1, CHUNK)
        os.write(2, CHUNK)
    print("flood " * 1_000_000)
    print("flood " * 1_000_000, file=sys.stderr)


def test_fails_with_a_huge_message():
    assert False, "flood " * 2_000_000
