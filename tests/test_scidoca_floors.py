"""SCIDOCA floors (``mustcite.scidoca.floors``): all candidates and BM25 top-k, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.scidoca import CANDS, t1, t2, t3  # noqa: F401

from mustcite.cli.main import main
from mustcite.errors import MustciteError
from mustcite.scidoca import Example, evaluate, write_examples
from mustcite.scidoca.floors import AllCandidates, BM25TopK, make_floor


def test_all_candidates_task1_recall_one():
    examples = [t1(), t1("q", gold=("he",))]
    answers = AllCandidates(1).predict(examples)
    assert all(set(a.citations) == {c.id for c in CANDS} for a in answers)
    r = evaluate(1, [e.answer() for e in examples], answers)
    assert r["recall"] == 1.0 and r["precision"] < 1.0


def test_all_candidates_task3_every_sentence():
    (ans,) = AllCandidates(3).predict([t3()])
    assert ans.sentences == t3().sentences
    assert all(set(c) == {c.id for c in CANDS} for c in ans.citations)
    r = evaluate(3, [t3().answer()], [ans])
    assert r["recall"] == 1.0 and r["no_citation_accuracy"] == 0.0


def test_all_candidates_task2_same_id_for_every_mask():
    (ans,) = AllCandidates(2).predict([t2()])
    assert set(ans.citations) == {"[MASK1]", "[MASK2]", "[MASK3]"}
    assert len(set(ans.citations.values())) == 1


def test_bm25_top1_picks_the_matching_candidate():
    ex = Example("x", 1, "Denoising diffusion probabilistic models synthesise images.", CANDS, ("ho",))
    (ans,) = BM25TopK(1, k=1).predict([ex])
    assert ans.citations == ("ho",)
    (ans,) = BM25TopK(1, k=2).predict([t1()])
    assert set(ans.citations) == {"vaswani", "kingma"}


def test_bm25_task3_per_sentence():
    (ans,) = BM25TopK(3, k=1).predict([t3()])
    assert ans.citations[:2] == (("he",), ("ho",))
    assert ans.citations[2] == ()  # shares no term with any candidate


def test_bm25_task2_one_candidate_per_mask():
    ex = t2()
    (ans,) = BM25TopK(2, k=6).predict([ex])
    assert list(ans.citations) == list(ex.masks)
    assert all(isinstance(v, str) for v in ans.citations.values())
    assert ans.citations == ex.gold
    assert len(set(ans.citations.values())) == 3  # distinct where possible


def test_bm25_task2_fills_masks_without_evidence():
    ex = Example("z", 2, "As shown before [MASK1] and [MASK2].", CANDS[:1],
                 {"[MASK1]": "vaswani", "[MASK2]": "vaswani"})
    (ans,) = BM25TopK(2, k=3).predict([ex])
    assert ans.citations == {"[MASK1]": "vaswani", "[MASK2]": "vaswani"}


def test_bad_method_and_task():
    with pytest.raises(MustciteError):
        make_floor(1, "oracle")
    with pytest.raises(MustciteError):
        BM25TopK(1).predict([t3()])


@pytest.mark.parametrize("task,example", [(1, t1), (2, t2), (3, t3)])
@pytest.mark.parametrize("method", ["all", "bm25"])
def test_cli_predict_then_evaluate(tmp_path: Path, capsys, task, example, method):
    data = tmp_path / "in.jsonl"
    write_examples(data, [example()])
    pred = tmp_path / "pred.jsonl"
    assert main(["scidoca", "predict", "--task", str(task), "--in", str(data), "--out", str(pred),
                 "--method", method, "--k", "2"]) == 0
    row = json.loads(pred.read_text().splitlines()[0])
    assert row["id"] == example().id
    capsys.readouterr()
    assert main(["scidoca", "evaluate", "--task", str(task), "--pred", str(pred), "--gold", str(data)]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["task"] == task and scores["f1"] is not None


def test_cli_predict_official_folder(tmp_path: Path):
    from mustcite.scidoca import write_official

    write_official(t1("7"), tmp_path / "off")
    pred = tmp_path / "pred.jsonl"
    assert main(["scidoca", "predict", "--task", "1", "--in", str(tmp_path / "off"), "--out", str(pred),
                 "--method", "all"]) == 0
    assert json.loads(pred.read_text())["predicted_citations"] == [c.id for c in CANDS]
