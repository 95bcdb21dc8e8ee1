from tinyllm.seq2seq.luong import LuongAttention


def test_builds():
    assert LuongAttention(2, "dot").query_from == "current"


def test_never_ends():
    while True:
        pass
