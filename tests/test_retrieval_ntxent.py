"""NT-Xent fine-tuning of MiniLM: a few steps on real pairs, the saved model and its card."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import real_slice

from mustcite.errors import MustciteError
from mustcite.retrieval.dense import DenseRetriever
from mustcite.retrieval.ntxent import NTXentConfig, distinct_batches, train_ntxent


def test_batches_never_repeat_a_document():
    import random

    pairs = [(f"q{i}", f"d{i % 7}") for i in range(40)]
    batches = distinct_batches(pairs, 8, random.Random(0))
    assert all(len({d for _, d in b}) == len(b) for b in batches)
    assert sum(len(b) for b in batches) <= 40 and max(len(b) for b in batches) <= 7


def test_batches_keep_every_text_of_a_triplet_apart():
    import random

    # the hard negative of one item is the positive of another: they may never share a batch
    triplets = [(f"q{i}", f"d{i % 9}", f"d{(i + 1) % 9}") for i in range(60)]
    batches = distinct_batches(triplets, 6, random.Random(1))
    for b in batches:
        texts = [t for item in b for t in item]
        assert len(set(texts)) == len(texts)
    assert max(len(b) for b in batches) <= 4        # 9 documents, 2 per item


def test_mixed_pairs_and_triplets_are_refused(tmp_path):
    with pytest.raises(MustciteError, match="pairs or all triplets"):
        train_ntxent([("q", "d"), ("q2", "d2", "n2")], tmp_path / "m", progress=False)


@pytest.mark.data
def test_triplets_train_with_their_hard_negatives(tmp_path):
    papers = real_slice(5000)[:9]
    triplets = [(p["title"], p["abstract"], n["abstract"]) for p, n in zip(papers[:8], papers[1:])]
    cfg = NTXentConfig(epochs=1, batch_size=4, seed=2, max_seq_length=32)
    card = train_ntxent(triplets, tmp_path / "m", config=cfg, device="cpu", progress=False)
    assert card["hard_negatives"] is True and card["pairs"] == 8
    assert sum(card["batches_per_epoch"]) >= 2 and np.isfinite(card["loss_per_epoch"]).all()


@pytest.mark.slow
@pytest.mark.data
def test_train_saves_model_and_card(tmp_path):
    # real pairs: a NeurIPS 2018 paper's title -> its own abstract (a title/abstract matching task)
    papers = real_slice(5000)[:24]
    pairs = [(p["title"], p["abstract"]) for p in papers]
    cfg = NTXentConfig(temperature=0.05, epochs=2, batch_size=8, seed=1, max_seq_length=64, lr=5e-5)
    card = train_ntxent(pairs, tmp_path / "m", config=cfg, device="cpu", data_note="test", progress=False)
    assert card["pairs"] == 24 and card["batches_per_epoch"] == [3, 3]
    assert len(card["loss_per_epoch"]) == 2 and all(np.isfinite(card["loss_per_epoch"]))
    assert card["config"]["temperature"] == 0.05
    assert card["seconds"] > 0 and card["peak_rss_mb"] > 100      # a loaded MiniLM is never under 100 MiB
    assert json.loads((tmp_path / "m" / "training_card.json").read_text())["loss_per_epoch"] == card["loss_per_epoch"]
    tuned = DenseRetriever(str(tmp_path / "m"), cache_dir=tmp_path / "cache", max_seq_length=64)
    base = DenseRetriever(cache_dir=tmp_path / "cache", max_seq_length=64)
    assert tuned.key != base.key                     # new weights, new cache key
    tuned.index([{"paper_id": p["paper_id"], "title": "", "abstract": p["abstract"]} for p in papers])
    res = tuned.search([{"id": "q", "title": papers[3]["title"], "abstract": ""}], k=3)
    assert res["q"][0][0] == papers[3]["paper_id"]
