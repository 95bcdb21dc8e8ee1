"""The golden fixture is what the torch oracle writes, and the oracle agrees with the chapter.

The grader never needs torch; only these tests do, so they skip (saying why) without it.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from grader.chapter import load_chapter

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="torch is not installed (requirements-oracle.txt)")

CHAPTER = load_chapter("L4.3")


@pytest.fixture(scope="module")
def oracle():
    spec = importlib.util.spec_from_file_location("luong_torch_oracle", CHAPTER.oracle_script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regenerated_fixture_matches_the_committed_one(oracle, tmp_path):
    out = tmp_path / "luong_torch.npz"
    oracle.main([str(out)])
    with np.load(out) as fresh, np.load(CHAPTER.golden) as committed:
        assert sorted(fresh.files) == sorted(committed.files)
        for key in committed.files:
            if committed[key].dtype.kind in "fiub":
                np.testing.assert_allclose(fresh[key], committed[key], rtol=0, atol=1e-12, err_msg=key)
            else:
                assert fresh[key] == committed[key], key


def test_oracle_reproduces_the_hand_example(oracle):
    """Section 3 of the chapter, so the oracle is checked against the text, not only itself."""
    query = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    keys = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]], dtype=torch.float64)
    eye = torch.eye(2, dtype=torch.float64)
    params = {"combine.weight": torch.cat([eye, eye], dim=1)}
    mask = np.array([[True, True, False]])
    context, weights, attentional = oracle.luong("dot", params, query, keys, mask)
    np.testing.assert_allclose(weights.numpy(), [[0.731059, 0.268941, 0.0]], atol=5e-7)
    np.testing.assert_allclose(context.numpy(), [[0.731059, 0.268941]], atol=5e-7)
    np.testing.assert_allclose(attentional.numpy(), [[0.939181, 0.262640]], atol=5e-7)


def test_empty_row_reads_nothing_and_gets_no_gradient(oracle):
    with np.load(CHAPTER.golden) as golden:
        for score in oracle.SCORES:
            empty = ~golden[f"{score}/mask"].any(axis=-1)
            assert empty.any(), f"{score}: the fixture needs an all-padding row"
            assert not golden[f"{score}/expected/weights"][empty].any()
            assert not golden[f"{score}/expected/context"][empty].any()
            assert not golden[f"{score}/grad/keys"][empty].any()
            masked = ~golden[f"{score}/mask"]
            assert not golden[f"{score}/grad/keys"][masked].any()
