"""Training rows and hold-out rankings spread over forked workers equal those of one process."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import recommender as S

from mustcite.recommend.matrix import training_matrix
from mustcite.recommend.shared_workers import map_spans, span_workers
from mustcite.recommend.train import spread_rank_ids


def _square_span(shared, start, end):
    return [shared[i] ** 2 for i in range(start, end)]


def test_spans_keep_input_order_on_workers(monkeypatch):
    monkeypatch.setenv("MUSTCITE_WORKERS", "2")
    assert span_workers(5) == 2 and span_workers(1) == 1
    parts = map_spans(_square_span, list(range(23)), 23, 4)
    assert [x for p in parts for x in p] == [i * i for i in range(23)]
    monkeypatch.setenv("MUSTCITE_WORKERS", "1")
    assert span_workers(5) == 1
    assert map_spans(_square_span, list(range(23)), 23, 4) == parts


@pytest.mark.data
def test_rows_and_rankings_match_one_process(tmp_path, monkeypatch):
    """The dense path: query vectors are encoded once before the workers fork, so the workers'
    rows, labels and rankings are exactly those of one process."""
    rec = S.dense_recommender(tmp_path / "cache")
    train = rec.labelled[:20]
    monkeypatch.setenv("MUSTCITE_WORKERS", "1")
    X1, y1, g1 = training_matrix(rec.candidates, rec.features, train, batch=6)
    monkeypatch.setenv("MUSTCITE_WORKERS", "2")
    X2, y2, g2 = training_matrix(rec.candidates, rec.features, train, batch=6)
    np.testing.assert_array_equal(np.nan_to_num(X1, nan=-9), np.nan_to_num(X2, nan=-9))
    np.testing.assert_array_equal(g1, g2)
    assert y1.keys() == y2.keys() and all(np.array_equal(y1[t], y2[t]) for t in y1)
    rec.fit(train)
    queries = S.held_out_queries()[:12]
    spread = spread_rank_ids(rec, queries, ("cited", "must_cite"), top=20)
    assert spread == rec.rank_ids(queries, ("cited", "must_cite"), top=20)
    assert len(spread["cited"]) == 12
