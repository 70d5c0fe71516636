"""Prefetch and rerank: the cross-encoder re-orders exactly the first stage's top ``prefetch`` hits,
training pairs take their targets from the labels, and a saved model scores the same after loading."""

from __future__ import annotations

import numpy as np
import pytest

import test_recommend_support as S
from mustcite.errors import DataMissingError
from mustcite.retrieval.base import as_docs
from mustcite.retrieval.bm25 import BM25Retriever
from mustcite.retrieval.cross_encoder import CITED_TARGET, CrossEncoderReranker
from mustcite.retrieval.rerank import PrefetchRerankRetriever, training_pairs

pytestmark = pytest.mark.skipif(not S.have_data(), reason="shared/data proceedings absent")


class ByLength:
    """A stand-in cross-encoder: the shorter the candidate text, the higher the logit."""

    info: dict = {}

    def score(self, pairs, batch_size=32):
        return np.array([-len(c) for _, c in pairs], dtype=np.float32)


def _pool(n=300):
    return [p for p in S.pool() if p.get("abstract")][:n]


def test_only_the_prefetched_head_is_reordered():
    pool = _pool()
    q = {"id": "q", "title": pool[7]["title"], "abstract": pool[7]["abstract"]}
    rr = PrefetchRerankRetriever(ByLength(), prefetch=10, progress=False)
    rr.index(pool)
    bm = rr.first.search([q], k=30)["q"]
    got = rr.search([q], k=30)["q"]
    text = {d.id: d.text for d in as_docs(pool)}
    head = sorted(bm[:10], key=lambda h: (len(text[h[0]]), h[0]))
    assert [pid for pid, _ in got[:10]] == [pid for pid, _ in head]
    assert [pid for pid, _ in got[10:]] == [pid for pid, _ in bm[10:30]]      # the tail keeps BM25's order
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True) and len(got) == 30
    assert rr.search([q], k=5)["q"] == got[:5]


def test_training_pairs_take_graded_targets_from_the_labels():
    pool = _pool()
    bm = BM25Retriever()
    bm.index(pool)
    qs = [{"id": f"q{j}", "title": pool[i]["title"], "abstract": pool[i]["abstract"]} for j, i in enumerate((3, 40))]
    hits = bm.search(qs, k=5)
    labels = {"q0": {hits["q0"][0][0]: "must", hits["q0"][1][0]: "cited"}}
    text = {d.id: d.text for d in as_docs(pool)}
    pairs, targets = training_pairs(bm, qs, labels, text, top=5)
    assert len(pairs) == 10 and targets[:2] == [1.0, CITED_TARGET] and targets[2:] == [0.0] * 8
    assert pairs[0] == (as_docs(qs, id_key="id")[0].text, text[hits["q0"][0][0]])


def test_save_load_round_trip(tmp_path):
    pool = _pool(60)
    rr = PrefetchRerankRetriever(CrossEncoderReranker.new(max_length=48, seed=1), prefetch=8, progress=False)
    rr.index(pool)
    q = [{"id": "q", "title": pool[2]["title"], "abstract": pool[2]["abstract"]}]
    before = rr.search(q, k=8)
    rr.save(tmp_path / "m")
    again = PrefetchRerankRetriever.load(tmp_path / "m", progress=False)
    again.index(pool)
    after = again.search(q, k=8)
    assert [p for p, _ in after["q"]] == [p for p, _ in before["q"]]
    assert np.allclose([s for _, s in after["q"]], [s for _, s in before["q"]], atol=1e-4)
    assert again.metadata()["prefetch"] == 8 and again.metadata()["first_stage"] == "bm25"
    with pytest.raises(DataMissingError, match="not a prefetch-and-rerank model"):
        PrefetchRerankRetriever.load(tmp_path)
