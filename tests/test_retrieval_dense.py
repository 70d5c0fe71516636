"""Dense retrieval with the shipped MiniLM on a small real slice; the embedding cache on reruns."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import real_slice

from mustcite.retrieval.dense import DenseRetriever
from mustcite.retrieval.embeddings import EmbeddingCache, text_key


@pytest.fixture(scope="module")
def pool(data_dir):
    rows = real_slice(5000)
    return rows[::100]          # 50 papers from the four venues


@pytest.mark.data
def test_dense_search_and_cache_hit(pool, tmp_path):
    queries = [{"id": f"q{i}", "title": p["title"], "abstract": ""} for i, p in enumerate(pool[:10])]
    r = DenseRetriever(cache_dir=tmp_path)
    r.index(pool)
    assert r.cache.encoded_last == len(pool)
    res = r.search(queries, k=5)
    hits = sum(res[f"q{i}"][0][0] == p["paper_id"] for i, p in enumerate(pool[:10]))
    assert hits >= 9                                 # its own title finds the paper
    assert r._vectors.shape == (50, 384)
    assert np.allclose(np.linalg.norm(r._vectors, axis=1), 1, atol=1e-4)
    shards = sorted(p.name for p in r.cache.dir.iterdir())
    assert shards == ["info.json", "shard-00000.npy", "shard-00001.npy"]      # pool, then queries

    again = DenseRetriever(cache_dir=tmp_path)       # a rerun: everything from the cache
    again.index(pool)
    res2 = again.search(queries, k=5)
    assert again.cache.encoded_last == 0
    assert again._model is None                      # the model was never even loaded
    assert [d for d, _ in res2["q3"]] == [d for d, _ in res["q3"]]
    assert again.key == r.key and again.key.startswith("all-MiniLM-L6-v2-")

    ann = DenseRetriever(cache_dir=tmp_path, ann="hnsw")
    ann.index(pool)
    assert ann.search(queries[:3], k=1)["q0"][0][0] == res["q0"][0][0]

    r.save(tmp_path / "idx")
    loaded = DenseRetriever.load(tmp_path / "idx", cache_dir=tmp_path)
    assert loaded.search(queries[:2], k=3) == r.search(queries[:2], k=3)


def test_cache_dedups_and_keeps_order(tmp_path):
    cache = EmbeddingCache(tmp_path, "fake-000000000000")
    calls = []

    def enc(batch):
        calls.append(list(batch))
        return np.array([[len(t), 1.0] for t in batch], dtype=np.float32)

    v = cache.embed(["bb", "a", "bb", "ccc"], enc, batch_size=2)
    assert v[:, 0].tolist() == [2, 1, 2, 3]
    assert sum(len(c) for c in calls) == 3          # "bb" encoded once
    v2 = cache.embed(["ccc", "dddd"], enc)
    assert cache.encoded_last == 1 and v2[:, 0].tolist() == [3, 4]
    reopened = EmbeddingCache(tmp_path, "fake-000000000000")
    assert len(reopened) == 4 and "a" in reopened and text_key("a") in reopened._index


def test_opening_a_cache_maps_no_shard_until_a_vector_is_read(tmp_path):
    cache = EmbeddingCache(tmp_path, "fake-000000000000")
    cache.embed(["a", "bb"], lambda b: np.array([[len(t), 1.0] for t in b], dtype=np.float32), progress=False)
    reopened = EmbeddingCache(tmp_path, "fake-000000000000")
    assert reopened._arrays == {}                   # its keys were read, no shard stays mapped
    assert reopened.get([text_key("bb")])[:, 0].tolist() == [2.0]
    assert list(reopened._arrays) == [0]            # mapped when a vector is read
