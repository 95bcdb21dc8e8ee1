from tinyllm.seq2seq.luong import LuongAttention


def test_constructs():
    assert LuongAttention(2, "dot")
