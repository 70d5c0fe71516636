"""SCIDOCA 2025 file shapes: the seed's Section 2 JSON examples, the official .in/.label files,
the real Task 1 sample, round trips, and malformed input naming file, line and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import DATA

from mustcite.errors import MustciteError
from mustcite.scidoca import (
    Answer,
    Candidate,
    Example,
    read_answers,
    read_examples,
    read_official,
    write_answers,
    write_examples,
    write_official,
)
from mustcite.scidoca.formats import detect_shape, read_official_dir

REAL = DATA / "scidoca" / "task1_example_from_trieuhoangan.json"

V, D, B, R = "[Vaswani et al. 2017]", "[Devlin et al. 2019]", "[Brown et al. 2020]", "[Radford et al. 2018]"
CANDS = [V, D, B, R]

# The seed's Section 2 examples, verbatim, each with an "id" added (one paragraph per JSONL line).
SEED_T1_IN = {"id": "p1", "paragraph": "Recent advances in natural language processing have significantly improved "
              "the performance of models on various tasks such as machine translation and question answering.",
              "candidate_references": CANDS}
SEED_T1_OUT = {"id": "p1", "predicted_citations": [V, D]}
SEED_T2_IN = {"id": "p2", "paragraph": "Transformer models like BERT [MASK1] and GPT-3 [MASK2] have revolutionized "
              "natural language processing tasks. These models [MASK3] continue to set benchmarks across various "
              "domains.", "candidate_references": CANDS}
SEED_T2_OUT = {"id": "p2", "predicted_citations": {"[MASK1]": D, "[MASK2]": B, "[MASK3]": R}}
SENTS = ["Transformer models have transformed the field of NLP.", "One of the most influential models is BERT.",
         "We will investigate the results of BERT models.",
         "GPT-3 has further pushed the boundaries of language modeling."]
SEED_T3_IN = {"id": "p3", "paragraph": SENTS, "candidate_references": CANDS}
SEED_T3_OUT = {"id": "p3", "sentence_citations": [
    {"sentence": SENTS[0], "predicted_citation": [V]}, {"sentence": SENTS[1], "predicted_citation": [D]},
    {"sentence": SENTS[2], "predicted_citation": ["[empty]"]}, {"sentence": SENTS[3], "predicted_citation": [B]}]}


def _jsonl(path: Path, *rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _raises(fn, *args, **kwargs) -> MustciteError:
    with pytest.raises(MustciteError) as info:
        fn(*args, **kwargs)
    return info.value


# --------------------------------------------------------------------------- the real sample

@pytest.mark.data
def test_reads_real_task1_sample_unchanged():
    assert detect_shape(REAL) == "official"
    [ex] = read_examples(REAL)
    raw = json.loads(REAL.read_text())
    assert ex.id == "task1_example_from_trieuhoangan" and ex.task == 1 and ex.gold is None
    assert ex.paragraph == raw["text"] and ex.paragraph.startswith("We highlight our contributions by comparing")
    assert [c.id for c in ex.candidates] == list(raw["bib_entries"])      # file order, 10 candidates
    assert len(ex.candidates) == 10
    first = ex.candidates[0]
    assert (first.id, first.title) == ("7229756", "Distributionally robust Markov decision processes")
    assert first.abstract == raw["bib_entries"]["7229756"]["abstract"]
    assert read_official(REAL) == ex
    assert ex.masks == ()                                                   # a Task 1 paragraph has no slots


@pytest.mark.data
def test_real_sample_with_a_label_beside_it(tmp_path):
    shutil.copy(REAL, tmp_path / "q7.in")
    (tmp_path / "q7.label").write_text(json.dumps({"correct_citation": ["7229756", 18980380]}))
    [ex] = read_examples(tmp_path)                                          # a folder: .in + .label pairs
    assert ex.id == "q7" and ex.task == 1 and ex.gold == ("7229756", "18980380")   # integer id -> string
    [ans] = read_answers(tmp_path)
    assert ans == Answer("q7", 1, ("7229756", "18980380"))


# --------------------------------------------------------------------------- the seed's JSON examples

def test_seed_section2_inputs_and_outputs(tmp_path):
    inputs = read_examples(_jsonl(tmp_path / "t1.jsonl", SEED_T1_IN))
    assert inputs[0].task == 1 and [c.id for c in inputs[0].candidates] == CANDS and inputs[0].gold is None
    [t2] = read_examples(_jsonl(tmp_path / "t2.jsonl", SEED_T2_IN))
    assert t2.task == 2 and t2.masks == ("[MASK1]", "[MASK2]", "[MASK3]")   # inferred from the slots
    [t3] = read_examples(_jsonl(tmp_path / "t3.jsonl", SEED_T3_IN))
    assert t3.task == 3 and t3.sentences == tuple(SENTS) and t3.text == " ".join(SENTS)

    assert read_answers(_jsonl(tmp_path / "o1.jsonl", SEED_T1_OUT)) == [Answer("p1", 1, (V, D))]
    assert read_answers(_jsonl(tmp_path / "o2.jsonl", SEED_T2_OUT)) == [
        Answer("p2", 2, {"[MASK1]": D, "[MASK2]": B, "[MASK3]": R})]
    [o3] = read_answers(_jsonl(tmp_path / "o3.jsonl", SEED_T3_OUT))
    assert o3.task == 3 and o3.citations == ((V,), (D,), (), (B,))        # ["[empty]"] = no citation
    assert o3.sentences == tuple(SENTS)


def test_full_example_carries_gold_in_the_output_field(tmp_path):
    row = {**SEED_T2_IN, "predicted_citations": SEED_T2_OUT["predicted_citations"]}
    [ex] = read_examples(_jsonl(tmp_path / "full.jsonl", row))
    assert ex.gold == {"[MASK1]": D, "[MASK2]": B, "[MASK3]": R}
    assert read_answers(tmp_path / "full.jsonl") == [ex.answer()]


def test_candidates_with_title_and_abstract(tmp_path):
    row = {"id": 5, "paragraph": "Text.", "candidate_references": [
        {"id": "c1", "title": "T1", "abstract": None}, {"id": "c2", "title": "T2", "abstract": "A2"}, "c3"]}
    [ex] = read_examples(_jsonl(tmp_path / "c.jsonl", row))
    assert ex.id == "5" and ex.candidates == (Candidate("c1", "T1", ""), Candidate("c2", "T2", "A2"), Candidate("c3"))


# --------------------------------------------------------------------------- round trips

EXAMPLES = [
    Example("e1", 1, "A paragraph.", (Candidate("a", "Ta", "Aa"), Candidate("b")), ("b",)),
    Example("e2", 2, "X [MASK1] and Y [MASK2].", (Candidate("a", "Ta"), Candidate("b", "", "Ab")),
            {"[MASK1]": "b", "[MASK2]": "a"}),
    Example("e3", 3, ("One.", "Two.", "Three."), (Candidate("a"), Candidate("b", "Tb", "Ab")),
            (("a", "b"), (), ("b",))),
]


@pytest.mark.parametrize("ex", EXAMPLES, ids=["task1", "task2", "task3"])
def test_seed_shape_round_trip(tmp_path, ex):
    path = tmp_path / "ex.jsonl"
    assert write_examples(path, [ex, Example("bare", ex.task, ex.paragraph, ex.candidates)]) == 2
    back = read_examples(path)
    assert back == [ex, Example("bare", ex.task, ex.paragraph, ex.candidates)]
    row = json.loads(path.read_text().splitlines()[0])
    assert set(row) == {"id", "paragraph", "candidate_references",
                        "sentence_citations" if ex.task == 3 else "predicted_citations"}
    ans = tmp_path / "ans.jsonl"
    write_answers(ans, [ex.answer()])
    assert read_answers(ans) == [ex.answer()]


@pytest.mark.parametrize("ex", EXAMPLES, ids=["task1", "task2", "task3"])
def test_official_shape_round_trip(tmp_path, ex):
    written = write_official(ex, tmp_path)
    assert [p.name for p in written] == [f"{ex.id}.in", f"{ex.id}.label"]
    inp = json.loads((tmp_path / f"{ex.id}.in").read_text())
    assert set(inp) == {"text", "citation_candidates", "bib_entries"}
    assert inp["citation_candidates"] == [c.id for c in ex.candidates]
    assert read_official_dir(tmp_path) == [ex]
    assert read_examples(tmp_path / f"{ex.id}.in") == [ex]


def test_empty_marker_writing(tmp_path):
    ans = Answer("p3", 3, ((V,), ()), ("S1.", "S2."))
    write_answers(tmp_path / "a.jsonl", [ans])
    assert json.loads((tmp_path / "a.jsonl").read_text())["sentence_citations"][1]["predicted_citation"] == []
    write_answers(tmp_path / "b.jsonl", [ans], empty_marker=True)
    assert json.loads((tmp_path / "b.jsonl").read_text())["sentence_citations"][1]["predicted_citation"] == ["[empty]"]
    assert read_answers(tmp_path / "b.jsonl") == [ans]


def test_official_task2_label_as_list_and_task3_label(tmp_path):
    (tmp_path / "7.in").write_text(json.dumps({"text": "A [MASK1] b [MASK2].", "citation_candidates": ["x", "y"]}))
    (tmp_path / "7.label").write_text(json.dumps({"correct_citation": ["y", "x"]}))
    (tmp_path / "10.in").write_text(json.dumps({"text": "C [MASK1].", "bib_entries": {"x": {"title": "X"}}}))
    (tmp_path / "10.label").write_text(json.dumps({"correct_citation": {"[MASK1]": "x"}}))
    a, b = read_official_dir(tmp_path)                                       # natural order: 7 before 10
    assert (a.id, a.task, a.gold) == ("7", 2, {"[MASK1]": "y", "[MASK2]": "x"})
    assert (b.id, b.gold, b.candidates) == ("10", {"[MASK1]": "x"}, (Candidate("x", "X"),))
    t3 = tmp_path / "t3"
    t3.mkdir()
    (t3 / "s.in").write_text(json.dumps({"text": ["One.", "Two."], "citation_candidates": ["x"], "bib_entries": {}}))
    (t3 / "s.label").write_text(json.dumps({"correct_citation": [[], ["x"]]}))
    [ex] = read_examples(t3)
    assert ex.task == 3 and ex.gold == ((), ("x",))


# --------------------------------------------------------------------------- malformed input

def test_bad_json_line_is_named(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(SEED_T1_IN) + "\n{oops\n")
    err = _raises(read_examples, path)
    assert (err.path, err.line) == (str(path), 2) and "x.jsonl:2" in str(err)


@pytest.mark.parametrize("row, line_field, message", [
    ({k: v for k, v in SEED_T1_IN.items() if k != "candidate_references"}, "candidate_references", "missing field"),
    ({k: v for k, v in SEED_T1_IN.items() if k != "id"}, "id", "missing field"),
    ({**SEED_T1_IN, "paragraph": 12}, "paragraph", "expected a string or a list"),
    ({**SEED_T1_IN, "candidate_references": [V, {"title": "no id"}]}, "candidate_references[1].id", "missing field"),
    ({**SEED_T1_IN, "candidate_references": [V, 1.5]}, "candidate_references[1]", "expected an id"),
    ({**SEED_T1_IN, "predicted_citations": [V, "[Nobody 2000]"]}, "predicted_citations[1]", "unknown candidate id"),
    ({**SEED_T1_IN, "predicted_citations": ["[empty]", V]}, "predicted_citations", "must stand alone"),
    ({**SEED_T1_IN, "candidate_references": [V, V]}, "candidate_references", "appears twice"),
    ({**SEED_T2_IN, "predicted_citations": {"[MASK1]": D, "[MASK2]": B}}, "predicted_citations", "[MASK3]"),
    ({**SEED_T2_IN, "predicted_citations": {"[MASK1]": D, "[MASK2]": B, "[MASK3]": None}},
     'predicted_citations["[MASK3]"]', "needs a citation"),
    ({**SEED_T2_IN, "predicted_citations": {"MASK1": D}}, "predicted_citations", "not a mask slot"),
    ({**SEED_T3_IN, "sentence_citations": SEED_T3_OUT["sentence_citations"][:3]}, "sentence_citations",
     "differ from the paragraph"),
    ({**SEED_T3_IN, "sentence_citations": [{"sentence": SENTS[0]}]}, "sentence_citations[0].predicted_citation",
     "missing field"),
    ({**SEED_T1_IN, "sentence_citations": []}, "paragraph", "Task 3 needs the paragraph as a list of sentences"),
    ({**SEED_T3_IN, "predicted_citations": [V]}, "predicted_citations", "shape of Task 1 here but of Task 3"),
])
def test_malformed_example_names_file_line_field(tmp_path, row, line_field, message):
    path = _jsonl(tmp_path / "bad.jsonl", {**SEED_T1_IN, "id": "fine"}, row)
    err = _raises(read_examples, path)
    assert (err.path, err.line, err.field) == (str(path), 2, line_field)
    assert message in err.message
    assert "bad.jsonl:2: " in str(err) and f"(field '{line_field}')" in str(err)


def test_file_level_errors(tmp_path):
    dup = _jsonl(tmp_path / "dup.jsonl", SEED_T1_IN, SEED_T1_IN)
    err = _raises(read_examples, dup)
    assert (err.line, err.field) == (2, "id") and "line 1" in err.message
    mixed = _jsonl(tmp_path / "mixed.jsonl", SEED_T1_OUT, SEED_T2_OUT)
    err = _raises(read_answers, mixed)
    assert err.line == 2 and "one file holds one task" in err.message
    err = _raises(read_answers, _jsonl(tmp_path / "t.jsonl", SEED_T1_OUT), task=3)
    assert (err.line, err.field) == (1, "predicted_citations") and "Task 3 was asked for" in err.message
    err = _raises(read_answers, _jsonl(tmp_path / "noans.jsonl", {"id": "a"}))
    assert err.field == "predicted_citations or sentence_citations"
    odd = tmp_path / "odd.json"
    odd.write_text('{"something": 1}')
    assert "cannot tell the file's shape" in _raises(read_examples, odd).message


def test_malformed_official_files(tmp_path):
    (tmp_path / "a.in").write_text('{"text": "t",\n "bib_entries": {"x": {"title": "X"}}\n,,}')
    err = _raises(read_official, tmp_path / "a.in")
    assert (err.path, err.line) == (str(tmp_path / "a.in"), 3) and "malformed JSON" in err.message
    (tmp_path / "a.in").write_text(json.dumps({"text": "t", "bib_entries": {"x": {"title": 3}}}))
    err = _raises(read_official, tmp_path / "a.in")
    assert err.field == "bib_entries.x.title"
    (tmp_path / "a.in").write_text(json.dumps({"bib_entries": {}}))
    assert _raises(read_official, tmp_path / "a.in").field == "text"
    (tmp_path / "a.in").write_text(json.dumps({"text": "t", "bib_entries": {"x": {"title": "X"}}}))
    (tmp_path / "a.label").write_text(json.dumps({"correct_citation": ["x", "zz"]}))
    err = _raises(read_official, tmp_path / "a.in")
    assert (err.path, err.field) == (str(tmp_path / "a.label"), "correct_citation[1]")
    assert "unknown candidate id 'zz'" in err.message
    (tmp_path / "a.label").write_text(json.dumps({"gold": ["x"]}))
    err = _raises(read_official, tmp_path / "a.in")
    assert (err.path, err.field, err.message) == (str(tmp_path / "a.label"), "correct_citation", "missing field")
    (tmp_path / "b.in").write_text(json.dumps({"text": ["S1.", "S2."], "bib_entries": {"x": {}}}))
    (tmp_path / "b.label").write_text(json.dumps({"correct_citation": [["x"]]}))
    err = _raises(read_official, tmp_path / "b.in")
    assert err.field == "correct_citation" and "1 gold entries for 2 sentences" in err.message
    orphan = tmp_path / "orphans"
    orphan.mkdir()
    (orphan / "z.label").write_text("{}")
    assert _raises(read_examples, orphan).path == str(orphan / "z.label")
