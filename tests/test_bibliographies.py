"""Reference files from papers' .bbl bibliographies (``mustcite extract-bibliographies``), on a few real
papers cut from ``citations_cs768/papers.jsonl.xz`` and a small real corpus (the NeurIPS 2019 and ICML
2019 paper lists); bad input lines are generated."""

from __future__ import annotations

import gzip
import json
import lzma
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import DATA

from mustcite.cli.main import main
from mustcite.corpus.records import make_paper_id
from mustcite.errors import MustciteError
from mustcite.extract.bibliographies import (
    EXCLUDED_SUBDIR,
    CitingLookup,
    arxiv_year,
    import_bibliographies,
    paper_problem,
    references_from_bbls,
    validate_meta,
)
from mustcite.extract.bibtex import bibitem_authors, bibitem_venue, parse_bbl
from mustcite.extract.records import validate_reference_list

SOURCE = DATA / "citations_cs768" / "papers.jsonl.xz"
#: an apalike .bbl (\bibitem[a][b][c]{key}, "Surname, I." names), an ACM one (\bibinfo fields, a comment
#: before the key), a biblatex one, a paper with two .bbl files, and a NeurIPS 2019 paper
WANT = {"0709.0928v1", "2006.13114v3", "1705.07874v2", "1506.03164v2", "1906.09323v2"}


@pytest.fixture(scope="module")
def papers(data_dir) -> list[dict]:
    got = []
    with lzma.open(SOURCE, "rt", encoding="utf-8") as fh:
        for line in fh:
            if any(f'"{w}"' in line[:40] for w in WANT):
                got.append(json.loads(line))
    assert len(got) >= 3
    return got


@pytest.fixture(scope="module")
def corpus(data_dir, tmp_path_factory) -> Path:
    cols: dict[str, list] = {"paper_id": [], "title": [], "venue": [], "year": []}
    for name, venue, year in (("nips2019", "NeurIPS", 2019), ("icml2019", "ICML", 2019), ("nips2017", "NeurIPS", 2017)):
        for line in gzip.open(DATA / "proceedings" / "paperlists" / f"{name}.jsonl.gz", "rt", encoding="utf-8"):
            if line.strip():
                r = json.loads(line)
                cols["paper_id"].append(make_paper_id(r["title"], venue, year, str(r.get("id", ""))))
                cols["title"].append(r["title"])
                cols["venue"].append(venue)
                cols["year"].append(year)
    out = tmp_path_factory.mktemp("corpus")
    pq.write_table(pa.table(cols), out / "papers.parquet")
    return out


def _source(tmp_path: Path, papers: list[dict], extra: list[str] = ()) -> Path:
    src = tmp_path / "papers.jsonl"
    src.write_text("".join(json.dumps(p) + "\n" for p in papers) + "".join(x + "\n" for x in extra))
    return src


# ---- pure functions -----------------------------------------------------------------------------

def test_arxiv_year():
    assert arxiv_year("1706.03762") == 2017
    assert arxiv_year("0709.0928v1") == 2007
    assert arxiv_year("cs/0112017") == 2001
    assert arxiv_year("nonsense") is None


def test_bibitem_authors_and_venue():
    assert bibitem_authors("Archambeau, C., Delannay, N., & Verleysen, M. (2006).") == \
        (["C. Archambeau", "N. Delannay", "M. Verleysen"], False)
    assert bibitem_authors("A. Vaswani, N. Shazeer, and N. Parmar.") == \
        (["A. Vaswani", "N. Shazeer", "N. Parmar"], False)
    assert bibitem_authors("J. Smith et al.") == (["J. Smith"], True)
    assert bibitem_venue("In Proc. ICML, pages 1040--1047, 2008.") == "Proc. ICML"
    assert bibitem_venue("J. Mach. Learn. Res., 7:2541--2563, 2006.") == "J. Mach. Learn. Res."
    assert bibitem_venue("2012.") == ""


def test_sidecar_schema_names_the_field():
    with pytest.raises(MustciteError, match="bibliography sidecar schema"):
        validate_meta({"paper": "x"}, path="x.meta.json")


def test_paper_problem_names_the_field():
    assert paper_problem([1]) == "not a JSON object"
    assert paper_problem({"bbl": []}) == "missing field 'id'"
    assert "'bbl'" in paper_problem({"id": "1706.03762"})
    assert "bbl[0].text" in paper_problem({"id": "x", "bbl": [{"file": "a.bbl"}]})
    assert paper_problem({"id": "x", "bbl": [{"file": "a.bbl", "text": ""}]}) is None


def test_apalike_and_acm_items_parse(papers):
    by_id = {p["id"]: p for p in papers}
    entries, messages = parse_bbl(by_id["0709.0928v1"]["bbl"][0]["text"], "icml07.bbl")
    assert messages == [] and len(entries) == 19
    first = entries[0]
    assert (first.title, first.authors, first.year) == ("Robust probabilistic projections",
                                                        ["C. Archambeau", "N. Delannay", "M. Verleysen"], 2006)
    entries, messages = parse_bbl(by_id["2006.13114v3"]["bbl"][0]["text"], "acm.bbl")
    assert messages == [] and len(entries) == 58
    e = entries[1]
    assert (e.title, e.authors[0], e.year) == ("Adversarial Cost-Sensitive Classification", "K. Asif", 2015)


def test_references_follow_the_schema(papers):
    for p in papers:
        refs, stats, _ = references_from_bbls(p["bbl"])
        validate_reference_list(refs)
        assert stats["n_references"] == len(refs) > 0
        assert all(r["contexts"] == [] and r["mentions"] == 0 and r["bibkey"] for r in refs)
        assert [r["target"] for r in refs] == list(range(1, len(refs) + 1))


def test_citing_paper_year_from_the_corpus(papers, corpus):
    lookup = CitingLookup(corpus)
    by_id = {p["id"]: p for p in papers}
    m = lookup.find("1906.09323v2", by_id["1906.09323v2"]["title"])
    assert (m.year, m.year_source, m.by, m.venue) == (2019, "corpus", "title", "NeurIPS")
    assert m.family == [m.paper_id]
    m = lookup.find("0709.0928v1", "Robust mixtures in the presence of measurement errors")
    assert (m.paper_id, m.year, m.year_source) == (None, 2007, "arxiv")


# ---- the whole import and the command line ------------------------------------------------------

def test_import_writes_records_and_reports_bad_lines(tmp_path, papers, corpus):
    src = _source(tmp_path, papers, ['{"id": "x", "title": "no bbl"}', "{not json"])
    out = tmp_path / "out"
    s = import_bibliographies(src, out, corpus, workers=1, progress=False)
    assert s.papers == len(papers) + 2
    assert s.bad_lines == [f"{src}:{len(papers) + 1}: missing field 'bbl' (a list of {{file, text}})",
                           f"{src}:{len(papers) + 2}: malformed JSON: Expecting property name enclosed in double "
                           "quotes"]
    meta = json.loads((out / "0709.0928v1.meta.json").read_text())
    assert (meta["method"], meta["contexts"], meta["year"], meta["year_source"]) == ("bbl", False, 2007, "arxiv")
    assert meta["source_path"].endswith(f"{src.name}:{[p['id'] for p in papers].index('0709.0928v1') + 1}")
    refs = json.loads((out / "0709.0928v1.json").read_text())
    validate_reference_list(refs)
    assert refs[0]["title"] == "Robust probabilistic projections" and refs[0]["cite"].startswith("Archambeau et al.")
    linked = json.loads((out / "1906.09323v2.json").read_text())
    assert any(r["paper_id"] for r in linked)        # references of 2019 or earlier in the small corpus
    assert json.loads((out / "1906.09323v2.meta.json").read_text())["year"] == 2019
    again = import_bibliographies(src, out, corpus, workers=1, progress=False)
    assert again.cached and again.references == s.references


def test_fulltext_duplicate_is_excluded(tmp_path, papers, corpus):
    ft = tmp_path / "fulltext"
    ft.mkdir()
    p = papers[0]
    (ft / "abc.json").write_text("[]")
    (ft / "abc.meta.json").write_text(json.dumps({"title": p["title"]}))
    out = tmp_path / "out"
    s = import_bibliographies(_source(tmp_path, papers), out, corpus, fulltext=[ft], workers=1, progress=False)
    stem = p["id"]
    assert (out / EXCLUDED_SUBDIR / f"{stem}.json").is_file() and not (out / f"{stem}.json").exists()
    assert json.loads((out / EXCLUDED_SUBDIR / f"{stem}.meta.json").read_text())["exclude"] == ["fulltext"]
    assert s.excluded == {"fulltext": 1, "papers": 1}


def test_cli(tmp_path, papers, corpus, capsys):
    src = _source(tmp_path, papers)
    out = tmp_path / "out"
    assert main(["extract-bibliographies", str(src), "--out", str(out), "--corpus", str(corpus), "--json",
                 "--workers", "1", "--fulltext", str(tmp_path / "none")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["papers"] == len(papers) and doc["references"] > 100


def test_cli_bad_file_names_it(tmp_path, corpus, capsys):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"id": "1"}\n')
    assert main(["extract-bibliographies", str(src), "--out", str(tmp_path / "o"), "--corpus", str(corpus),
                 "--fulltext", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert f"{src}:1: missing field 'bbl'" in err and "Traceback" not in err


def test_common_markup_reads_as_pylatexenc_reads_it(papers, monkeypatch):
    """The fast path of decode_latex ({\\em x}, \\emph{x}, \\&, --, ``x'', \\url{x}) gives what
    pylatexenc gives, on every block of the real .bbl files."""
    import re

    from mustcite.extract import bibtex

    blocks = {bibtex._PENALTY.sub("", b).strip() for p in papers for f in p["bbl"]
              for b in re.split(r"\\newblock\b|\\bibitem", f["text"])}
    blocks = [b for b in blocks if b and bibtex._simple_markup(b) is not None and bibtex._PLAIN_UNSAFE.search(b)]
    assert len(blocks) > 50
    fast = [bibtex._decode(b) for b in blocks]
    monkeypatch.setattr(bibtex, "_simple_markup", lambda v: None)
    assert [bibtex._decode(b) for b in blocks] == fast
    monkeypatch.undo()
    assert bibtex.decode_latex("{\\em Learning {B}ayes}, 7:409--439, URL \\url{http://a.b/c}. A \\& B ``q''") == \
        "Learning Bayes, 7:409–439, URL <http://a.b/c>. A & B “q”"


def test_benchmark_query_is_excluded_and_a_new_reason_keeps_the_cache(tmp_path, papers, corpus):
    p = next(x for x in papers if x["id"] == "1906.09323v2")
    out, src, none = tmp_path / "out", _source(tmp_path, papers), tmp_path / "none"
    ft = tmp_path / "fulltext"
    ft.mkdir()
    (ft / "abc.json").write_text("[]")
    (ft / "abc.meta.json").write_text(json.dumps({"title": p["title"]}))
    first = import_bibliographies(src, out, corpus, fulltext=[ft], benchmarks=none, workers=1, progress=False)
    queries = tmp_path / "bench" / "neurips-2024-v2" / "queries"
    queries.mkdir(parents=True)
    lookup = CitingLookup(corpus)
    (queries / "test.jsonl").write_text(json.dumps({"id": lookup.find(p["id"], p["title"]).paper_id,
                                                    "title": "another title"}) + "\n")
    (queries / "train.jsonl").write_text(json.dumps({"id": "x", "title": papers[0]["title"]}) + "\n")
    again = import_bibliographies(src, out, corpus, fulltext=[ft], benchmarks=tmp_path / "bench", workers=1,
                                  progress=False)
    assert again.cached and again.excluded == first.excluded == {"fulltext": 1, "papers": 1}
    meta = json.loads((out / EXCLUDED_SUBDIR / "1906.09323v2.meta.json").read_text())
    assert meta["exclude"] == ["benchmark:neurips-2024-v2:test", "fulltext"]
    ft_free = import_bibliographies(src, tmp_path / "out2", corpus, benchmarks=tmp_path / "bench", workers=1,
                                    progress=False)
    assert ft_free.excluded == {"benchmark:neurips-2024-v2:test": 1, "papers": 1}      # train queries stay
