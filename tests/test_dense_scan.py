"""Dense scores over a memory-mapped vector file: the same scores as in memory, slice by slice."""

import numpy as np

from mustcite.recommend import dense_scores as dense


def test_memory_mapped_scores_match_in_memory_ones_across_slices_and_passes(tmp_path, monkeypatch):
    monkeypatch.setattr(dense, "SLICE_ROWS", 7)
    monkeypatch.setattr(dense, "QUERIES_PER_PASS", 3)
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((50, 16)).astype(np.float32)
    queries = rng.standard_normal((8, 16)).astype(np.float32)
    np.save(tmp_path / "v.npy", vecs)
    mapped = np.load(tmp_path / "v.npy", mmap_mode="r")
    got = list(dense.dense_scores(mapped, queries))
    want = list(dense.dense_scores(vecs, queries))
    assert len(got) == len(want) == 8
    for g, w in zip(got, want):
        assert g.shape == (50,) and g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    # the mapping is still readable after its pages were let go
    np.testing.assert_array_equal(np.asarray(mapped[:5]), vecs[:5])


def test_no_queries_give_no_scores(tmp_path):
    np.save(tmp_path / "v.npy", np.ones((4, 2), dtype=np.float32))
    assert list(dense.dense_scores(np.load(tmp_path / "v.npy", mmap_mode="r"), np.zeros((0, 2), np.float32))) == []
