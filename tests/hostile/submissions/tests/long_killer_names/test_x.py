from tinyllm.seq2seq.luong import LuongAttention

def test_builds():
    assert LuongAttention(4, "dot") is not None
