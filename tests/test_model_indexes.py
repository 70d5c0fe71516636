"""A model's prebuilt indexes (``<model>/indexes``): read at load instead of built, the same answers
either way, rebuilt when what they were built from changes, and optional (a read-only or damaged
folder still loads). The numpy copies of the tier trees give scikit-learn's probabilities exactly."""

from __future__ import annotations

import os
import shutil

import joblib
import numpy as np
import pytest
from helpers import DATA
from helpers import recommender as S

from mustcite.recommend import Recommender
from mustcite.recommend.audit import audit_draft
from mustcite.recommend.forest import TreeEnsemble
from mustcite.recommend.model_store import INDEX_DIR
from mustcite.recommend.tiers import COMPILED_ROWS

pytestmark = pytest.mark.data


def _answers(rec: Recommender) -> list[list[dict]]:
    return [[r.to_dict() for r in rec.recommend(q["title"], q["abstract"], 15, year=2024)]
            for q in S.held_out_queries()[:4]]


@pytest.fixture()
def model(tmp_path):
    """A copy of the test slice's model without its prebuilt indexes."""
    folder = tmp_path / "model"
    shutil.copytree(S.model_dir(), folder, ignore=shutil.ignore_patterns(INDEX_DIR))
    return folder


def test_indexes_are_built_once_and_give_the_same_answers(model):
    built = Recommender.load(model)                       # builds them, and writes them
    assert built.index_dir is not None and (model / INDEX_DIR / "key.json").is_file()
    assert built.tiers.compiled_from is None              # built in memory: the compiled models
    read = Recommender.load(model)                        # reads them
    assert read.index_dir == model / INDEX_DIR
    assert read.tiers.compiled_from == str(model / "tiers.joblib")     # numpy copies until a batch needs more
    assert _answers(read) == _answers(built) == _answers(S.trained())
    draft = sorted((DATA / "neurips" / "fulltext_2024").glob("*.md.gz"))[0]
    assert audit_draft(read, draft, top=10).to_dict() == audit_draft(built, draft, top=10).to_dict()


def test_indexes_are_rebuilt_when_their_sources_change_and_are_optional(model):
    Recommender.load(model)
    key = (model / INDEX_DIR / "key.json").read_text()
    os.utime(model / "labelled.jsonl")                    # a retrained or copied model
    again = Recommender.load(model)
    assert (model / INDEX_DIR / "key.json").read_text() != key and again.index_dir is not None
    (model / INDEX_DIR / "names.pickle").write_bytes(b"damaged")   # a damaged part is built instead
    assert _answers(Recommender.load(model)) == _answers(again)
    shutil.rmtree(model / INDEX_DIR)
    # a folder the indexes cannot be written into (here: a file where their temporary folder goes;
    # a read-only folder fails the same way): built in memory, nothing written
    (model / f".{INDEX_DIR}-{os.getpid()}").write_text("in the way")
    ro = Recommender.load(model)
    assert ro.index_dir is None and not (model / INDEX_DIR).exists()
    assert _answers(ro) == _answers(again)


def test_tree_copies_give_scikit_learns_probabilities(model):
    rec = S.trained()
    q = S.held_out_queries()[0]
    _, _, feats, _ = rec.score([{"id": "q", "title": q["title"], "abstract": q["abstract"], "year": 2024}])
    X = rec.tiers._clean(np.vstack(feats))
    for tier, m in rec.tiers.models.items():
        assert np.array_equal(TreeEnsemble.from_sklearn(m).predict_proba(X), m.predict_proba(X)), tier
    Recommender.load(model)
    read = Recommender.load(model)
    assert not any(hasattr(m, "_predictors") for m in read.tiers.models.values())
    Recommender.load(model).save_learned(model)         # a loaded model saved again keeps the compiled models
    assert all(hasattr(m, "_predictors") for m in joblib.load(model / "tiers.joblib").models.values())
    read = Recommender.load(model)
    big = np.repeat(X, COMPILED_ROWS // len(X) + 1, axis=0)
    probs = read.tiers.predict(big)                       # a large batch: the compiled models from here on
    assert read.tiers.compiled_from is None and all(hasattr(m, "_predictors") for m in read.tiers.models.values())
    assert all(np.array_equal(probs[t], rec.tiers.predict(big)[t]) for t in probs)
