"""Prefetch and rerank: the cross-encoder re-orders exactly the first stage's top ``prefetch`` hits,
training pairs take their targets from the labels, and a saved model scores the same after loading."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import recommender as S

from mustcite.errors import DataMissingError
from mustcite.retrieval.base import as_docs
from mustcite.retrieval.bm25 import BM25Retriever
from mustcite.retrieval.cross_encoder import CITED_TARGET, CrossEncoderReranker
from mustcite.retrieval.prefetch_rerank import PrefetchRerankRetriever, training_groups, training_pairs

pytestmark = pytest.mark.data          # every test reranks papers of the slice pool (helpers.recommender)


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


def _bm25_and_two_queries():
    """BM25 over the pool, two queries made of pool papers 3 and 40, and every pool text by id."""
    pool = _pool()
    bm = BM25Retriever()
    bm.index(pool)
    qs = [{"id": f"q{j}", "title": pool[i]["title"], "abstract": pool[i]["abstract"]} for j, i in enumerate((3, 40))]
    return pool, bm, qs, {d.id: d.text for d in as_docs(pool)}


def test_training_pairs_take_graded_targets_from_the_labels():
    _, bm, qs, text = _bm25_and_two_queries()
    hits = bm.search(qs, k=5)
    labels = {"q0": {hits["q0"][0][0]: "must", hits["q0"][1][0]: "cited"}}
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


def test_training_groups_take_positives_and_negatives_from_the_first_stage_hits():
    pool, bm, qs, text = _bm25_and_two_queries()
    hits = bm.search(qs, k=12)
    top = [p for p, _ in hits["q0"]]
    far = next(d.id for d in as_docs(pool) if d.id not in set(top))
    labels = {"q0": {top[0]: "must", top[4]: "must", top[2]: "cited", far: "must", "not-in-pool": "must"}}
    groups = training_groups(bm, qs, labels, text, top=12, negatives=5, per_query=3, seed=4)
    assert len(groups) == 3          # q1 cites nothing; a cited paper outside the top 12 makes no group
    qtext = as_docs(qs, id_key="id")[0].text
    uncited = {text[p] for p in top} - {text[top[0]], text[top[2]], text[top[4]]}
    for query, texts, targets in groups:
        assert query == qtext and len(texts) == 6 and targets[1:] == [0.0] * 5
        assert set(texts[1:]) <= uncited and len(set(texts[1:])) == 5   # uncited first-stage hits, no repeats
    assert [g[2][0] for g in groups] == [1.0, 1.0, CITED_TARGET]     # must-cite papers first
    assert {g[1][0] for g in groups[:2]} == {text[top[0]], text[top[4]]} and groups[2][1][0] == text[top[2]]
    assert training_groups(bm, qs, labels, text, top=12, negatives=5, per_query=3, seed=4) == groups   # seeded
    assert len(training_groups(bm, qs, labels, text, top=12, negatives=5, per_query=1, seed=4)) == 1
    assert training_groups(bm, qs, labels, text, top=1, negatives=5, per_query=3, seed=4) == []    # no negative


def test_listwise_training_learns_to_put_the_positive_first():
    """Each group: a query, its own text (the positive) and 5 other papers; a few epochs on 10
    groups must move the positive to the top of most groups from an untrained head."""
    pool = [p for p in _pool(80)]
    text = [f"{p['title']}. {p['abstract']}" for p in pool]
    groups = [(pool[i]["title"], [text[i]] + [text[j] for j in range(20 + 5 * i, 25 + 5 * i)], [1.0] + [0.0] * 5)
              for i in range(10)]
    ce = CrossEncoderReranker.new(max_length=40, seed=0).freeze_embeddings()

    def top1():
        return np.mean([int(np.argmax(ce.score([(q, t) for t in texts])) == 0) for q, texts, _ in groups])

    before = top1()
    ce.fit_listwise(groups, epochs=4, groups_per_batch=2, seed=0, progress=False)
    assert top1() >= max(0.8, before + 0.3)
    assert ce.info["objective"] == "listwise" and ce.info["trained_groups"] == 10 and ce.info["frozen_embeddings"]
    with pytest.raises(ValueError, match="group 0"):
        ce.fit_listwise([("q", ["a", "b"], [0.0, 0.0])], progress=False)
    with pytest.raises(ValueError, match="group 1"):
        ce.fit_listwise([("q", ["a", "b"], [1.0, 0.0]), ("q", ["a"], [1.0])], progress=False)


def test_segment_cosine_head_ranks_before_training_and_round_trips(tmp_path):
    """The segment-cosine head scores a paper's own abstract above other papers' before any
    training (it is the shipped encoder's cosine), a saved model scores the same after loading,
    and the rerank card records the head."""
    pool = _pool(40)
    ce = CrossEncoderReranker.new(max_length=96, seed=0, head="segment-cosine")
    pairs = [(p["title"], p["abstract"]) for p in pool[:12]]
    own = ce.score(pairs)
    other = ce.score([(pairs[i][0], pairs[(i + 5) % 12][1]) for i in range(12)])
    assert (own > other).mean() >= 0.75 and own.mean() > other.mean() + 0.5     # 10 of 12 here
    ce.info["note"] = "kept"
    ce.save(tmp_path / "ce")
    again = CrossEncoderReranker.load(tmp_path / "ce")
    assert again.info["head"] == "segment-cosine" and again.info["note"] == "kept"
    assert np.allclose(again.score(pairs), own, atol=1e-4)
    with pytest.raises(ValueError, match="unknown head"):
        CrossEncoderReranker.new(head="mean")
    # the classifier head is still the default
    assert CrossEncoderReranker.new(max_length=32).info["head"] == "classifier"


def test_late_cross_with_every_layer_blocked_is_the_bi_encoder(tmp_path):
    """Attention kept inside each text in all 6 layers, each text with its own [CLS] and positions,
    gives exactly the shipped bi-encoder's cosine; the late-cross head (4 layers blocked) lies
    between it and the joint pass, and keeps its setting through save/load."""
    from sentence_transformers import SentenceTransformer

    from mustcite.retrieval.cross_encoder import LATE_CROSS_BLOCKED, _base_model_path
    from mustcite.retrieval.segment_cosine import INITIAL_SCALE, SegmentCosinePairModel

    pool = _pool(40)
    pairs = [(pool[i]["title"], pool[j]["title"]) for i in range(4) for j in range(20, 24)]
    st = SentenceTransformer(_base_model_path(), device="cpu")
    a = st.encode([p for p, _ in pairs], normalize_embeddings=True)
    b = st.encode([c for _, c in pairs], normalize_embeddings=True)
    alone = SegmentCosinePairModel.from_folder(_base_model_path(), 128, blocked_layers=6)
    assert np.allclose(alone.predict(pairs) / INITIAL_SCALE, (a * b).sum(1), atol=2e-3)
    ce = CrossEncoderReranker.new(max_length=128, head="late-cross")
    assert ce.model.blocked_layers == LATE_CROSS_BLOCKED == 4 and ce.info["head"] == "late-cross"
    late = ce.score(pairs)
    joint = CrossEncoderReranker.new(max_length=128, head="segment-cosine").score(pairs)
    assert not np.allclose(late, joint, atol=1e-2) and not np.allclose(late, alone.predict(pairs), atol=1e-2)
    ce.save(tmp_path / "lc")
    again = CrossEncoderReranker.load(tmp_path / "lc")
    assert again.model.blocked_layers == 4 and np.allclose(again.score(pairs), late, atol=1e-4)
