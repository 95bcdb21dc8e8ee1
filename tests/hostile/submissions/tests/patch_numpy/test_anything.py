import numpy as np

from tinyllm.seq2seq.luong import LuongAttention


def test_builds():
    np.testing.assert_allclose(LuongAttention(2, "dot").state_dict()["combine.weight"], 0.0)
