"""``check-refs`` on the side records: venues outside the 15 (TMLR, JAIR, MLJ), workshops, DOIs,
NeurIPS hashes scoped by year, and versions of one work.

The stores here are small and written from real ML Anthology records (``anthology/records``): the
first 40 TMLR 2024 papers (so TMLR 2024 is a venue-year held completely, TMLR 2023 is not held), 30
NeurIPS 2020 papers (held completely), the three NeurIPS papers of 2006, 2017 and 2020 that share one
proceedings hash, a JAIR and a CVPR paper with DOIs, and an ICLR 2013 paper with its MLJ 2014 journal
version (another title, one DOI). The one NeurIPS workshop paper is taken from a real .bib (ML
Anthology has no NeurIPS workshops).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from mustcite.corpus.identifiers import normalize_doi
from mustcite.corpus.records import Paper, make_paper_id
from mustcite.refcheck import check_entries, check_refs, load_index
from mustcite.refcheck.check import identifier_row
from mustcite.refcheck.entries import Entry
from mustcite.refcheck.index import RefIndex
from mustcite.refcheck.venue import classify_venue

RECORDS = "anthology/records"
FILES = ["tmlr-2024", "neurips-2020", "neurips-2017", "neurips-2006", "jair-legacy", "cvpr-2021", "mlj-legacy",
         "iclr-legacy"]
#: the tests that read the anthology records (the venue-text test reads nothing)
needs_data = pytest.mark.data(*(f"{RECORDS}/{f}.jsonl.gz" for f in FILES))

HASH = "3f5ee243547dee91fbd053c1c4a845aa"      # NeurIPS 2006, 2017 and 2020 papers share it
WORKSHOP = {"title": "Denoising Score-Matching for Uncertainty Quantification in Inverse Problems",
            "authors": ["Zaccharie Ramzi", "Benjamin Rémy", "Francois Lanusse", "Jean-Luc Starck", "Philippe Ciuciu"],
            "year": 2020, "id": "ramzi2020neuripsw"}


def read(name: str) -> list[dict]:
    from helpers import DATA

    with gzip.open(DATA / RECORDS / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def by_id(name: str, rid: str) -> dict:
    return next(r for r in read(name) if r["id"] == rid)


def paper(r: dict, venue: str, track: str = "main", **links: str) -> Paper:
    kw = {"url": r.get("url") or "", **links}
    return Paper(make_paper_id(r["title"], venue, r["year"], r["id"]), r["title"], venue, r["year"],
                 authors=list(r["authors"]), source="mlanthology", source_id=r["id"], track=track,
                 doi=normalize_doi(r.get("doi")) or "", **kw)


@pytest.fixture(scope="module")
def fx(tmp_path_factory) -> dict:
    """The work folder and the records used below."""
    import pyarrow as pa

    from mustcite.corpus.store import SIDE_TRACKS_FILE, VERSIONS_FILE, write_papers, write_table
    from mustcite.corpus.versions import VERSIONS_SCHEMA

    tmlr = [r for r in read("tmlr-2024") if r["authors"]][:40]
    hashed = {y: next(r for r in read(f"neurips-{y}") if HASH in (r["url"] or "")) for y in (2006, 2017, 2020)}
    nips2020 = [r for r in read("neurips-2020") if r["authors"] and HASH not in (r["url"] or "")][:29]
    jair = by_id("jair-legacy", "atzmon2020jair-robust")
    cvpr = by_id("cvpr-2021", "liu2021cvpr-invertible")
    iclr, mlj = by_id("iclr-legacy", "glorot2013iclr-semantic"), by_id("mlj-legacy", "bordes2014mlj-semantic")
    # the 2017 paper as an older corpus keeps it: the proceedings page of its number, the hash in its PDF link
    old17 = paper(hashed[2017], "NeurIPS", url="https://papers.nips.cc/paper/7181-attention-is-all-you-need",
                  pdf=hashed[2017]["url"].replace("-Abstract.html", "-Paper.pdf"))
    corpus = ([paper(hashed[2006], "NeurIPS"), old17, paper(hashed[2020], "NeurIPS")]
              + [paper(r, "NeurIPS") for r in nips2020] + [paper(cvpr, "CVPR"), paper(iclr, "ICLR")])
    side = [paper(r, "TMLR", "journal") for r in tmlr] + [paper(jair, "JAIR", "journal"), paper(mlj, "MLJ", "journal"),
                                                          paper(WORKSHOP, "NeurIPS", "workshop")]
    root = tmp_path_factory.mktemp("reach-work")
    write_papers(corpus, root / "corpus" / "papers.parquet")
    write_papers(side, root / "corpus" / SIDE_TRACKS_FILE)
    a, b = corpus[-1], side[-2]                  # ICLR 2013 and its MLJ 2014 version
    links = [{"paper_id": x.paper_id, "version_id": y.paper_id, "version_title": y.title, "version_venue": y.venue,
              "version_year": y.year, "version_track": y.track, "kind": k, "evidence": "doi"}
             for x, y, k in ((a, b, "journal"), (b, a, "conference"))]
    write_table(pa.Table.from_pylist(links, schema=VERSIONS_SCHEMA), root / "corpus" / VERSIONS_FILE)
    return {"work": root, "index": load_index(root, cache=False), "tmlr": tmlr, "hashed": hashed, "jair": jair,
            "cvpr": cvpr, "iclr": iclr, "mlj": mlj}


def bib(key: str, title: str, authors: list[str], year: int, venue_field: str, extra: str = "") -> str:
    return (f"@article{{{key},\n  title = {{{title}}},\n  author = {{{' and '.join(authors)}}},\n"
            f"  {venue_field},\n  year = {{{year}}}{extra}\n}}\n")


def check_bib(fx: dict, tmp_path: Path, text: str) -> dict:
    path = tmp_path / "refs.bib"
    path.write_text(text, encoding="utf-8")
    return {c.key: c for c in check_refs(path, index=fx["index"])}


# ---- venue texts (no data needed) ----------------------------------------------------------------

@pytest.mark.parametrize("text,kind,side,track", [
    ("Transactions on Machine Learning Research", "other", "TMLR", None),
    ("Trans. Mach. Learn. Res.", "other", "TMLR", None),
    ("Journal of Artificial Intelligence Research", "other", "JAIR", None),
    ("Machine Learning", "other", "MLJ", None),
    ("Machine learning, 20(3):273-297", "other", "MLJ", None),
    ("Ensemble machine learning: methods and applications", "other", None, None),
    ("Neural Comput.", "other", "Neural Computation", None),
    ("IEEE/CVF Winter Conference on Applications of Computer Vision (WACV)", "other", "WACV", None),
    ("Proceedings of The 6th Conference on Robot Learning", "other", "CoRL", None),
    ("Joint European Conference on Machine Learning and Knowledge Discovery in Databases", "other", "ECML-PKDD", None),
    ("International Conference on Algorithmic Learning Theory", "other", "ALT", None),
    ("Learning for Dynamics and Control Conference", "other", "L4DC", None),
    ("ICML 2023 Workshop on Structured Probabilistic Inference", "ancillary", None, "workshop"),
    ("CVPRW", "ancillary", None, "workshop"),
    ("Findings of the Association for Computational Linguistics: EMNLP 2023", "ancillary", None, "findings"),
])
def test_side_venue_texts(text, kind, side, track):
    claim = classify_venue(text)
    assert (claim.kind, claim.side, claim.track) == (kind, side, track)


# ---- side venues -----------------------------------------------------------------------------------

@needs_data
def test_a_venue_year_read_from_one_list_is_not_held_completely(fx):
    """Every record here is read from one list (ML Anthology): however many papers it has, nothing
    confirms it is whole, so no venue-year is complete (a second list or an official count would be)."""
    idx = fx["index"]
    assert not idx.side_is_complete(("TMLR",), 2024) and not idx.side_is_complete(("TMLR",), 2023)
    assert not idx.is_complete("NeurIPS", 2020)
    cov = idx.venue_coverage("NeurIPS", 2020)
    assert cov.basis == "one list" and cov.measured is None and "one list" in cov.why_not()


@needs_data
def test_tmlr_entry_verified_and_wrong_year(fx, tmp_path):
    r = fx["tmlr"][0]
    journal = "journal = {Transactions on Machine Learning Research}"
    got = check_bib(fx, tmp_path, bib("ok", r["title"], r["authors"], 2024, journal)
                    + bib("year", r["title"], r["authors"], 2021, journal)
                    + bib("accepted", r["title"], r["authors"], 2023, journal))
    assert got["ok"].status == "verified", got["ok"].why
    assert got["ok"].record["venue"] == "TMLR" and got["ok"].record["title"] == r["title"]
    assert got["year"].status == "mismatch"
    assert [(i.field, i.entry, i.record) for i in got["year"].issues] == [("year", "2021", "2024")]
    assert "TMLR 2024" in got["year"].why
    # a journal dates a paper by acceptance, publication or volume: one year off is a note, not an error
    assert got["accepted"].status == "verified" and any("journal" in n for n in got["accepted"].notes)


@needs_data
def test_invented_title_of_a_venue_year_from_one_list_is_unverifiable(fx, tmp_path):
    title = "Hierarchical Diffusion Transformers for Zero-Shot Graph Reasoning Over Sparse Hypergraphs"
    got = check_bib(fx, tmp_path, bib("tmlr24", title, ["Jane Doe"], 2024,
                                      "journal = {Transactions on Machine Learning Research}")
                    + bib("nips20", title, ["Jane Doe"], 2020, "booktitle = {Advances in Neural Information "
                                                               "Processing Systems}"))
    assert got["tmlr24"].status == "unverifiable"
    assert got["nips20"].status == "unverifiable" and "one list" in got["nips20"].why, got["nips20"].why


@needs_data
def test_a_workshop_paper_cited_as_the_main_conference_is_never_wrong(fx, tmp_path):
    w = WORKSHOP
    got = check_bib(fx, tmp_path, bib("short", w["title"], w["authors"], 2020, "booktitle = {NeurIPS}")
                    + bib("long", w["title"], w["authors"], 2020,
                          "booktitle = {Advances in Neural Information Processing Systems}")
                    + bib("own", w["title"], w["authors"], 2020,
                          "booktitle = {NeurIPS 2020 Workshop on Deep Learning and Inverse Problems}"))
    for key in ("short", "long"):
        assert got[key].status not in ("mismatch", "not_found"), got[key].why
        assert got[key].record["title"] == w["title"] and "workshop" in got[key].why
    assert got["own"].status == "verified", got["own"].why


# ---- identifiers ------------------------------------------------------------------------------------

@needs_data
def test_a_neurips_hash_names_a_paper_of_its_year_only(fx, tmp_path):
    idx, hashed = fx["index"], fx["hashed"]
    url17 = f"https://proceedings.neurips.cc/paper_files/paper/2017/hash/{HASH}-Abstract.html"
    bare = f"https://papers.nips.cc/paper/hash/{HASH}-Abstract.html"       # no year in it
    for entry, year in [(Entry("a", year=2017, url=url17), 2017), (Entry("b", year=2018, url=url17), 2017),
                        (Entry("c", year=2006, url=bare), 2006), (Entry("d", year=2020, url=bare), 2020)]:
        hit = identifier_row(idx, entry)
        assert hit is not None and idx.title[hit[0]] == hashed[year]["title"], (entry, year)
    assert identifier_row(idx, Entry("e", year=None, url=bare)) is None
    assert identifier_row(idx, Entry("f", year=2012, url=bare)) is None
    v = hashed[2017]
    got = check_bib(fx, tmp_path, bib("vaswani", v["title"], v["authors"], 2017,
                                      "booktitle = {Advances in Neural Information Processing Systems}",
                                      f",\n  url = {{{url17}}}"))["vaswani"]
    assert got.status == "verified" and got.record["year"] == 2017 and not got.issues, got.why
    untitled = check_entries([Entry("u", year=2017, venue="NeurIPS", url=url17)], idx)[0]
    assert untitled.record["title"] == v["title"] and untitled.status == "verified"


@needs_data
def test_a_doi_finds_a_side_record_or_a_corpus_paper(fx):
    idx, jair, cvpr = fx["index"], fx["jair"], fx["cvpr"]
    got = check_entries([
        Entry("jair", authors=jair["authors"], year=2020, venue="Journal of Artificial Intelligence Research",
              doi=f"https://doi.org/{jair['doi']}"),
        Entry("cvpr", authors=cvpr["authors"], year=2021, venue="CVPR", doi=cvpr["doi"]),
        Entry("other", title="Scalable Planning for Fleets of Warehouse Robots Under Uncertainty",
              authors=jair["authors"], year=2020, venue="Journal of Artificial Intelligence Research", doi=jair["doi"]),
    ], idx)
    assert got[0].status == "verified" and got[0].record["title"] == jair["title"], got[0].why
    assert got[1].status == "verified" and got[1].record["title"] == cvpr["title"], got[1].why
    assert got[2].status == "mismatch" and [i.field for i in got[2].issues] == ["title"]


# ---- versions ---------------------------------------------------------------------------------------

@needs_data
def test_the_cited_version_of_a_corpus_paper_is_the_one_checked(fx, tmp_path):
    """The ICLR 2013 title cited as the MLJ 2014 article (its journal version, titled longer)."""
    iclr, mlj = fx["iclr"], fx["mlj"]
    got = check_bib(fx, tmp_path, bib("journal", iclr["title"], mlj["authors"], 2014, "journal = {Machine Learning}")
                    + bib("conf", iclr["title"], iclr["authors"], 2013,
                          "booktitle = {International Conference on Learning Representations}"))
    assert got["journal"].status == "verified", got["journal"].why
    assert (got["journal"].record["venue"], got["journal"].record["year"]) == ("MLJ", 2014)
    assert got["conf"].status == "verified" and got["conf"].record["venue"] == "ICLR"


@needs_data
def test_a_store_without_doi_columns_is_read(fx, tmp_path):
    import pyarrow.parquet as pq

    src = fx["work"] / "corpus" / "papers.parquet"
    old = tmp_path / "papers.parquet"
    pq.write_table(pq.read_table(src).drop(["doi"]), old)
    idx = RefIndex.build(old)
    assert len(idx.title) == pq.read_metadata(src).num_rows and not any(idx.doi)
    hit = identifier_row(idx, Entry("a", year=2017, url=f"https://papers.nips.cc/paper/2017/hash/{HASH}-Abstract.html"))
    assert hit is not None and idx.year[hit[0]] == 2017


# ---- the catalogue of cited works as evidence ------------------------------------------------------

class _Works:
    """The two look-ups :func:`attested` makes of an index."""

    def __init__(self, n_citing: int):
        self.n = n_citing

    def work_row(self, work_id):
        return 0

    def work_citing(self, row):
        return self.n


def _work(authors, year=2018):
    from mustcite.refcheck.index import Record

    return Record("work-1", "World Models", list(authors), "arXiv", year, "catalogue")


@pytest.mark.parametrize("entry_kw,authors,n,expected", [
    ({"authors": ["Ha, David"], "year": 2018}, ["David Ha", "Jurgen Schmidhuber"], 17, 17),   # as others cite it
    ({"authors": ["Ha, David"], "year": 2019}, ["David Ha"], 17, 17),                         # a later preprint version
    ({"authors": ["Ha, David"], "year": 2021}, ["David Ha"], 17, 0),                          # year far off
    ({"authors": ["Schmidt, Anna"], "year": 2018}, ["David Ha"], 17, 0),                      # another first author
    ({"authors": ["Ha, David"], "year": 2018}, ["David Ha"], 2, 0),                           # too few citers
    ({"authors": ["Ha, David"], "year": None}, ["David Ha"], 17, 0),                          # no year to compare
    ({"authors": ["Ha, David"], "year": 2018}, [], 4, 0),                                     # no authors: needs 5
    ({"authors": ["Ha, David"], "year": 2018}, [], 5, 5),
])
def test_a_work_many_papers_cite_alike_vouches_for_an_entry(entry_kw, authors, n, expected):
    from mustcite.refcheck.check import attested
    from mustcite.refcheck.entries import Entry

    entry = Entry("ha2018world", title="World models", **entry_kw)
    assert attested(entry, _work(authors), _Works(n)) == expected


@needs_data
def test_an_entry_without_venue_is_compared_with_every_version(fx, tmp_path):
    """The ICLR 2013 paper cited without a venue, with its MLJ 2014 version's year and author order:
    that version matches, so nothing is wrong."""
    iclr, mlj = fx["iclr"], fx["mlj"]
    text = (f"@misc{{v,\n  title = {{{iclr['title']}}},\n  author = {{{' and '.join(mlj['authors'])}}},\n"
            f"  year = {{2014}}\n}}\n")
    got = check_bib(fx, tmp_path, text)["v"]
    assert got.status == "verified", got.why
    assert any("every version" in n and "MLJ 2014" in n for n in got.notes), got.notes


@needs_data
def test_a_records_doi_accuses_only_when_witnessed(fx, tmp_path):
    """The CVPR 2021 record's DOI is from one source, no title witness confirms the venue-year's DOIs:
    another number of the same series is not called wrong (a source's DOIs may point at neighbours)."""
    cvpr = fx["cvpr"]
    assert not fx["index"].dois_witnessed("CVPR", 2021)
    series, number = cvpr["doi"].rsplit(".", 1)
    other = f"{series}.{int(number) + 1:05d}"
    got = check_bib(fx, tmp_path, bib("c", cvpr["title"], cvpr["authors"], 2021, "booktitle = {CVPR}",
                                      f",\n  doi = {{{other}}}"))["c"]
    assert got.status == "verified" and not got.issues, got.why
