"""The learned Task 2 system (``mustcite.scidoca.masked``): features, training, assignment, save/load."""

from __future__ import annotations

import pytest
from helpers.scidoca import CANDS, SENTENCES, t1, t2
from helpers.scidoca import masked_paragraphs as _paragraphs

from mustcite.errors import MustciteError
from mustcite.scidoca import Example, evaluate
from mustcite.scidoca.masked import FEATURES, MaskedCitationModel, PairFeaturizer


def test_features_grid_and_labels():
    p = PairFeaturizer().pairs(t2())
    assert p.X.shape == (3 * len(CANDS), len(FEATURES))
    assert p.y.sum() == 3                     # one gold candidate per mask
    # the gold candidate of [MASK1] has the best 5-word window score of its row block
    block = p.X[:len(CANDS), FEATURES.index("w5_bm25")]
    assert p.ids[int(block.argmax())] == "vaswani"


def test_fit_predict_assigns_distinct_candidates():
    model = MaskedCitationModel(params={"max_iter": 30, "learning_rate": 0.1, "max_leaf_nodes": 15,
                                        "random_state": 0}).fit(_paragraphs(60), progress=False)
    assert model.info["train_paragraphs"] == 60 and model.info["train_positives"] > 0
    test = _paragraphs(20, seed=1) + [t2()]
    answers = model.predict(test)
    for a in answers:
        got = list(dict(a.citations).values())
        assert len(got) == len(set(got))      # distinct candidates within a paragraph
    assert evaluate(2, [e.answer() for e in test], answers)["f1"] >= 0.9


def test_save_load_and_errors(tmp_path):
    model = MaskedCitationModel(params={"max_iter": 10, "learning_rate": 0.1, "max_leaf_nodes": 7,
                                        "random_state": 0}).fit(_paragraphs(20), progress=False)
    model.save(tmp_path / "m")
    again = MaskedCitationModel.load(tmp_path / "m")
    assert again.predict([t2()]) == model.predict([t2()])
    (tmp_path / "m" / "config.json").write_text("{broken")
    with pytest.raises(MustciteError, match="config.json"):
        MaskedCitationModel.load(tmp_path / "m")
    with pytest.raises(MustciteError, match="Task 1"):
        model.predict([t1()])
    with pytest.raises(MustciteError, match="not trained"):
        MaskedCitationModel().predict([t2()])


def test_more_masks_than_candidates_fills_every_mask():
    model = MaskedCitationModel(params={"max_iter": 10, "learning_rate": 0.1, "max_leaf_nodes": 7,
                                        "random_state": 0}).fit(_paragraphs(20), progress=False)
    text = " ".join(SENTENCES[c].format(m=f"[MASK{i + 1}]") for i, c in enumerate(["vaswani", "kingma", "ho"]))
    ex = Example("few", 2, text, CANDS[:2], {"[MASK1]": "vaswani", "[MASK2]": "kingma", "[MASK3]": "ho"})
    (answer,) = model.predict([ex])
    assert set(answer.citations) == {"[MASK1]", "[MASK2]", "[MASK3]"}
    assert all(v in {"vaswani", "he"} for v in answer.citations.values())


def test_cli_train_and_predict_learned(tmp_path):
    import json

    from mustcite.cli.main import main
    from mustcite.scidoca import write_examples

    (tmp_path / "data" / "train").mkdir(parents=True)
    write_examples(tmp_path / "data" / "train" / "task2.jsonl", _paragraphs(40))
    write_examples(tmp_path / "test.jsonl", _paragraphs(10, seed=3))
    assert main(["--work", str(tmp_path / "w"), "scidoca", "train", "--task", "2", "--data", str(tmp_path / "data"),
                 "--limit", "30"]) == 0
    config = json.loads((tmp_path / "w" / "models" / "scidoca-task2" / "config.json").read_text())
    assert config["train_paragraphs"] == 30
    assert main(["--work", str(tmp_path / "w"), "scidoca", "predict", "--task", "2", "--method", "learned",
                 "--in", str(tmp_path / "test.jsonl"), "--out", str(tmp_path / "pred.jsonl")]) == 0
    assert main(["scidoca", "evaluate", "--task", "2", "--pred", str(tmp_path / "pred.jsonl"),
                 "--gold", str(tmp_path / "test.jsonl")]) == 0
    assert main(["--work", str(tmp_path / "w"), "scidoca", "predict", "--task", "1", "--method", "learned",
                 "--in", str(tmp_path / "test.jsonl"), "--out", str(tmp_path / "p1.jsonl")]) == 1


def test_dense_features_with_the_shipped_minilm(tmp_path, monkeypatch):
    """With an encoder: five more features (cosines with the mask's sentence, window and paragraph),
    saved with the model and rebuilt on load."""
    from mustcite.scidoca.masked import DENSE_FEATURES

    monkeypatch.setenv("MUSTCITE_CACHE", str(tmp_path / "cache"))
    params = {"max_iter": 10, "learning_rate": 0.1, "max_leaf_nodes": 7, "random_state": 0}
    model = MaskedCitationModel(encoder={"max_seq_length": 64}, params=params).fit(_paragraphs(20), progress=False)
    p = model._feat.pairs(t2())
    assert p.X.shape == (3 * len(CANDS), len(FEATURES) + len(DENSE_FEATURES))
    block = p.X[:len(CANDS), len(FEATURES) + DENSE_FEATURES.index("sentence_cos")]
    assert p.ids[int(block.argmax())] == "vaswani"     # the Transformer sentence is closest to Vaswani
    model.save(tmp_path / "m")
    again = MaskedCitationModel.load(tmp_path / "m")
    assert again.encoder == {"max_seq_length": 64} and again.predict([t2()]) == model.predict([t2()])
