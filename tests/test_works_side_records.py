"""Cited works that are records of the corpus's side file (workshop papers, TMLR articles, other
venues) carry that record: its id, venue, year and track, and its DOI when the references gave none."""

from __future__ import annotations

import json

import duckdb
import pyarrow.parquet as pq
import pytest

from mustcite.corpus.records import Paper
from mustcite.corpus.store import SIDE_TRACKS_FILE, write_papers
from mustcite.errors import DataMissingError
from mustcite.extract.works import (
    CITATIONS_FILE,
    WORKS_FILE,
    SideRecord,
    SideRecords,
    WorkIndex,
    build_catalogue,
    pool_works,
    works_schema_json,
)

TMLR = "Sparse mixtures of experts at scale"
WORKSHOP = "Probing hidden states of small language models"
JAIR = "Planning with incomplete knowledge of the world"
OTHER = "Learning to see in the dark"


def side_records() -> list[Paper]:
    return [
        Paper("s-tmlr", TMLR, "TMLR", 2023, authors=["Ada Lovelace", "Alan Turing"], track="journal",
              doi="10.5555/tmlr.1"),
        Paper("s-ws", WORKSHOP, "ICML", 2022, authors=["Grace Hopper"], track="workshop"),
        Paper("s-jair", JAIR, "JAIR", 2001, authors=["Barbara Liskov"], track="journal", doi="10.1613/jair.99"),
        # a title that other people used too
        Paper("s-other", OTHER, "CVPR", 2022, authors=["Edsger Dijkstra"], track="workshop"),
    ]


def test_match_needs_title_close_year_and_a_shared_surname():
    side = SideRecords((t, SideRecord(pid, y, v, tr, "", frozenset(s))) for t, pid, y, v, tr, s in [
        ("a study of things", "r-ws", 2022, "ICML", "workshop", {"lovelace"}),
        ("a study of things", "r-tmlr", 2023, "TMLR", "journal", {"lovelace"}),
        ("a study of things", "r-far", 2020, "MLJ", "journal", {"lovelace"}),
        ("a study of things", "r-else", 2023, "WACV", "main", {"knuth"}),
    ])
    assert len(side) == 4
    # the closest year with a shared surname; of two as close, the one outside a workshop
    assert side.match("A Study of Things", 2023, ["Lovelace, A."]).record_id == "r-tmlr"
    assert side.match("A study of things.", 2022, ["A. Lovelace"]).record_id == "r-ws"
    # 2020 or 2022: not the workshop
    assert side.match("A study of things", 2021, ["Ada Lovelace"]).record_id == "r-far"
    assert side.match("A study of things", 2018, ["Ada Lovelace"]) is None                   # two years off
    assert side.match("A study of things", 2023, ["Donald Knuth"]).record_id == "r-else"
    assert side.match("A study of things", 2023, ["Barbara Liskov"]) is None                 # no shared surname
    assert side.match("A study of things", 2022, []).record_id == "r-ws"                     # no authors: any
    assert side.match("A study of things", None, ["Ada Lovelace"]) is None
    assert side.match("A study of other things", 2023, ["Ada Lovelace"]) is None


def _write_folder(root, papers):
    """An extraction folder: ``papers`` = {paper: (year, [reference dicts])}."""
    root.mkdir()
    for p, (year, refs) in papers.items():
        (root / f"{p}.json").write_text(json.dumps(refs))
        (root / f"{p}.meta.json").write_text(json.dumps({"paper": p, "year": year}))
    return root


def _ref(target, title, year, authors, raw=""):
    return {"target": target, "title": title, "year": year, "cite": str(target), "contexts": [], "raw": raw,
            "authors": authors, "mentions": 1, "paper_id": None}


def test_build_links_works_to_side_records_and_keeps_their_citing_papers(tmp_path):
    corpus = tmp_path / "corpus"
    write_papers(side_records(), corpus / SIDE_TRACKS_FILE)
    folder = _write_folder(tmp_path / "extract", {
        "p1": (2024, [_ref(1, TMLR, 2022, ["A. Lovelace"]), _ref(2, WORKSHOP, 2022, ["G. Hopper"]),
                      _ref(3, OTHER, 2022, ["J. Smith"]), _ref(4, JAIR, 2002, ["B. Liskov"])]),
        "p2": (2024, [_ref(1, "Sparse Mixtures of Experts at Scale", 2023, ["Lovelace, Ada"],
                           raw="Lovelace. Sparse mixtures. arXiv:2301.00001, 2023.")]),
    })
    s = build_catalogue([folder], corpus, workers=1, progress=False)
    assert s.side_records == {"file": str(corpus / SIDE_TRACKS_FILE), "records": 4, "works_linked": 3,
                              "by_venue_track": {"ICML/workshop": 1, "JAIR/journal": 1, "TMLR/journal": 1}}
    works = {r["title"]: r for r in pq.read_table(corpus / WORKS_FILE).to_pylist()}
    tmlr = next(w for t, w in works.items() if t.lower() == TMLR.lower())
    assert (tmlr["record_id"], tmlr["record_venue"], tmlr["record_year"], tmlr["record_track"]) == \
        ("s-tmlr", "TMLR", 2023, "journal")
    assert tmlr["doi"] == "10.5555/tmlr.1" and tmlr["n_citing"] == 2 and tmlr["identifiers"] == ["arxiv:2301.00001"]
    assert (works[WORKSHOP]["record_id"], works[WORKSHOP]["doi"]) == ("s-ws", "")
    # the same title by other authors is no record of the side file
    assert works[OTHER]["record_id"] is None and works[OTHER]["record_track"] is None
    cites = duckdb.sql(f"select work_id, citing from '{corpus / CITATIONS_FILE}' where work_id = '{tmlr['work_id']}'"
                       " order by citing").fetchall()
    assert [c for _, c in cites] == ["p1", "p2"]
    assert set(works_schema_json()["$defs"]["work"]["required"]) == set(tmlr)
    summary = json.loads((corpus / "works.json").read_text())
    assert summary["side_records"]["works_linked"] == 3
    # a pool entry links by the record's DOI when the references give no arXiv id or DOI
    urls = {r["title"]: r["url"] for r in pool_works(WorkIndex.load(corpus))}
    assert urls[JAIR] == "https://doi.org/10.1613/jair.99" and urls[WORKSHOP] is None
    assert urls[tmlr["title"]] == "https://arxiv.org/abs/2301.00001"


def test_without_a_side_file_nothing_links_and_a_named_missing_one_is_an_error(tmp_path):
    folder = _write_folder(tmp_path / "extract", {"p1": (2024, [_ref(1, TMLR, 2023, ["A. Lovelace"])])})
    s = build_catalogue([folder], tmp_path / "corpus", workers=1, progress=False)
    assert s.side_records["works_linked"] == 0 and s.side_records["file"] is None
    assert pq.read_table(tmp_path / "corpus" / WORKS_FILE).column("record_id").to_pylist() == [None]
    with pytest.raises(DataMissingError):
        build_catalogue([folder], tmp_path / "c2", workers=1, progress=False,
                        side_records=tmp_path / "nope.parquet")
    # a side file elsewhere, named
    write_papers(side_records(), tmp_path / "side" / SIDE_TRACKS_FILE)
    s = build_catalogue([folder], tmp_path / "c3", workers=1, progress=False,
                        side_records=tmp_path / "side" / SIDE_TRACKS_FILE)
    assert s.side_records["by_venue_track"] == {"TMLR/journal": 1}


def test_a_catalogue_built_before_the_record_columns_still_loads(tmp_path):
    folder = _write_folder(tmp_path / "extract", {"p1": (2024, [_ref(1, WORKSHOP, 2022, ["G. Hopper"])])})
    write_papers(side_records(), tmp_path / "corpus" / SIDE_TRACKS_FILE)
    build_catalogue([folder], tmp_path / "corpus", workers=1, progress=False)
    path = tmp_path / "corpus" / WORKS_FILE
    pq.write_table(pq.read_table(path).drop_columns(["doi", "record_id", "record_venue", "record_year",
                                                     "record_track"]), path)
    index = WorkIndex.load(tmp_path / "corpus")
    (w,) = index.works.values()
    assert w["title"] == WORKSHOP and w["record_id"] is None and w["doi"] is None
    assert [r["url"] for r in pool_works(index)] == [None]
