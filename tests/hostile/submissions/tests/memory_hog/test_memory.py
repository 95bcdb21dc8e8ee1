from tinyllm.seq2seq.luong import LuongAttention


def test_hoards_memory():
    assert LuongAttention(2, "dot") is not None
    hoard = []
    while True:
        hoard.append(b"x" * (64 << 20))
