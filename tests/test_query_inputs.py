"""Query and scoring inputs checked up front: over-long queries refused while the queries file is
read (before the model loads), a UTF-8 byte order mark accepted, stopword-only queries answered
with a notice instead of a generic list, empty SCIDOCA prediction files and conflicting qrels
lines refused."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from mustcite.benchmark.trec import read_qrels, read_run
from mustcite.cli.main import main
from mustcite.errors import MustciteError
from mustcite.io import iter_jsonl
from mustcite.recommend.query import MAX_TEXT, check_text_length, parse_query
from mustcite.recommend.ranking import empty_notice, has_searchable_words
from mustcite.retrieval.queries import read_queries

BOM = "\ufeff"


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _jsonl(path: Path, *rows, prefix: str = "") -> Path:
    path.write_text(prefix + "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def no_model_load(monkeypatch):
    """Loading a model fails the test: an input error must come out before any model loads."""
    from mustcite.recommend import method

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the input was checked")

    monkeypatch.setattr(method.Recommender, "load", classmethod(refuse))


# --------------------------------------------------------------------------- over-long queries

def test_long_abstract_in_queries_file_named_before_the_model_loads(capsys, tmp_path, no_model_load):
    f = _jsonl(tmp_path / "q.jsonl", {"id": "a", "title": "Sparse attention", "abstract": "fine"},
               {"id": "b", "title": "Graph networks", "abstract": "x" * MAX_TEXT})
    code, out, err = run(capsys, "--work", str(tmp_path / "work"), "recommend", "--queries", str(f),
                         "--model", str(tmp_path / "no-such-model"))
    assert code == 1 and out == ""
    size = len("Graph networks") + MAX_TEXT
    assert err.splitlines()[0] == (f"error: {f}:2: query title + abstract is {size:,} characters, longer than "
                                   f"the {MAX_TEXT:,} a query may have (field 'abstract')")
    assert "Traceback" not in err


def test_long_title_in_queries_file_names_the_title(capsys, tmp_path, no_model_load):
    f = _jsonl(tmp_path / "q.jsonl", {"id": "a", "title": "t" * (MAX_TEXT + 1)}, prefix="\n")
    code, _, err = run(capsys, "--work", str(tmp_path / "work"), "recommend", "--queries", str(f))
    assert code == 1
    assert err.startswith(f"error: {f}:2: query title + abstract is") and "(field 'title')" in err


def test_file_error_wins_over_a_missing_model(capsys, tmp_path):
    f = _jsonl(tmp_path / "q.jsonl", {"id": "a", "title": "T", "abstract": "x" * MAX_TEXT})
    code, _, err = run(capsys, "--work", str(tmp_path / "work"), "recommend", "--queries", str(f),
                       "--model", str(tmp_path / "no-such-model"))
    assert code == 1 and err.startswith(f"error: {f}:1: ") and "no-such-model" not in err


def test_query_at_the_limit_is_accepted_by_the_reader_and_the_library(tmp_path):
    title, abstract = "T" * 10, "a" * (MAX_TEXT - 10)
    check_text_length(title, abstract)
    doc, _ = parse_query({"title": title, "abstract": abstract})
    assert len(doc.title) + len(doc.abstract) == MAX_TEXT
    with pytest.raises(MustciteError, match="longer than") as exc:
        parse_query({"title": title, "abstract": abstract + "a"})
    assert exc.value.field == "abstract"


def test_year_error_still_names_file_line_and_field(capsys, tmp_path, no_model_load):
    f = _jsonl(tmp_path / "q.jsonl", {"id": "a", "title": "T", "year": "soon"})
    code, _, err = run(capsys, "--work", str(tmp_path / "work"), "recommend", "--queries", str(f))
    assert code == 1 and err.startswith(f"error: {f}:1: year must be a whole number") and "(field 'year')" in err


def test_long_abstract_option_is_a_usage_error_before_the_model_loads(capsys, tmp_path, no_model_load):
    code, _, err = run(capsys, "--work", str(tmp_path / "work"), "recommend", "--title", "T",
                       "--abstract", "x" * MAX_TEXT)
    assert code == 2 and err.startswith("error: --abstract: query title + abstract is")


# --------------------------------------------------------------------------- byte order mark

def test_iter_jsonl_skips_a_byte_order_mark(tmp_path):
    f = _jsonl(tmp_path / "q.jsonl", {"id": "a"}, {"id": "b"}, prefix=BOM)
    assert list(iter_jsonl(f)) == [(1, {"id": "a"}), (2, {"id": "b"})]
    alone = tmp_path / "alone.jsonl"
    alone.write_text(BOM + "\n" + json.dumps({"id": "a"}) + "\n", encoding="utf-8")
    assert list(iter_jsonl(alone)) == [(2, {"id": "a"})]
    gz = tmp_path / "q.jsonl.gz"
    gz.write_bytes(gzip.compress((BOM + json.dumps({"id": "a"}) + "\n").encode("utf-8")))
    assert list(iter_jsonl(gz)) == [(1, {"id": "a"})]


def test_byte_order_mark_only_at_the_start(tmp_path):
    f = tmp_path / "q.jsonl"
    f.write_text(json.dumps({"id": "a"}) + "\n" + BOM + json.dumps({"id": "b"}) + "\n", encoding="utf-8")
    with pytest.raises(MustciteError, match=r"q\.jsonl:2: malformed JSON"):
        list(iter_jsonl(f))


def test_read_queries_with_a_byte_order_mark(tmp_path):
    f = _jsonl(tmp_path / "q.jsonl", {"id": "q1", "title": "Sparse attention"}, prefix=BOM)
    docs = read_queries(f)
    assert [(d.id, d.title) for d in docs] == [("q1", "Sparse attention")]


def test_trec_files_with_a_byte_order_mark(tmp_path):
    q = tmp_path / "a.qrels"
    q.write_text(BOM + "q1 0 d1 1\nq1 0 d2 0\n", encoding="utf-8")
    assert read_qrels(q) == {"q1": {"d1": 1, "d2": 0}}
    r = tmp_path / "a.run"
    r.write_text(BOM + "q1 Q0 d1 1 0.5 x\n", encoding="utf-8")
    assert read_run(r) == {"q1": {"d1": 0.5}}


# --------------------------------------------------------------------------- stopword-only queries

def test_searchable_words():
    assert not has_searchable_words("the of and")
    assert not has_searchable_words("The OF and; is it to be? 2019 -- 3.5 %")
    assert not has_searchable_words("")
    assert has_searchable_words("the of and transformers")
    assert has_searchable_words("Learning models")          # domain words are searchable
    assert "no searchable words" in empty_notice("the of and", 2023)
    assert empty_notice("graph networks", 2023) == "no paper of 2023 or earlier matched the query"


# --------------------------------------------------------------------------- SCIDOCA empty predictions

@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_scidoca_evaluate_refuses_an_empty_prediction_file(capsys, tmp_path, content):
    gold = _jsonl(tmp_path / "gold.jsonl", {"id": "p1", "predicted_citations": ["a", "b"]})
    pred = tmp_path / "pred.jsonl"
    pred.write_text(content)
    code, out, err = run(capsys, "scidoca", "evaluate", "--task", "1", "--pred", str(pred), "--gold", str(gold))
    assert code == 1 and out == ""
    assert err.splitlines()[0] == f"error: {pred}: no predictions to score: the file has no prediction line"


def test_scidoca_evaluate_still_scores_a_partial_prediction_file(capsys, tmp_path):
    gold = _jsonl(tmp_path / "gold.jsonl", {"id": "p1", "predicted_citations": ["a"]},
                  {"id": "p2", "predicted_citations": ["b"]})
    pred = _jsonl(tmp_path / "pred.jsonl", {"id": "p1", "predicted_citations": ["a"]}, prefix=BOM)
    code, out, _ = run(capsys, "scidoca", "evaluate", "--task", "1", "--pred", str(pred), "--gold", str(gold))
    assert code == 0
    r = json.loads(out)
    assert r["f1"] == pytest.approx(0.5) and r["missing_predictions"] == 1


# --------------------------------------------------------------------------- qrels duplicates

def test_qrels_conflicting_duplicate_names_both_lines(capsys, tmp_path):
    q = tmp_path / "a.qrels"
    q.write_text("q1 0 d1 1\nq1 0 d2 0\n\nq1 0 d1 0\n")
    with pytest.raises(MustciteError) as exc:
        read_qrels(q)
    assert str(exc.value).splitlines()[0] == \
        f"{q}:4: query 'q1', document 'd1' has relevance 1 on line 1 and 0 on line 4"
    r = tmp_path / "a.run"
    r.write_text("q1 Q0 d1 1 0.5 x\n")
    code, out, err = run(capsys, "evaluate", "--run", str(r), "--qrels", str(q))
    assert code == 1 and out == "" and err.startswith(f"error: {q}:4: query 'q1', document 'd1' has relevance 1")


def test_qrels_exact_duplicate_is_read_once(tmp_path):
    q = tmp_path / "a.qrels"
    q.write_text("q1 0 d1 1\nq1 0 d1 1\nq2 0 d1 0\n")
    assert read_qrels(q) == {"q1": {"d1": 1}, "q2": {"d1": 0}}


# --------------------------------------------------------------------------- on the real slice

@pytest.fixture(scope="module")
def slice_work(data_dir, tmp_path_factory):
    """Work dir whose default model is the slice recommender, and a copy of that model with the
    popularity prior on, so that any query (stopwords too) gets candidates."""
    from helpers import recommender as S

    w = tmp_path_factory.mktemp("work")
    shutil.copytree(S.model_dir(), w / "models" / "recommender")
    popular = w / "popular"
    shutil.copytree(S.model_dir(), popular)
    card = json.loads((popular / "config.json").read_text())
    card["config"]["popular_k"] = 50
    card["config"]["disable"] = []
    (popular / "config.json").write_text(json.dumps(card))
    return w, popular


@pytest.mark.data
def test_queries_file_with_a_byte_order_mark_is_answered(capsys, slice_work, tmp_path):
    from helpers import recommender as S

    work, _ = slice_work
    q = S.held_out_queries()[0]
    f = _jsonl(tmp_path / "q.jsonl", {"id": q["id"], "title": q["title"], "abstract": q["abstract"]}, prefix=BOM)
    code, out, _ = run(capsys, "--work", str(work), "recommend", "--queries", str(f), "--format", "trec", "--top", "3")
    assert code == 0
    assert [ln.split()[0] for ln in out.splitlines()] == [q["id"]] * 3


@pytest.mark.data
def test_stopword_only_query_gets_the_notice_not_a_generic_list(capsys, slice_work):
    from helpers import recommender as S

    from mustcite.recommend import Recommender
    from mustcite.recommend.query import parse_query

    work, popular = slice_work
    rec = Recommender.load(popular)
    doc, _ = parse_query({"title": "the of and", "abstract": ""})
    cands, _, _ = rec.candidates.generate([doc], years=[2023])
    assert cands[0], "the popularity prior gives even a stopword-only query candidates"
    ranked = rec.recommend_many([{"id": "s", "title": "the of and", "abstract": ""},
                                 {"id": "q", "title": S.held_out_queries()[0]["title"]}], top=5)
    assert list(ranked["s"]) == [] and "no searchable words" in ranked["s"].notice
    assert len(ranked["q"]) == 5 and ranked["q"].notice is None

    code, out, err = run(capsys, "--work", str(work), "recommend", "--title", "the of and", "--abstract", "",
                         "--model", str(popular), "--format", "json")
    assert code == 0
    assert json.loads(out)["results"] == []
    assert "note: query query: no results: the query has no searchable words" in err


@pytest.mark.slow
@pytest.mark.data
def test_stopword_only_query_with_a_dense_encoder(tmp_path):
    """The dense encoder embeds any text, stopwords too: its neighbours are no answer to "the of and"."""
    from helpers import recommender as S

    from mustcite.recommend.query import parse_query

    rec = S.dense_recommender(tmp_path / "cache")
    rec.fit()
    doc, _ = parse_query({"title": "the of and", "abstract": "is it to be"})
    assert rec.candidates.generate([doc], years=[2023])[0][0], "dense hits for a stopword-only query"
    ranked = rec.recommend_many([{"id": "s", "title": "the of and", "abstract": "is it to be"}], top=10)
    assert ranked["s"] == [] and ranked["s"].notice.startswith("no results: the query has no searchable words")
