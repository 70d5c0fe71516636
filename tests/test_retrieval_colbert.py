"""Late interaction (ColBERT via PyLate): MaxSim by hand, a planted paper found first, save/load,
a few training steps, and the error without PyLate. PyLate must be installed (``make colbert``):
these tests fail, not skip, without it."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from helpers import real_slice

from mustcite.errors import DataMissingError, MustciteError
from mustcite.retrieval.colbert import (
    ColbertRetriever,
    ColbertTrainConfig,
    FlatTokenIndex,
    TokenCache,
    load_colbert,
    maxsim,
    require_pylate,
    train_colbert,
)
from mustcite.retrieval.registry import make_retriever


def _short(p: dict, words: int = 25) -> dict:
    """A real paper cut to its title and first words of abstract (keeps the encoder cheap)."""
    return {**p, "abstract": " ".join(p["abstract"].split()[:words])}


@pytest.fixture(scope="module")
def sample(data_dir):
    rows = real_slice(5000)
    return [_short(p) for p in rows[::25][:200]]


def test_maxsim_equals_hand_computation():
    q = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    d1 = np.array([[0.0, 1.0], [1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
    d2 = np.array([[0.0, 1.0]], dtype=np.float32)     # one token, padded to three in the batch
    # d1 - q1: max(0, 1, .8) = 1; q2: max(.8, .6, .48 + .48) = .96 -> 1.96.  d2: 0 + .8 = .8
    assert np.allclose(maxsim(q, [d1, d2]), [1.96, 0.8], atol=1e-6)


def test_exhaustive_maxsim_equals_hand_computation_in_any_blocking():
    q1 = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    q2 = np.array([[0.0, -1.0]], dtype=np.float32)
    d1 = np.array([[0.0, 1.0], [1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
    d2 = np.array([[0.0, 1.0]], dtype=np.float32)
    d3 = np.zeros((0, 2), dtype=np.float32)                     # an empty document never ranks
    d4 = np.array([[-0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    flat = FlatTokenIndex.from_arrays([d1, d2, d3, d4], dim=2)
    # q1: d1 1 + .96 = 1.96; d2 0 + .8 = .8; d4 0 + max(-.36 + .64, .8) = .8.
    # q2 (all similarities negative): true MaxSim, no padding zeros: d1 max(-1, 0, -.6) = 0, d2 -1, d4 -.8
    want = np.array([[1.96, 0.8, -np.inf, 0.8], [0.0, -1.0, -np.inf, -0.8]], dtype=np.float32)
    for block, chunk in ((131072, 2048), (1, 1), (3, 2), (4, 3)):
        got = flat.scores([q1, q2, np.zeros((0, 2), np.float32)], block_tokens=block, chunk_tokens=chunk)
        assert np.allclose(got[:2], want, atol=1e-3) and np.isneginf(got[2]).all(), (block, chunk)
    hits = flat.search([q1, q2], k=3)
    assert [i for i, _ in hits[0]] == [0, 1, 3]                  # the 0.8 tie: earlier document first
    assert [i for i, _ in hits[1]] == [0, 3, 1]
    assert flat.nbytes == 6 * 2 * 2 + 5 * 8
    with pytest.raises(ValueError, match="document 1"):
        flat.put(1, [d1])                                          # document 1 has one token, not three


def test_token_cache_roundtrip(tmp_path):
    c = TokenCache(tmp_path, "k", "doc")
    a, b = np.random.default_rng(0).normal(size=(3, 384)), np.ones((5, 384))
    c.add(["0" * 64, "1" * 64], [a, b])
    c2 = TokenCache(tmp_path, "k", "doc")       # reread from disk
    assert len(c2) == 2 and c2.get("1" * 64).shape == (5, 384) and c2.length("1" * 64) == 5
    assert np.allclose(c2.get("0" * 64), a, atol=1e-2)   # float16 storage


@pytest.fixture(scope="module")
def indexed(sample, tmp_path_factory):
    d = tmp_path_factory.mktemp("colbert")
    r = ColbertRetriever(None, cache_dir=d / "cache", index_dir=d / "idx", progress=False)
    r.index(sample)
    return r, d


@pytest.mark.data
def test_planted_paper_ranked_first_and_roundtrip(sample, indexed):
    r, d = indexed
    target = sample[37]
    query = {"id": "q", "title": target["title"].lower(), "abstract": ""}
    res = r.search([query], k=5)
    assert res["q"][0][0] == target["paper_id"]
    assert r.metadata()["mode"] == "index" and r.metadata()["dim"] == 384
    r.save(d / "saved")
    loaded = ColbertRetriever.load(d / "saved", cache_dir=d / "cache")
    res2 = loaded.search([query], k=5)
    assert [p for p, _ in res2["q"]] == [p for p, _ in res["q"]]
    assert np.allclose([s for _, s in res2["q"]], [s for _, s in res["q"]], atol=1e-4)
    # the re-rank mode re-scores BM25's candidates with the same MaxSim
    rr = make_retriever("colbert-rerank", cache_dir=d / "cache")
    rr.progress = False
    rr.index(sample)
    res3 = rr.search([query], k=5)
    assert res3["q"][0][0] == target["paper_id"]
    assert abs(res3["q"][0][1] - res["q"][0][1]) < 1e-3
    # the exhaustive mode scores every paper: its best is the index's best, and it round-trips
    ex = make_retriever("colbert-exact", cache_dir=d / "cache")
    ex.progress = False
    ex.index(sample)
    res4 = ex.search([query], k=5)
    assert res4["q"][0][0] == target["paper_id"] and abs(res4["q"][0][1] - res["q"][0][1]) < 1e-2
    assert ex.metadata()["mode"] == "exact" and ex.metadata()["token_vectors"] > len(sample)
    ex.save(d / "saved-exact")
    res5 = ColbertRetriever.load(d / "saved-exact", cache_dir=d / "cache").search([query], k=5)
    assert [p for p, _ in res5["q"]] == [p for p, _ in res4["q"]]


@pytest.mark.data
def test_training_changes_the_projection_and_loads(sample, indexed, tmp_path):
    _, d = indexed
    pairs = [(p["title"], p["abstract"]) for p in sample[:12]]
    cfg = ColbertTrainConfig(batch_size=4, max_pairs=12, epochs=2, seed=3, query_length=32, document_length=48)
    card = train_colbert(pairs, tmp_path / "m", config=cfg, cache_dir=d / "cache", progress=False)
    assert card["steps"] == 6 and len(card["loss_per_epoch"]) == 2 and all(np.isfinite(card["loss_per_epoch"]))
    assert card["weight_change_l2"] > 0
    assert json.loads((tmp_path / "m" / "training_card.json").read_text())["pairs"] == 12
    m = load_colbert(tmp_path / "m")
    assert m.dim == 128 and m.settings.document_length == 48
    v = m.project(np.ones((3, 384), dtype=np.float32))
    assert v.shape == (3, 128) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert make_retriever(f"colbert:{tmp_path / 'm'}", cache_dir=d / "cache").model.dim == 128


def test_unknown_folder_and_missing_pylate(monkeypatch, tmp_path):
    with pytest.raises(DataMissingError):
        make_retriever(f"colbert:{tmp_path / 'nope'}")
    monkeypatch.setitem(sys.modules, "pylate", None)
    with pytest.raises(MustciteError) as e:
        require_pylate()
    assert "PyLate" in e.value.message and "pylate==1.6.0" in (e.value.hint or "")
