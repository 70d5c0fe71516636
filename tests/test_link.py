"""Citation linking on real references (SPECTER's GROBID TEI) against a small real corpus
(NeurIPS 2017/2019, ICLR 2017, ICML 2019 paper lists), including the year constraint."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import DATA
from helpers.pdfs import PDF_DIR, SPECTER

from mustcite.corpus.records import make_paper_id
from mustcite.extract.link import TitleIndex, link_dir, link_references
from mustcite.extract.runner import extract_paths
from mustcite.extract.tei import parse_tei

pytestmark = pytest.mark.data          # every test links SPECTER's real references against real paper lists

LISTS = [("nips2017", "NeurIPS", 2017), ("iclr2017", "ICLR", 2017), ("icml2019", "ICML", 2019),
         ("nips2019", "NeurIPS", 2019)]


@pytest.fixture(scope="module")
def corpus(data_dir, tmp_path_factory) -> Path:
    cols: dict[str, list] = {"paper_id": [], "title": [], "abstract": [], "authors": [], "venue": [], "year": []}
    for name, venue, year in LISTS:
        path = DATA / "proceedings" / "paperlists" / f"{name}.jsonl.gz"
        for line in gzip.open(path, "rt", encoding="utf-8"):
            if not line.strip():
                continue
            r = json.loads(line)
            cols["paper_id"].append(make_paper_id(r["title"], venue, year, str(r.get("id", ""))))
            cols["title"].append(r["title"])
            cols["abstract"].append(r.get("abstract", ""))
            cols["authors"].append([a.strip() for a in (r.get("author") or "").split(";") if a.strip()])
            cols["venue"].append(venue)
            cols["year"].append(year)
    out = tmp_path_factory.mktemp("corpus") / "papers.parquet"
    pq.write_table(pa.table(cols), out)
    return out


def _title_of(corpus: Path, pid: str) -> tuple[str, int]:
    t = pq.read_table(corpus, columns=["paper_id", "title", "year"]).to_pylist()
    row = next(r for r in t if r["paper_id"] == pid)
    return row["title"], row["year"]


def _specter_refs():
    return parse_tei((PDF_DIR / f"{SPECTER}.tei.xml").read_bytes()).to_reference_list()


def test_links_known_references(corpus):
    index = TitleIndex.from_parquet(corpus)
    assert len(index) == 3090
    linked = link_references(_specter_refs(), index, citing_year=2020)
    hits = {r["target"]: (r["paper_id"], r["link_score"]) for r in linked if r["paper_id"]}
    expect = {
        3: "A Simple but Tough-to-Beat Baseline for Sentence Embeddings",       # ICLR 2017
        18: "Inductive Representation Learning on Large Graphs",                # NeurIPS 2017
        19: "Inductive Representation Learning on Large Graphs",                # listed twice by GROBID
        25: "Semi-Supervised Classification with Graph Convolutional Networks", # "Semisupervised" in TEI
        48: "Attention is All you Need",
        49: "Improving Textual Network Learning with Variational Homophilic Embeddings",
        51: "Simplifying Graph Convolutional Networks",                          # ICML 2019
        55: "XLNet: Generalized Autoregressive Pretraining for Language Understanding",
    }
    assert {t: _title_of(corpus, pid)[0] for t, (pid, _) in hits.items()} == expect
    assert all(score == 1.0 for t, (_, score) in hits.items() if t != 25)
    assert 0.9 <= hits[25][1] < 1.0  # fuzzy
    # every unlinked reference carries explicit nulls
    assert all(r["link_score"] is None for r in linked if not r["paper_id"])


def test_year_constraint(corpus):
    index = TitleIndex.from_parquet(corpus)
    assert index.match("Attention Is All You Need", max_year=2017) is not None
    assert index.match("Attention Is All You Need", max_year=2016) is None
    linked = link_references(_specter_refs(), index, citing_year=2018)
    titles = {_title_of(corpus, r["paper_id"])[0] for r in linked if r["paper_id"]}
    assert "Attention is All you Need" in titles
    assert "Simplifying Graph Convolutional Networks" not in titles  # 2019 > 2018
    assert all(_title_of(corpus, r["paper_id"])[1] <= 2018 for r in linked if r["paper_id"])


def test_fuzzy_threshold_and_short_titles(corpus):
    index = TitleIndex.from_parquet(corpus)
    pid, score = index.match("Atention is all you need")  # OCR-style typo
    assert score < 1.0 and _title_of(corpus, pid)[0] == "Attention is All you Need"
    assert index.match("Attention is all you want for graphs") is None
    assert index.match("XLNet") is None  # too short for fuzzy, no exact title


def test_link_dir_updates_files_and_summary(tmp_path, corpus):
    tei = tmp_path / "in" / "specter.tei.xml"
    tei.parent.mkdir()
    tei.write_bytes((PDF_DIR / f"{SPECTER}.tei.xml").read_bytes())
    out = tmp_path / "out"
    extract_paths([tei], out, workers=1, progress=False)
    meta = json.loads((out / "specter.meta.json").read_text())
    assert meta["year"] == 2019 and meta["year_source"] == "max_reference_year"
    s = link_dir(out, corpus, workers=1, progress=False)
    assert (s.papers, s.references) == (1, 57)
    assert s.linked == 8 and round(s.rate, 4) == round(8 / 57, 4)
    refs = json.loads((out / "specter.json").read_text())
    assert sum(1 for r in refs if r.get("paper_id")) == 8
    summary = json.loads((out / "summary.json").read_text())
    assert summary["link"]["linked"] == 8 and summary["link"]["link_rate"] == round(8 / 57, 4)
    assert summary["papers"][0]["linked"] == 8
    # a rerun of extract (nothing changed) keeps the link figures and the linked files
    extract_paths([tei], out, workers=1, progress=False)
    assert json.loads((out / "summary.json").read_text())["link"]["linked"] == 8


def test_cli_link(tmp_path, corpus, capsys):
    from mustcite.cli.main import main

    out = tmp_path / "out"
    extract_paths([PDF_DIR / f"{SPECTER}.tei.xml"], out, workers=1, progress=False)
    assert main(["link", str(out), "--corpus", str(corpus), "--json", "--workers", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["linked"] == 8
    # the line a person reads: the figures and the rate, no traceback
    assert main(["link", str(out), "--corpus", str(corpus), "--workers", "1"]) == 0
    said = capsys.readouterr().out
    assert "linked 8/57 references" in said and "papers/s" in said and "engine local" in said, said
    assert main(["link", str(out), "--corpus", str(tmp_path / "none.parquet")]) == 1
    assert main(["link", str(tmp_path / "nowhere")]) == 2


def test_link_dir_survives_a_broken_reference_file(tmp_path, corpus):
    out = tmp_path / "out"
    extract_paths([PDF_DIR / f"{SPECTER}.tei.xml"], out, workers=1, progress=False)
    (out / "broken.json").write_text('[{"target": 0, "title": "x"}]', encoding="utf-8")
    (out / "cut.json").write_text('[{"target": 1,', encoding="utf-8")
    s = link_dir(out, corpus, workers=1, progress=False)
    assert (s.papers, s.errors, s.linked) == (3, 2, 8)
    detail = json.loads((out / "summary.json").read_text())["link"]["errors_detail"]
    assert {d["paper"] for d in detail} == {"broken", "cut"}
    assert any("reference-file schema" in d["error"] for d in detail if d["paper"] == "broken")


def test_title_index_pickles_its_postings_as_one_array():
    import pickle

    from mustcite.extract.link import TitleIndex

    idx = TitleIndex.build(["a", "b", "c"], ["Attention is all you need", "BERT: Pre-training of deep "
                                             "bidirectional transformers", "Attention span"], [2017, 2019, 2020])
    state = idx.__getstate__()
    assert state["blocks"][0] == "postings" and "_block_lens" not in state
    back = pickle.loads(pickle.dumps(idx))
    assert back.blocks.keys() == idx.blocks.keys()
    for k in idx.blocks:
        assert back.blocks[k].tolist() == idx.blocks[k].tolist()
        assert back._block_lens[k].tolist() == idx._block_lens[k].tolist()
    for title in ("Attention Is All You Need", "Attention span!", "BERT: pre-training of deep bidirectional"):
        assert back.match(title, ref_year=2020) == idx.match(title, ref_year=2020)
