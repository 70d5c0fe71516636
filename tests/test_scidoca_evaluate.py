"""Official SCIDOCA 2025 scoring (seed 003, Section 2) on hand-worked examples, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mustcite.cli.main import main
from mustcite.errors import MustciteError
from mustcite.scidoca import Answer, evaluate, evaluate_files


def _jsonl(path: Path, *rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def t1(pid, *ids):
    return Answer(pid, 1, tuple(ids))


def t2(pid, **masks):
    return Answer(pid, 2, {f"[{k}]": v for k, v in masks.items()})


def t3(pid, *cites):
    return Answer(pid, 3, tuple(tuple(c) for c in cites), tuple(f"Sentence {i}." for i in range(len(cites))))


# --------------------------------------------------------------------------- Task 1

GOLD1 = [t1("p1", "a", "b", "c", "d"), t1("p2", "e")]           # GT_1 = 4, GT_2 = 1


def test_task1_perfect():
    r = evaluate(1, GOLD1, GOLD1)
    assert (r["f1"], r["precision"], r["recall"]) == (1.0, 1.0, 1.0)
    assert (r["paragraphs"], r["gold_citations"], r["correct_citations"], r["missing_predictions"]) == (2, 5, 5, 0)


def test_task1_partial_weighted_by_gold_count():
    # p1: predicted {a, b, x}: TP 2, FP 1, FN 2 -> P 2/3, R 1/2, F1 = 2(1/3)/(7/6) = 4/7; weight 4
    # p2: predicted {e}: P = R = F1 = 1; weight 1
    # F1 = (4 * 4/7 + 1 * 1) / 5 = 23/35; P = (4 * 2/3 + 1) / 5 = 11/15; R = (4 * 1/2 + 1) / 5 = 3/5
    r = evaluate(1, GOLD1, [t1("p1", "a", "b", "x"), t1("p2", "e")])
    assert r["f1"] == pytest.approx(23 / 35)
    assert r["precision"] == pytest.approx(11 / 15) and r["recall"] == pytest.approx(3 / 5)
    assert r["f1"] != pytest.approx((4 / 7 + 1) / 2)               # the unweighted mean would be 11/14
    assert (r["predicted_citations"], r["correct_citations"]) == (4, 3)


def test_task1_empty_missing_and_marker_predictions(tmp_path):
    # p1 predicted [] -> P = 0/0 := 0, R 0, F1 0; p2 has no prediction -> empty -> 0
    r = evaluate(1, GOLD1, [t1("p1")])
    assert (r["f1"], r["precision"], r["recall"], r["missing_predictions"]) == (0.0, 0.0, 0.0, 1)
    # ["[empty]"] reads as no prediction: p2 gets 0, p1 (all four right) gets 1 -> F1 = 4/5
    pred = _jsonl(tmp_path / "p.jsonl", {"id": "p1", "predicted_citations": ["a", "b", "c", "d"]},
                  {"id": "p2", "predicted_citations": ["[empty]"]})
    gold = _jsonl(tmp_path / "g.jsonl", *({"id": g.id, "predicted_citations": list(g.citations)} for g in GOLD1))
    assert evaluate_files(1, pred, gold)["f1"] == pytest.approx(4 / 5)


def test_task1_repeated_and_non_candidate_ids():
    # predicted {a, zz} (a twice): TP 1, FP 1, FN 1 -> P = R = F1 = 1/2
    r = evaluate(1, [t1("p", "a", "b")], [t1("p", "a", "a", "zz")])
    assert (r["f1"], r["precision"], r["recall"]) == (0.5, 0.5, 0.5)


def test_task1_prediction_id_missing_from_gold():
    with pytest.raises(MustciteError, match="'p9'"):
        evaluate(1, GOLD1, [t1("p9", "a")])


# --------------------------------------------------------------------------- Task 2

GOLD2 = [t2("p1", MASK1="a", MASK2="b", MASK3="c"), t2("p2", MASK1="d")]   # M_1 = 3, M_2 = 1


def test_task2_perfect():
    r = evaluate(2, GOLD2, GOLD2)
    assert (r["f1"], r["precision"], r["recall"], r["masks"], r["correct_masks"]) == (1.0, 1.0, 1.0, 4, 4)


def test_task2_partial_weighted_by_masks():
    # p1: MASK1 right (F1 1), MASK2 wrong (P 0/1, R 0/1, F1 0), MASK3 abstained (null: P 0/0 := 0, R 0, F1 0)
    #     -> macro over the paragraph's masks = 1/3, weight M_1 = 3
    # p2: MASK1 right -> 1, weight 1.     F1 = (3 * 1/3 + 1 * 1) / 4 = 1/2 (= P = R)
    r = evaluate(2, GOLD2, [t2("p1", MASK1="a", MASK2="c", MASK3=None), t2("p2", MASK1="d")])
    assert (r["f1"], r["precision"], r["recall"]) == (0.5, 0.5, 0.5)
    assert r["f1"] != pytest.approx((1 / 3 + 1) / 2)               # unweighted paragraph mean: 2/3
    assert r["correct_masks"] == 2


def test_task2_empty_and_missing(tmp_path):
    # p1 predicted nothing for any mask, p2 predicted "[empty]" -> every mask 0
    pred = _jsonl(tmp_path / "p.jsonl", {"id": "p1", "predicted_citations": {}},
                  {"id": "p2", "predicted_citations": {"[MASK1]": "[empty]"}})
    gold = _jsonl(tmp_path / "g.jsonl", *({"id": g.id, "predicted_citations": g.citations} for g in GOLD2))
    r = evaluate_files(2, pred, gold)
    assert (r["f1"], r["masks"], r["missing_predictions"]) == (0.0, 4, 0)
    assert evaluate(2, GOLD2, [t2("p2", MASK1="d")])["f1"] == pytest.approx(1 / 4)   # p1 missing: 0 of 3


def test_task2_unknown_mask_in_prediction():
    with pytest.raises(MustciteError, match=r"MASK7"):
        evaluate(2, GOLD2, [t2("p2", MASK1="d", MASK7="a")])


# --------------------------------------------------------------------------- Task 3

# p1 as in the seed's 2.5 example (sentence 3 has no citation); p2 opens with a no-citation sentence
GOLD3 = [t3("p1", ["V"], ["D"], [], ["B"]), t3("p2", [], ["R", "D"])]


def test_task3_perfect():
    r = evaluate(3, GOLD3, GOLD3)
    assert (r["f1"], r["precision"], r["recall"], r["micro_f1"], r["no_citation_accuracy"]) == (1.0,) * 5
    assert (r["sentences"], r["citation_sentences"], r["no_citation_sentences"], r["gold_citations"]) == (6, 4, 2, 5)


def test_task3_partial():
    pred = [t3("p1", ["V"], ["D", "B"], [], []), t3("p2", ["V"], ["R", "X"])]
    # sentences with citations:
    #   p1 s0 {V} vs {V}:       P 1,   R 1,   F1 1
    #   p1 s1 {D} vs {D, B}:    P 1/2, R 1,   F1 2/3
    #   p1 s3 {B} vs {}:        P 0,   R 0,   F1 0
    #   p2 s1 {R, D} vs {R, X}: P 1/2, R 1/2, F1 1/2
    #   -> P = 2/4 = 1/2, R = 2.5/4 = 5/8, F1 = (13/6)/4 = 13/24
    # no-citation sentences: p1 s2 predicted {} (right), p2 s0 predicted {V} (wrong) -> accuracy 1/2
    # micro over all sentences: TP 1+1+1 = 3; FP B + V + X = 3; FN B + D = 2 -> P 1/2, R 3/5, F1 6/11
    r = evaluate(3, GOLD3, pred)
    assert r["precision"] == pytest.approx(1 / 2) and r["recall"] == pytest.approx(5 / 8)
    assert r["f1"] == pytest.approx(13 / 24)
    assert r["no_citation_accuracy"] == pytest.approx(1 / 2)
    assert r["micro_precision"] == pytest.approx(1 / 2) and r["micro_recall"] == pytest.approx(3 / 5)
    assert r["micro_f1"] == pytest.approx(6 / 11)


def test_task3_empty_predictions():
    # nothing predicted: every citation sentence scores 0, both no-citation sentences are right
    r = evaluate(3, GOLD3, [t3("p1", [], [], [], [])])                # p2 missing -> all empty too
    assert (r["f1"], r["micro_f1"], r["no_citation_accuracy"], r["missing_predictions"]) == (0.0, 0.0, 1.0, 1)
    # a paragraph without any citation: F1 undefined (None), accuracy defined
    r = evaluate(3, [t3("q", [], [])], [t3("q", ["a"], [])])
    assert (r["f1"], r["micro_f1"], r["no_citation_accuracy"]) == (None, None, 0.5)


def test_task3_misaligned_sentences(tmp_path):
    with pytest.raises(MustciteError, match="3 sentences predicted"):
        evaluate(3, GOLD3, [t3("p1", ["V"], ["D"], [])])
    other = Answer("p2", 3, ((), ("R",)), ("Sentence 0.", "Another sentence."))
    with pytest.raises(MustciteError) as info:
        evaluate(3, GOLD3, [other])
    assert info.value.field == "sentence_citations[1].sentence"


def test_task3_seed_shapes_and_full_example_gold(tmp_path):
    sents = ["A one.", "B two.", "C three."]
    full = _jsonl(tmp_path / "gold.jsonl", {"id": "x", "paragraph": sents, "candidate_references": ["c1", "c2"],
                                            "sentence_citations": [{"sentence": s, "predicted_citation": c}
                                                                   for s, c in zip(sents, [["c1"], [], ["c1", "c2"]])]})
    # predictions: s0 {c1} right; s1 ["[empty]"] right; s2 {c2} -> P 1, R 1/2, F1 2/3
    # sentence-level F1 = (1 + 2/3) / 2 = 5/6; accuracy 1/1; micro TP 2, FP 0, FN 1 -> F1 = 2(1)(2/3)/(5/3) = 4/5
    pred = _jsonl(tmp_path / "pred.jsonl", {"id": "x", "sentence_citations": [
        {"sentence": "A  one.", "predicted_citation": ["c1"]},
        {"sentence": "B two.", "predicted_citation": ["[empty]"]},
        {"sentence": "C three.", "predicted_citation": ["c2"]}]})
    r = evaluate_files(3, pred, full)
    assert r["f1"] == pytest.approx(5 / 6) and r["micro_f1"] == pytest.approx(4 / 5)
    assert r["no_citation_accuracy"] == 1.0


# --------------------------------------------------------------------------- CLI

@pytest.fixture
def task1_files(tmp_path):
    gold = _jsonl(tmp_path / "gold.jsonl", *({"id": g.id, "predicted_citations": list(g.citations)} for g in GOLD1))
    pred = _jsonl(tmp_path / "pred.jsonl", {"id": "p1", "predicted_citations": ["a", "b", "x"]},
                  {"id": "p2", "predicted_citations": ["e"]})
    return gold, pred


def test_cli_evaluate_prints_one_json_object(task1_files, capsys):
    gold, pred = task1_files
    assert main(["scidoca", "evaluate", "--task", "1", "--pred", str(pred), "--gold", str(gold)]) == 0
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1
    r = json.loads(out)
    assert r["f1"] == pytest.approx(23 / 35) and r["paragraphs"] == 2          # as worked out above


def test_cli_gold_as_official_folder(tmp_path, capsys):
    folder = tmp_path / "gold"
    folder.mkdir()
    (folder / "p1.in").write_text(json.dumps({"text": "Para.", "bib_entries": {k: {"title": k} for k in "abcdx"}}))
    (folder / "p1.label").write_text(json.dumps({"correct_citation": ["a", "b", "c", "d"]}))
    pred = _jsonl(tmp_path / "pred.jsonl", {"id": "p1", "predicted_citations": ["a", "b", "x"]})
    assert main(["scidoca", "evaluate", "--task", "1", "--pred", str(pred), "--gold", str(folder)]) == 0
    assert json.loads(capsys.readouterr().out)["f1"] == pytest.approx(4 / 7)   # p1 alone, see above


def test_cli_prediction_id_missing_from_gold_exits_1(task1_files, tmp_path, capsys):
    gold, _ = task1_files
    pred = _jsonl(tmp_path / "extra.jsonl", {"id": "p1", "predicted_citations": []},
                  {"id": "nope", "predicted_citations": ["a"]})
    assert main(["scidoca", "evaluate", "--task", "1", "--pred", str(pred), "--gold", str(gold)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "extra.jsonl:2" in captured.err and "'nope'" in captured.err and "(field 'id')" in captured.err
    assert "Traceback" not in captured.err


def test_cli_data_and_usage_errors(task1_files, tmp_path, capsys):
    gold, pred = task1_files
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "p1", "predicted_citations": ["a"]}\n{"id": "p2", "predicted_citations": "e"}\n')
    assert main(["scidoca", "evaluate", "--task", "1", "--pred", str(bad), "--gold", str(gold)]) == 1
    err = capsys.readouterr().err
    assert "bad.jsonl:2" in err and "predicted_citations" in err
    assert main(["scidoca", "evaluate", "--task", "2", "--pred", str(pred), "--gold", str(gold)]) == 1  # Task 1 files
    capsys.readouterr()
    assert main(["scidoca", "evaluate", "--task", "4", "--pred", str(pred), "--gold", str(gold)]) == 2
    assert main(["scidoca", "evaluate", "--task", "1", "--pred", str(pred)]) == 2
