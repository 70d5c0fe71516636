"""ML Anthology in the corpus build: import, record-by-record merge with the paper lists, field
sources, disagreements, version links, side records.

Fixtures are real records cut from ``anthology/records`` and ``proceedings/paperlists`` into a small
data folder per test; bad-input cases are generated.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import DATA

from mustcite.corpus import build_corpus
from mustcite.corpus.anthology import clean_author, import_anthology_file
from mustcite.corpus.identifiers import identifier_keys, year_scoped
from mustcite.corpus.store import DISAGREEMENTS_FILE, SIDE_TRACKS_FILE
from mustcite.errors import MustciteError

ANTH = DATA / "anthology" / "records"
LISTS = DATA / "proceedings" / "paperlists"


def _records(path: Path, pred) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [r for r in map(json.loads, fh) if pred(r)]


def _title_in(*titles: str):
    want = {t.lower() for t in titles}
    return lambda r: (r.get("title") or "").lower() in want


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")


ROLLINGQ_LIST = "Reviving the Cooperation Dynamics in Multimodal Transformer"
ROLLINGQ = "RollingQ: Reviving the Cooperation Dynamics in Multimodal Transformer"
DENSITY = "Data Structures for Density Estimation"


@pytest.fixture()
def small_data(tmp_path, data_dir):
    """ICML 2025 (a renamed paper: the list has the submission title, the anthology the final one),
    ICML 2023 (the same paper in both, the anthology brings the abstract-less PMLR record), a TMLR
    paper, and an ECCV 2010 workshop paper the legacy file also lists as a main-conference paper."""
    d = tmp_path / "data"
    _write(d / "proceedings" / "paperlists" / "icml2025.jsonl.gz",
           _records(LISTS / "icml2025.jsonl.gz", _title_in(ROLLINGQ_LIST)))
    _write(d / "proceedings" / "paperlists" / "icml2023.jsonl.gz",
           _records(LISTS / "icml2023.jsonl.gz", _title_in(DENSITY)))
    _write(d / "anthology" / "records" / "icml-2025.jsonl.gz",
           _records(ANTH / "icml-2025.jsonl.gz", _title_in(ROLLINGQ)))
    _write(d / "anthology" / "records" / "icml-2023.jsonl.gz",
           _records(ANTH / "icml-2023.jsonl.gz", _title_in(DENSITY)))
    tmlr = _records(ANTH / "tmlr-2023.jsonl.gz", lambda r: True)[:3]
    _write(d / "anthology" / "records" / "tmlr-2023.jsonl.gz", tmlr)
    ws = _records(ANTH / "eccvw-legacy.jsonl.gz", lambda r: r["year"] == 2010)[:50]
    dois = {w["doi"] for w in ws}
    main = _records(ANTH / "eccv-legacy.jsonl.gz", lambda r: r["doi"] in dois)[:2]
    assert main, "the legacy ECCV file lists workshop papers of 2010 (PROVENANCE)"
    _write(d / "anthology" / "records" / "eccvw-legacy.jsonl.gz", ws)
    _write(d / "anthology" / "records" / "eccv-legacy.jsonl.gz", main)
    return d, {"tmlr": tmlr, "eccv_copies": main}


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


@pytest.mark.data
def test_renamed_paper_is_one_paper_with_the_list_id_the_final_title_and_the_disagreement(small_data, tmp_path):
    data, _ = small_data
    build_corpus(data, tmp_path / "work")
    papers = _rows(tmp_path / "work" / "corpus" / "papers.parquet")
    icml25 = [p for p in papers if p["year"] == 2025]
    assert len(icml25) == 1, [p["title"] for p in icml25]
    p = icml25[0]
    assert p["title"] == ROLLINGQ and p["abstract"] and dict(p["field_sources"])["abstract"] == "mlanthology"
    # the id stays the one the paper list gives it (benchmarks and models hold ids)
    no_anth = tmp_path / "no-anth"
    build_corpus(data, no_anth, anthology=False)
    before = [q for q in _rows(no_anth / "corpus" / "papers.parquet") if q["year"] == 2025]
    assert [q["paper_id"] for q in before] == [p["paper_id"]]
    dis = _rows(tmp_path / "work" / "corpus" / DISAGREEMENTS_FILE)
    titles = [x for x in dis if x["paper_id"] == p["paper_id"] and x["field"] == "title"]
    assert titles and dict(titles[0]["values"]) == {"paperlists": ROLLINGQ_LIST, "mlanthology": ROLLINGQ}


@pytest.mark.data
def test_side_records_keep_venue_and_track_and_legacy_workshop_copies_are_workshop_papers(small_data, tmp_path):
    data, cut = small_data
    report = build_corpus(data, tmp_path / "work")
    corpus = tmp_path / "work" / "corpus"
    papers, side = _rows(corpus / "papers.parquet"), _rows(corpus / SIDE_TRACKS_FILE)
    assert {(p["venue"], p["year"]) for p in papers} == {("ICML", 2023), ("ICML", 2025)}
    tmlr = [s for s in side if s["venue"] == "TMLR"]
    assert len(tmlr) == len(cut["tmlr"]) and {s["track"] for s in tmlr} == {"journal"}
    assert report.workshop_refiled == len(cut["eccv_copies"])
    assert not any(s["venue"] == "ECCV" and s["track"] != "workshop" for s in side)
    # each refiled copy is one record with its workshop twin, not a second paper
    assert sum(s["venue"] == "ECCV" for s in side) == 50
    assert report.side_by_venue_track["TMLR/journal"] == len(cut["tmlr"])


def test_versions_link_a_workshop_paper_to_its_conference_version(tmp_path):
    from mustcite.corpus.records import Paper, make_paper_id
    from mustcite.corpus.versions import version_links

    t = "Learning Transferable Visual Models From Natural Language Supervision"
    a = Paper(make_paper_id(t, "ICML", 2021), t, "ICML", 2021, authors=["Alec Radford", "Jong Wook Kim"])
    w = Paper(make_paper_id(t, "ICLR", 2021, "w"), t, "ICLR", 2021, authors=["Alec Radford"], track="workshop")
    j = Paper(make_paper_id(t, "TMLR", 2022), t, "TMLR", 2022, authors=["Someone Else"], track="journal")
    rows = version_links([a], [w, j])
    assert {(r["paper_id"], r["version_id"], r["kind"], r["evidence"]) for r in rows} == {
        (a.paper_id, w.paper_id, "workshop", "title+authors"), (w.paper_id, a.paper_id, "conference", "title+authors")}


def test_neurips_hashes_name_a_paper_only_with_its_year():
    """NeurIPS reuses proceedings hashes across years ("Attention is All you Need", 2017, and a
    2006 paper share one)."""
    url = "https://papers.nips.cc/paper/2017/hash/3f5ee243547dee91fbd053c1c4a845aa-Abstract.html"
    keys = identifier_keys(url=url)
    assert keys == ["nips:3f5ee243547dee91fbd053c1c4a845aa"] and year_scoped(keys[0])
    assert not year_scoped("doi:10.1007/978-3-031-19769-7_1")
    assert identifier_keys(url="https://openaccess.thecvf.com/content/CVPR2023/html/Ci_GFPose_Learning_3D_Human_Pose"
                               "_Prior_With_Gradient_Fields_CVPR_2023_paper.html") == \
        identifier_keys(url="https://openaccess.thecvf.com/content/CVPR2023/papers/Ci_GFPose_Learning_3D_Human_Pose"
                            "_Prior_With_Gradient_Fields_CVPR_2023_paper.pdf")
    assert identifier_keys(url="https://jmlr.org/papers/v24/18-080.html") == ["jmlr:v24/18-080"]


def test_the_same_hash_in_two_years_is_two_papers():
    from mustcite.corpus.dedup import dedup
    from mustcite.corpus.importers import ImportedRecord

    h = "https://proceedings.neurips.cc/paper_files/paper/{y}/hash/3f5ee243547dee91fbd053c1c4a845aa-Abstract.html"
    recs = [ImportedRecord("mlanthology", "f", 1, "NeurIPS", y, t, url=h.format(y=y),
                           id_keys=identifier_keys(url=h.format(y=y)))
            for y, t in ((2017, "Attention is All you Need"), (2006, "Tighter PAC-Bayes Bounds"))]
    assert len(dedup(recs).papers) == 2


def test_author_names_lose_footnote_marks_and_tex():
    assert clean_author("Ravi[2]") == "Ravi"
    assert clean_author("Anna Stang1") == "Anna Stang"
    assert clean_author("Marco D\\textsc\\char13Acunto") == "Marco DAcunto"
    assert clean_author("Yann LeCun") == "Yann LeCun"


@pytest.mark.parametrize("record,field", [
    ({"title": "T", "year": "2020", "venue": "icml", "authors": []}, "year"),
    ({"title": "T", "year": 2020, "venue": "icml", "authors": "A, B"}, "authors"),
    ({"title": None, "year": 2020, "venue": "icml", "authors": []}, "title"),
    ({"title": "T", "year": 2020, "venue": "icml", "authors": [], "doi": 5}, "doi"),
])
def test_bad_anthology_records_name_file_line_and_field(tmp_path, record, field):
    path = tmp_path / "anthology" / "records" / "icml-2020.jsonl.gz"
    _write(path, [{"title": "Fine", "year": 2020, "venue": "icml", "authors": []}, record])
    with pytest.raises(MustciteError) as exc:
        list(import_anthology_file(path, tmp_path))
    assert exc.value.line == 2 and exc.value.field == field and "icml-2020" in str(exc.value.path)


@pytest.mark.slow
@pytest.mark.data
def test_full_build_reads_every_anthology_record_and_fills_abstracts(data_dir, tmp_path):
    import duckdb

    m = json.loads((DATA / "anthology" / "manifest.json").read_text())
    report = build_corpus(DATA, tmp_path / "work")
    got = {f: (v["records"], v["with_abstract"]) for f, v in report.files.items() if f.startswith("anthology/")}
    assert {f: n for f, (n, _) in got.items()} == {"anthology/" + e["file"]: e["records"] for e in m["files"]}
    assert report.sources["mlanthology"]["records"] == 158_407 and report.skipped == {}
    # the two upstream placeholder abstracts ("./abstract") are dropped (PROVENANCE)
    assert sum(a for _, a in got.values()) == m["totals"]["with_abstract"] - 2
    papers = str(tmp_path / "work" / "corpus" / "papers.parquet")
    n, missing = duckdb.sql("SELECT count(*), count(*) FILTER (WHERE coalesce(trim(abstract), '') = '') "
                            f"FROM read_parquet('{papers}') WHERE year BETWEEN 2013 AND 2025").fetchall()[0]
    assert missing / n <= 0.03
    assert {(r["venue"], r["year"]) for r in report.by_venue_year if r["year"] == 2025} >= {
        ("NeurIPS", 2025), ("ICML", 2025), ("ICLR", 2025), ("CVPR", 2025), ("ICCV", 2025)}
    assert report.version_links and report.disagreements["title"]["text"] > 0


def test_html_entities_in_author_lists_are_decoded_per_name():
    from mustcite.corpus.importers import parse_authors

    assert parse_authors("Basudha Pal, Alice O&#x27; Toole, Rama Chellappa") == [
        "Basudha Pal", "Alice O' Toole", "Rama Chellappa"]
    assert parse_authors("['Mary O&#x27;Neil', 'Bo Li']") == ["Mary O'Neil", "Bo Li"]


def test_a_bare_list_id_and_a_book_doi_never_join_papers():
    """IJCAI's lists give ids such as "paper550" in every year (taken for OpenReview ids, they must
    stay within their year), and ECCV 2022's list writes chapter DOIs with a space
    ("10.1007/978-3-031-19830-4 _6"), whose cut-off part is the book's DOI shared by 40 papers."""
    from mustcite.corpus.dedup import dedup
    from mustcite.corpus.importers import ImportedRecord, openreview_id

    ijcai = [ImportedRecord("paperlists", "f", y, "IJCAI", y, t, openreview_id=openreview_id("paper550"))
             for y, t in ((2021, "Cross-Domain Slot Filling as Machine Reading Comprehension"),
                          (2022, "Another IJCAI Paper Entirely"))]
    assert len(dedup(ijcai).papers) == 2


@pytest.mark.data
def test_chapter_dois_with_a_space_stay_apart(tmp_path, data_dir):
    d = tmp_path / "data"
    rows = _records(LISTS / "eccv2022.jsonl.gz", lambda r: "19830-4 _" in (r.get("doi") or ""))[:5]
    assert len(rows) == 5
    _write(d / "proceedings" / "paperlists" / "eccv2022.jsonl.gz", rows)
    assert build_corpus(d, tmp_path / "work").total == 5
