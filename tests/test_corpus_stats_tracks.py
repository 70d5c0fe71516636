"""``mustcite corpus stats``: side records by venue and track, papers by year band, what each source
gave; on small stores written here (new and old layouts) and one built from a real paper list."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mustcite.cli.main import main
from mustcite.corpus import corpus_stats
from mustcite.corpus.records import Paper, make_paper_id
from mustcite.corpus.store import SIDE_TRACKS_FILE, write_papers

OLD_KEYS = ["total", "with_abstract", "duplicates_merged", "by_venue_year"]


def paper(title: str, venue: str, year: int, *, abstract: str = "", track: str = "main",
          sources: tuple[str, ...] = ("paperlists",), abstract_from: str = "") -> Paper:
    return Paper(make_paper_id(title, venue, year), title, venue, year, abstract=abstract, track=track,
                 source=sources[0], source_id=title[:8], source_ids=[f"{s}:{title[:8]}" for s in sources],
                 field_sources={"abstract": abstract_from} if abstract_from else {})


def write_store(root: Path, *, side: bool = True, build: dict | None = None) -> Path:
    """A store of six papers (1999 to 2025), two side records and a build.json."""
    papers = [
        paper("Old kernels", "NeurIPS", 1999, sources=("mlanthology",)),
        paper("Old trees", "ICML", 2012, abstract="a", sources=("mlanthology",), abstract_from="mlanthology"),
        paper("Deep nets", "NeurIPS", 2015, abstract="b", sources=("mlanthology", "paperlists"),
              abstract_from="paperlists"),
        paper("Graph nets", "ICLR", 2021, abstract="c", abstract_from="paperlists"),
        paper("Big models", "ICML", 2024),
        paper("New agents", "NeurIPS", 2025, abstract="d", sources=("NeurIPS2025", "mlanthology"),
              abstract_from="mlanthology"),
    ]
    # a folded version's "paper:" id names no source
    papers[2].source_ids.append("paper:1234")
    write_papers(papers, root / "corpus" / "papers.parquet")
    if side:
        write_papers([paper("A workshop note", "ICML", 2020, track="workshop", abstract="x"),
                      paper("A journal article", "TMLR", 2023, track="journal", sources=("mlanthology",)),
                      paper("Another journal article", "TMLR", 2024, track="journal", sources=("mlanthology",))],
                     root / "corpus" / SIDE_TRACKS_FILE)
    if build is None:
        build = {"duplicates_merged": 3,
                 "sources": {"paperlists": {"files": 2, "records": 9, "with_abstract": 4, "skipped": 0},
                             "mlanthology": {"files": 5, "records": 12, "with_abstract": 2, "skipped": 0}}}
    (root / "corpus" / "build.json").write_text(json.dumps(build))
    return root


def test_year_bands_tracks_and_sources(tmp_path):
    work = write_store(tmp_path)
    d = corpus_stats(work).to_dict()
    assert list(d)[:4] == OLD_KEYS and list(d)[4:] == ["tracks", "sources", "year_bands"]
    assert d["total"] == 6 and d["with_abstract"] == 4 and d["duplicates_merged"] == 3
    bands = {b["band"]: (b["papers"], b["with_abstract"], b["share_with_abstract"]) for b in d["year_bands"]}
    assert bands == {"pre-2013": (2, 1, 0.5), "2013-2018": (1, 1, 1.0), "2019-2022": (1, 1, 1.0),
                     "2023-2024": (1, 0, 0.0), "2025+": (1, 1, 1.0)}
    assert d["tracks"] == [
        {"venue": "TMLR", "track": "journal", "records": 2, "with_abstract": 0, "first_year": 2023, "last_year": 2024},
        {"venue": "ICML", "track": "workshop", "records": 1, "with_abstract": 1, "first_year": 2020, "last_year": 2020}]
    src = {s["source"]: s for s in d["sources"]}
    assert [s["source"] for s in d["sources"]] == ["mlanthology", "paperlists", "NeurIPS2025"]   # most read first
    assert src["mlanthology"] == {"source": "mlanthology", "files": 5, "records": 12, "with_abstract": 2,
                                  "papers": 4, "abstracts": 2}
    assert (src["paperlists"]["papers"], src["paperlists"]["abstracts"]) == (3, 2)
    # a source the build did not report reading still shows what the corpus took from it
    assert src["NeurIPS2025"] == {"source": "NeurIPS2025", "files": None, "records": None, "with_abstract": None,
                                  "papers": 1, "abstracts": 0}


def test_an_old_store_reads_with_what_it_has(tmp_path):
    """No side file, no field_sources or doi column: tracks from build.json, no abstract sources."""
    work = write_store(tmp_path, side=False, build={"duplicates_merged": 1, "side_by_venue_track": {
        "ACL/findings": 7, "NeurIPS/datasets & benchmarks": 2}})
    path = work / "corpus" / "papers.parquet"
    old = pq.read_table(path)
    pq.write_table(old.drop_columns(["field_sources", "doi"]), path)
    d = corpus_stats(work).to_dict()
    assert d["total"] == 6 and d["duplicates_merged"] == 1
    assert d["tracks"] == [
        {"venue": "ACL", "track": "findings", "records": 7, "with_abstract": None, "first_year": None,
         "last_year": None},
        {"venue": "NeurIPS", "track": "datasets & benchmarks", "records": 2, "with_abstract": None,
         "first_year": None, "last_year": None}]
    assert {s["source"]: (s["records"], s["papers"], s["abstracts"]) for s in d["sources"]} == {
        "mlanthology": (None, 4, None), "paperlists": (None, 3, None), "NeurIPS2025": (None, 1, None)}
    (work / "corpus" / "build.json").unlink()
    d = corpus_stats(work).to_dict()
    assert d["tracks"] == [] and d["duplicates_merged"] == 0 and len(d["year_bands"]) == 5


def test_cli_tracks_sources_and_json(tmp_path, capsys):
    work = write_store(tmp_path)
    assert main(["--work", str(work), "corpus", "stats", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == OLD_KEYS + ["tracks", "sources", "year_bands"]
    assert main(["--work", str(work), "corpus", "stats"]) == 0
    text = capsys.readouterr().out
    assert "Total" in text and "year band" in text and "2025+" in text and "TMLR" not in text
    assert main(["--work", str(work), "corpus", "stats", "--tracks"]) == 0
    text = capsys.readouterr().out
    assert "TMLR" in text and "workshop" in text and "2023–2024" in text and "Total" not in text
    assert main(["--work", str(work), "corpus", "stats", "--sources"]) == 0
    text = capsys.readouterr().out
    assert "mlanthology" in text and "NeurIPS2025" in text and "paper:" not in text
    assert main(["--work", str(work), "corpus", "stats", "--by-year"]) == 0
    assert "1999" in capsys.readouterr().out


@pytest.mark.data("proceedings/paperlists/acl2022.jsonl.gz")
def test_side_records_of_a_real_paper_list(tmp_path):
    """ACL 2022 from its paper list: the main track is the corpus, Findings and the other tracks
    are side records, counted per track."""
    from collections import Counter

    from helpers import DATA

    from mustcite.corpus.importers import import_file

    main_track, side = [], []
    for r in import_file(DATA / "proceedings" / "paperlists" / "acl2022.jsonl.gz", DATA):
        if r.skip:
            continue
        p = Paper(make_paper_id(r.title, r.venue, r.year, r.source_id), r.title, r.venue, r.year,
                  abstract=r.abstract or "", authors=list(r.authors), source="paperlists", source_id=r.source_id,
                  track=r.track, source_ids=[f"paperlists:{r.source_id}"])
        (main_track if r.main_track else side).append(p)
    write_papers(main_track, tmp_path / "corpus" / "papers.parquet")
    write_papers(side, tmp_path / "corpus" / SIDE_TRACKS_FILE)
    stats = corpus_stats(tmp_path)
    want = Counter((p.venue, p.track or "ancillary") for p in side)
    assert {(t["venue"], t["track"]): t["records"] for t in stats.tracks} == want
    assert want[("ACL", "findings")] > 300 and all(t["first_year"] == t["last_year"] == 2022 for t in stats.tracks)
    assert [(b["band"], b["papers"]) for b in stats.year_bands if b["papers"]] == [("2019-2022", len(main_track))]
    assert stats.sources == [{"source": "paperlists", "files": None, "records": None, "with_abstract": None,
                              "papers": len(main_track), "abstracts": 0}]
