"""Corpus import, main-track filter, dedup, store, stats and CLI, on the real paper lists.

The real corpus is built once for this module (``built`` fixture, ~21-30 s of CPU; the tests that use
it are marked slow). Bad-input cases use small generated fixtures in tmp folders.
"""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import DATA

from mustcite.cli.main import main
from mustcite.corpus import CorpusStore, build_corpus, corpus_stats, load_papers, make_paper_id
from mustcite.corpus.importers import import_file, openreview_id, parse_authors
from mustcite.corpus.records import Paper
from mustcite.corpus.venues import is_main_track, parse_file_name
from mustcite.errors import DataMissingError, MustciteError, UsageError

MANIFEST = DATA / "proceedings" / "manifest.json"


@pytest.fixture(scope="module")
def built(data_dir, tmp_path_factory):
    work = tmp_path_factory.mktemp("corpus-work")
    # the paper lists alone (ML Anthology: test_corpus_anthology)
    report = build_corpus(DATA, work, anthology=False)
    return work, report


# ---------------------------------------------------------------- real data: counts


@pytest.mark.slow
@pytest.mark.data
def test_every_file_read_with_manifest_counts(built):
    _, report = built
    m = json.loads(MANIFEST.read_text())
    expected = {"proceedings/" + e["file"]: (e["records"], e["with_abstract"]) for e in m["files"].values()}
    expected.update({"proceedings/" + e["output"]: (e["records"], e["with_abstract"])
                     for e in m["extra_sources"]})
    got = {f: (v["records"], v["with_abstract"]) for f, v in report.files.items()}
    assert got == expected
    assert len(got) == 204
    assert {f: v["sha256"] for f, v in report.files.items()} == {
        **{"proceedings/" + e["file"]: e["sha256"] for e in m["files"].values()},
        **{"proceedings/" + e["output"]: e["sha256"] for e in m["extra_sources"]}}


@pytest.mark.slow
@pytest.mark.data
def test_totals(built):
    _, report = built
    assert report.records_read == 183_844           # data README: all 183,844 records parse
    assert report.sources["paperlists"]["records"] == 102_054
    assert report.sources["paperlists"]["with_abstract"] == 45_079
    assert report.skipped == {}
    assert report.total == 120_000
    assert report.with_abstract == 97_086
    assert report.same_work_merged == 169          # later versions of 169 works (JMLR <-> conferences)
    assert report.duplicates_merged == 51_382
    assert report.multi_source_papers == 42_309
    assert report.records_main_track == 172_188
    assert report.dropped_linked == {"ICLR-Oral": 3, "paperlists": 1,
                                     "rajatmodi62-ai-conf-abstract-generator": 480}
    # 153 of 2,795 rows of this source are not accepted NeurIPS 2022 papers (PROVENANCE: 2,642 match)
    assert report.unconfirmed == {"346644054-NeurIPS2022-OpenReviewData": 153}
    # every main-track record is a paper, merged into one, dropped with an ancillary twin, or unconfirmed
    assert report.records_main_track == (report.total + report.duplicates_merged + report.same_work_merged
                                         + sum(report.dropped_linked.values()) + sum(report.unconfirmed.values()))


@pytest.mark.slow
@pytest.mark.data
def test_acl_family_main_track_filter(built):
    _, report = built
    assert report.dropped_tracks["Bhavyashah20-acl-anthology"] == {
        "demo": 96, "demos": 38, "findings": 1861, "industry": 201, "srw": 99, "tutorial": 8, "tutorials": 12}
    assert report.dropped_tracks["yhamidullah-acl-anthology"] == {
        "demo": 285, "demos": 72, "findings": 4034, "industry": 208, "srw": 76, "student": 121,
        "tutorial": 48, "tutorials": 21}
    pl = report.dropped_tracks["paperlists"]
    assert pl["findings-emnlp"] == 423 + 548         # EMNLP 2021 + 2022 findings, told by the Anthology id
    assert pl["long findings"] == 818 and pl["short findings"] == 198
    assert pl["datasets & benchmarks"] == 659
    counts = {(r["venue"], r["year"]): r["papers"] for r in report.by_venue_year}
    # Anthology volumes: long+short (or main) only
    assert counts[("ACL", 2018)] == 256 + 125
    assert counts[("ACL", 2019)] == 660
    assert counts[("ACL", 2024)] == 864 + 76
    # less ELMo, also listed at ICLR 2018 (one work, kept there with "also NAACL 2018")
    assert counts[("NAACL", 2018)] == 205 + 125 - 1
    assert counts[("EMNLP", 2019)] == 681
    assert counts[("EMNLP", 2024)] == 1268
    assert counts[("ACL", 2021)] == 571 + 139        # paperlists Long + Short
    assert counts[("NeurIPS", 2022)] == 2488 + 183   # paperlists main track (Poster + Highlighted), no D&B


@pytest.mark.slow
@pytest.mark.data
def test_stats_match_store(built):
    work, report = built
    stats = corpus_stats(work)
    d = stats.to_dict()
    assert list(d)[:4] == ["total", "with_abstract", "duplicates_merged", "by_venue_year"]
    assert d["total"] == report.total and d["with_abstract"] == report.with_abstract
    assert d["duplicates_merged"] == report.duplicates_merged
    assert d["by_venue_year"] == report.by_venue_year
    assert set(d["by_venue_year"][0]) == {"venue", "year", "papers", "with_abstract"}
    by_venue = {r["venue"]: r for r in stats.by_venue()}
    assert len(by_venue) == 15
    assert by_venue["ECCV"]["papers"] == 6_166       # = MasterSet Table 1 (ECCV 2018-2024)
    # JMLR's lists, less 55 articles that are a later version of a conference paper (kept there)
    assert by_venue["JMLR"]["papers"] == 84 + 184 + 252 + 290 + 352 + 401 + 422 - 55


# ---------------------------------------------------------------- real data: dedup


@pytest.mark.slow
@pytest.mark.data
def test_neurips_oral_in_three_sources_is_one_paper(built):
    work, _ = built
    with CorpusStore(work) as store:
        found = store.by_title("Ordering-based Conditions for Global Convergence of Policy Gradient Methods",
                               "NeurIPS", 2023)
    assert len(found) == 1
    p = found[0]
    assert {"paperlists:sW8yGZ4uVJ", "ICLR-Oral:sW8yGZ4uVJ",
            "chengyao-xie-NeurIPS2023-OpenReviewData:sW8yGZ4uVJ"} <= set(p.source_ids)
    assert p.has_abstract                             # paperlists nips2023 has none; a second source does
    assert p.authors[:2] == ["Jincheng Mei", "Bo Dai"]
    assert p.paper_id == make_paper_id(p.title, p.venue, p.year, p.source_id)


@pytest.mark.slow
@pytest.mark.data
def test_one_work_at_two_venues_is_one_paper_dated_by_its_first_version(built):
    work, _ = built
    with CorpusStore(work) as store:
        tcal = store.by_title("T-Cal: An Optimal Test for the Calibration of Predictive Models")
        hyper = store.by_title("Hyperbolic Neural Networks")
        titles = store.query("select title_norm, list(authors) AS lists from papers group by 1 "
                             "having count(*) > 1").to_pylist()
    assert [(p.venue, p.year, p.also_published) for p in tcal] == [("JMLR", 2023, ["ICML 2024"])]
    assert any(s.startswith("paper:") for s in tcal[0].source_ids)
    # same normalised title, other authors: two papers ("Hyperbolic Neural Networks" and "...++")
    assert sorted((p.venue, p.year) for p in hyper) == [("ICLR", 2021), ("NeurIPS", 2018)]
    # what still shares a title is not one work: no two records of a title share an author
    from mustcite.corpus.records import surname_key
    for row in titles:
        names = [{surname_key(a) for a in authors} for authors in row["lists"]]
        assert not any(names[i] & names[j] for i in range(len(names)) for j in range(i + 1, len(names)))
    assert len(titles) <= 3


@pytest.mark.slow
@pytest.mark.data
def test_iclr_oral_mangled_title_merges_and_keeps_real_title(built):
    work, _ = built
    with CorpusStore(work) as store:
        found = store.by_title("Token Merging_ Your ViT But Faster", "ICLR", 2023)
        assert found == store.by_title("Token Merging: Your ViT But Faster", "ICLR", 2023)
    assert len(found) == 1
    p = found[0]
    assert p.title == "Token Merging: Your ViT But Faster"
    assert "paperlists:JroZRaRw7Eu" in p.source_ids and "ICLR-Oral:JroZRaRw7Eu" in p.source_ids
    assert p.has_abstract


@pytest.mark.slow
@pytest.mark.data
def test_store_columns_and_filters(built):
    work, report = built
    path = work / "corpus" / "papers.parquet"
    schema = pq.read_schema(path)
    for col in ("paper_id", "title", "abstract", "authors", "venue", "year", "source", "source_id", "url",
                "pdf", "track", "source_ids"):
        assert col in schema.names
    assert str(schema.field("authors").type) == "list<element: string>"
    t = load_papers(work, years=[2023], venues=["NeurIPS"], columns=["paper_id", "title"])
    assert t.num_rows == next(r["papers"] for r in report.by_venue_year
                              if (r["venue"], r["year"]) == ("NeurIPS", 2023))
    assert t.column_names == ["paper_id", "title"]
    ids = load_papers(work, columns=["paper_id"]).column("paper_id").to_pylist()
    assert len(ids) == len(set(ids)) == report.total
    with pytest.raises(UsageError):
        load_papers(work, venues=["KDD"])
    with CorpusStore(work) as store:
        p = store.get(ids[0])
        assert p is not None and p.paper_id == ids[0]
        assert store.get("no-such-id") is None
    info = json.loads((work / "corpus" / "build.json").read_text())
    assert info["total"] == report.total and info["data_dir"] == str(DATA.resolve())


# ---------------------------------------------------------------- CLI


@pytest.mark.slow
@pytest.mark.data
def test_cli_stats_json_and_exit_codes(built, capsys, tmp_path):
    work, report = built
    assert main(["--work", str(work), "corpus", "stats", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"total", "with_abstract", "duplicates_merged", "by_venue_year", "tracks", "sources",
                        "year_bands"}
    assert out["total"] == report.total
    assert main(["--work", str(work), "corpus", "stats"]) == 0
    assert "Total" in capsys.readouterr().out
    assert main(["--work", str(tmp_path / "empty"), "corpus", "stats"]) == 1
    assert "mustcite corpus build" in capsys.readouterr().err
    assert main(["--work", str(work), "corpus", "stats", "--bogus"]) == 2


def test_cli_build_bad_data_exit_1(tmp_path, capsys):
    data = _fixture_data(tmp_path, {"paperlists/nips2020.jsonl": ['{"title": "A", "id": "x"}', "{not json"]})
    assert main(["--data", str(data), "--work", str(tmp_path / "w"), "corpus", "build", "-q"]) == 1
    err = capsys.readouterr().err
    assert "nips2020.jsonl:2" in err and "malformed JSON" in err


# ---------------------------------------------------------------- small generated fixtures


def _fixture_data(tmp_path: Path, files: dict[str, list[str] | bytes]) -> Path:
    data = tmp_path / "data"
    for rel, content in files.items():
        p = data / "proceedings" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        raw = content if isinstance(content, bytes) else ("\n".join(content) + "\n").encode()
        if p.name.endswith(".gz"):
            raw = gzip.compress(raw)
        p.write_bytes(raw)
    return data


GOOD = {
    "paperlists/nips2023.jsonl.gz": [
        json.dumps({"id": "abcDEF1234", "title": "Deep Nets: A Study", "author": "Ann Lee; Bo Chen",
                    "track": "main", "status": "Poster"}),
        json.dumps({"id": "zzzDEF1234", "title": "A Benchmark", "author": "C D", "track": "Datasets & Benchmarks"}),
    ],
    "ICLR-Oral/nips2023.jsonl.gz": [
        json.dumps({"author": "['Ann Lee', 'Bo Chen']", "title": "Deep Nets_ A Study", "year": "2023",
                    "abstract": "We study.\u2028Second line.", "openreview_url": "https://openreview.net/forum?id=abcDEF1234",
                    "session": "Oral 1A"}),
    ],
    "somebody-repo/icml2024.jsonl": [
        json.dumps({"title": "Deep Nets: A Study", "authors": "X Y, Z W"}),
        json.dumps({"title": "Another ICML Paper", "authors": ["X Y"], "abstract": "Text."}),
    ],
}


def test_fixture_build_dedup_and_track(tmp_path):
    data = _fixture_data(tmp_path, GOOD)
    report = build_corpus(data, tmp_path / "w")
    assert report.records_read == 5
    assert report.dropped_tracks == {"paperlists": {"datasets & benchmarks": 1}}
    assert report.total == 3 and report.duplicates_merged == 1
    papers = {(p["venue"], p["title"]): p for p in load_papers(tmp_path / "w").to_pylist()}
    merged = papers[("NeurIPS", "Deep Nets: A Study")]
    assert merged["abstract"] == "We study.\u2028Second line."      # U+2028 kept inside the string
    assert merged["source_ids"] == ["paperlists:abcDEF1234", "ICLR-Oral:abcDEF1234"]
    assert merged["authors"] == ["Ann Lee", "Bo Chen"]
    assert papers[("ICML", "Deep Nets: A Study")]["authors"] == ["X Y", "Z W"]   # other venue: not merged
    # same input, same ids
    report2 = build_corpus(data, tmp_path / "w2")
    assert load_papers(tmp_path / "w2", columns=["paper_id"]).equals(load_papers(tmp_path / "w", columns=["paper_id"]))
    assert report2.total == 3


def test_confirm_only_source_needs_a_second_source(tmp_path):
    files = dict(GOOD)
    files["346644054-NeurIPS2022-OpenReviewData/nips2023.jsonl.gz"] = [
        json.dumps({"paper_id": "abcDEF1234", "title": "Deep Nets: A Study", "abstract": "Longer."}),
        json.dumps({"paper_id": "rejected12", "title": "A Rejected Paper", "abstract": "No."})]
    report = build_corpus(_fixture_data(tmp_path, files), tmp_path / "w")
    assert report.unconfirmed == {"346644054-NeurIPS2022-OpenReviewData": 1}
    titles = load_papers(tmp_path / "w", columns=["title"]).column("title").to_pylist()
    assert "A Rejected Paper" not in titles and report.total == 3


def test_malformed_json_names_file_and_line(tmp_path):
    data = _fixture_data(tmp_path, {"paperlists/nips2020.jsonl.gz": ['{"title": "A"}', '{"title": "B",']})
    with pytest.raises(MustciteError) as exc:
        build_corpus(data, tmp_path / "w")
    assert exc.value.path.endswith("nips2020.jsonl.gz") and exc.value.line == 2


def test_missing_title(tmp_path):
    data = _fixture_data(tmp_path, {"paperlists/nips2020.jsonl": ['{"title": "A"}', '{"id": "x", "abstract": "y"}']})
    with pytest.raises(MustciteError) as exc:
        build_corpus(data, tmp_path / "w")
    assert exc.value.line == 2 and exc.value.field == "title" and "no title" in str(exc.value)


@pytest.mark.parametrize("record,field", [({"title": 12}, "title"), ({"title": "A", "author": 5}, "author"),
                                          ({"title": "A", "abstract": ["x"]}, "abstract"),
                                          ({"title": "A", "authors": "[1, 2]"}, "authors")])
def test_wrong_types(tmp_path, record, field):
    data = _fixture_data(tmp_path, {"paperlists/nips2020.jsonl": [json.dumps(record)]})
    with pytest.raises(MustciteError) as exc:
        build_corpus(data, tmp_path / "w")
    assert exc.value.line == 1 and exc.value.field in (field, "authors")


def test_unknown_venue_is_counted_skip_with_warning(tmp_path, caplog):
    files = dict(GOOD)
    files["paperlists/kdd2020.jsonl"] = ['{"title": "A"}', '{"title": "B"}']
    data = _fixture_data(tmp_path, files)
    with caplog.at_level(logging.WARNING, logger="mustcite.corpus"):
        report = build_corpus(data, tmp_path / "w")
    assert report.skipped == {"unknown venue 'kdd' (from the file name)": 2}
    assert report.total == 3
    assert any("proceedings/paperlists/kdd2020.jsonl:2" in r.getMessage() for r in caplog.records)


def test_non_utf8_file(tmp_path):
    data = _fixture_data(tmp_path, {"paperlists/nips2020.jsonl": b'{"title": "caf\xe9"}\n'})
    with pytest.raises(MustciteError, match="not UTF-8"):
        build_corpus(data, tmp_path / "w")


def test_failed_build_leaves_previous_store(tmp_path):
    data = _fixture_data(tmp_path, GOOD)
    work = tmp_path / "w"
    build_corpus(data, work)
    before = {p.name: p.read_bytes() for p in (work / "corpus").iterdir()}
    (data / "proceedings" / "paperlists" / "icml2020.jsonl").write_text('{"title": "ok"}\n{broken\n')
    with pytest.raises(MustciteError):
        build_corpus(data, work)
    assert {p.name: p.read_bytes() for p in (work / "corpus").iterdir()} == before


def test_no_paper_lists(tmp_path):
    (tmp_path / "data" / "proceedings").mkdir(parents=True)
    with pytest.raises(DataMissingError):
        build_corpus(tmp_path / "data", tmp_path / "w")


def test_missing_store_is_data_missing(tmp_path):
    with pytest.raises(DataMissingError, match="mustcite corpus build"):
        load_papers(tmp_path)


# ---------------------------------------------------------------- small helpers


def test_parse_authors_forms():
    assert parse_authors("Ann Lee; Bo Chen") == ["Ann Lee", "Bo Chen"]
    assert parse_authors("Ann Lee;Bo Chen") == ["Ann Lee", "Bo Chen"]
    assert parse_authors("Li Wang,  Dong Li") == ["Li Wang", "Dong Li"]
    assert parse_authors("['Ann Lee', \"Bo O'Chen\"]") == ["Ann Lee", "Bo O'Chen"]
    assert parse_authors(["Ann  Lee", ""]) == ["Ann Lee"]
    assert parse_authors("") == [] and parse_authors(None) == []
    with pytest.raises(MustciteError):
        parse_authors("[Ann Lee, Bo Chen]")         # looks like a list, is not a Python literal


def test_file_names_and_tracks():
    assert parse_file_name("eccv2018") == ("eccv", 2018)
    assert parse_file_name("acl2018_P18") == ("acl", 2018)
    assert parse_file_name("jmlr_v19") == ("jmlr", None)
    assert parse_file_name("nips2025_titles") == ("nips", 2025)
    assert is_main_track("main", "Poster") and is_main_track("long") and is_main_track("Special Track on AI for Good")
    for t in ("Findings", "System Demonstrations", "Datasets & Benchmarks", "srw", "Survey Track",
              "Proceedings of ACL 2018, Student Research Workshop", "tutorials", "Industry"):
        assert not is_main_track(t), t
    assert openreview_id("https://openreview.net/pdf?id=JroZRaRw7Eu") == "JroZRaRw7Eu"
    assert openreview_id("12345678") == "" and openreview_id("/paper/8296-x") == ""


@pytest.mark.data
def test_import_file_reads_real_iclr_oral():
    recs = list(import_file(DATA / "proceedings" / "ICLR-Oral" / "iclr2023.jsonl.gz", DATA))
    assert len(recs) == 247
    tm = next(r for r in recs if r.title == "Token Merging_ Your ViT But Faster")
    assert tm.openreview_id == "JroZRaRw7Eu" and tm.venue == "ICLR" and tm.year == 2023
    assert tm.authors[0] == "Daniel Bolya"


# ---------------------------------------------------------------- one work, two venues

_TCAL = "T-Cal: An Optimal Test for the Calibration of Predictive Models"
_TCAL_AUTHORS = ["Donghwan Lee", "Xinmeng Huang", "Hamed Hassani", "Edgar Dobriban"]


def _paper(title, venue, year, authors, **kw):
    return Paper(paper_id=make_paper_id(title, venue, year), title=title, venue=venue, year=year,
                 authors=list(authors), **kw)


def test_same_work_at_two_venues_is_folded_into_its_first_version():
    from mustcite.corpus.dedup import merge_same_work

    papers = [_paper(_TCAL, "ICML", 2024, _TCAL_AUTHORS, url="https://ICML.cc//virtual/2024/poster/35627",
                     source_ids=["LukasMosser-icml2024_finder:https://ICML.cc//virtual/2024/poster/35627"]),
              _paper(_TCAL, "JMLR", 2023, _TCAL_AUTHORS, source_ids=["JmlrOrg-v24:22-0320"]),
              _paper("Hyperbolic Neural Networks", "NeurIPS", 2018, ["Octavian Ganea", "Thomas Hofmann"]),
              _paper("Hyperbolic Neural Networks++", "ICLR", 2021, ["Ryohei Shimizu", "Tatsuya Harada"]),
              _paper("Preface", "COLT", 2011, []), _paper("Preface", "COLT", 2012, [])]
    icml_id = papers[0].paper_id
    kept, folded = merge_same_work(papers)
    assert folded == 1 and len(kept) == 5
    tcal = [p for p in kept if p.title == _TCAL]
    assert [(p.venue, p.year, p.also_published) for p in tcal] == [("JMLR", 2023, ["ICML 2024"])]
    assert f"paper:{icml_id}" in tcal[0].source_ids and tcal[0].url.startswith("https://ICML.cc")


def test_a_reference_to_either_version_is_the_one_cited_paper():
    """The audit's already-cited check: a draft citing the ICML 2024 version cites the work, so
    its JMLR 2023 version can never be listed as missing."""
    from mustcite.corpus.dedup import merge_same_work
    from mustcite.extract.link import TitleIndex, link_references

    kept, _ = merge_same_work([_paper(_TCAL, "ICML", 2024, _TCAL_AUTHORS),
                               _paper(_TCAL, "JMLR", 2023, _TCAL_AUTHORS),
                               _paper("Attention Is All You Need", "NeurIPS", 2017, ["Ashish Vaswani"])])
    index = TitleIndex.from_pool([p.to_dict() for p in kept])
    refs = [{"target": 1, "title": _TCAL + ".", "year": 2024, "cite": "1", "contexts": []},
            {"target": 2, "title": _TCAL, "year": 2023, "cite": "2", "contexts": []}]
    linked = {r.get("paper_id") for r in link_references(refs, index, citing_year=2025)}
    assert linked == {next(p.paper_id for p in kept if p.title == _TCAL)}
