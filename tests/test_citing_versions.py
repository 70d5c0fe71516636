"""Bibliographies imported without contexts as citing papers: leakage guards and time order.

A reference list imported under an arXiv id (``<stem>.meta.json`` names the corpus paper it is a
version of as ``paper_id``) must never feed a recommendation for that paper: not as a neighbour when
the query comes under the corpus id, not as a second labelled copy of a paper already read from a
full text, and not at all when the paper is held out. Its citations carry the "cited" label only.
The labelled papers are the recommender slice's real NeurIPS 2023 papers (helpers.recommender);
the imported copy is one of them read back as a bibliography. Every test first shows what happens
without the guard, so it can fail.
"""

from __future__ import annotations

import copy
import json
import lzma

import pytest
from helpers import DATA
from helpers import recommender as S

from mustcite.extract.bibtex import parse_bbl
from mustcite.labels.papers import CitedPaper, LabelledPaper, load_reference_dirs, paper_keys
from mustcite.recommend.neighbours import NeighbourIndex
from mustcite.retrieval.base import Doc

pytestmark = pytest.mark.data

CORPUS_ID = "corpus-version-of-0"


def _imported(p: LabelledPaper, *, versions: list[str], year: int | None = None, title: str | None = None):
    """``p`` as an imported bibliography: another id, another title (arXiv and the proceedings
    often differ), every citation "cited" only."""
    return LabelledPaper("arxiv-" + p.id, title or "A preprint: " + " ".join(reversed(p.title.split())),
                         p.abstract, p.year if year is None else year, [CitedPaper(c.paper_id) for c in p.cites],
                         "extract-cs768", versions=versions)


def _index(target: LabelledPaper, imported: LabelledPaper) -> tuple[NeighbourIndex, int]:
    others = [copy.deepcopy(p) for p in S.labelled() if p.id != target.id]
    index = NeighbourIndex(others + [imported])
    return index, len(others)


def test_a_version_of_the_query_is_never_its_neighbour(data_dir):
    target = S.labelled()[0]
    query = [Doc(CORPUS_ID, target.title, target.abstract)]
    # without the version link the imported copy is the query's nearest labelled paper
    index, row = _index(target, _imported(target, versions=[]))
    sims = index.similarities(query, None, exclude=[CORPUS_ID])
    assert sims[0, row] == sims[0].max() > 0
    # with it, the copy is the query's own paper: left out of neighbours, citers and co-citation
    index, row = _index(target, _imported(target, versions=[CORPUS_ID]))
    sims = index.similarities(query, None, exclude=[CORPUS_ID])
    assert sims[0, row] == -1.0
    assert all(nid != index.labelled[row].id for nid, _ in index.neighbours(query, None, 20, [CORPUS_ID])[0])
    assert index.own_rows(CORPUS_ID) == [row]
    assert index.own_rows(index.labelled[row].id) == [row]


def test_bibliography_cites_count_as_cited_only(data_dir):
    target = S.labelled()[0]
    index, row = _index(target, _imported(target, versions=[CORPUS_ID]))
    ballots = index._ballots[index.labelled[row].id]
    assert ballots and all(weight == 1.0 and not must and not baseline for _, weight, must, baseline in ballots)
    flags = [c.flags() for c in index.labelled[row].cites]
    assert all(f["cited"] == 1 and f["must_cite"] is None and f["type1"] is None for f in flags)


def test_a_later_bibliography_stops_helping_when_its_year_flips(data_dir):
    target = S.labelled()[0]
    query = [Doc("q", target.title, target.abstract)]
    imported = _imported(target, versions=[CORPUS_ID], year=2020)
    cited = {c.paper_id for c in imported.cites}
    index, row = _index(target, imported)
    sims = index.similarities(query, None, years=[2021])
    assert sims[0, row] > 0                                   # of 2020: helps a 2021 query
    cite_count, _ = index.counts(2021)
    before = {pid: cite_count.get(pid, 0) for pid in cited}
    imported = _imported(target, versions=[CORPUS_ID], year=2022)
    index, row = _index(target, imported)
    sims = index.similarities(query, None, years=[2021])
    assert sims[0, row] == -1.0                               # of 2022: never a neighbour of 2021
    cite_count, _ = index.counts(2021)
    assert all(cite_count.get(pid, 0) == before[pid] - 1 for pid in cited)


def _write(folder, stem, refs, meta):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").write_text(json.dumps(refs))
    (folder / f"{stem}.meta.json").write_text(json.dumps(meta))


def _first_cs768():
    """The first paper of the cs768 bibliographies with its .bbl entries read by the project's reader."""
    with lzma.open(DATA / "citations_cs768" / "papers.jsonl.xz", "rt", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            entries = [e for b in d["bbl"] for e in parse_bbl(b["text"], b["file"])[0] if e.title and e.year]
            if len(entries) >= 5:
                return d, entries
    pytest.skip("no cs768 paper with five readable entries")


def test_folders_read_a_paper_once_and_keep_held_out_papers_out(tmp_path, data_dir):
    if not (DATA / "citations_cs768" / "papers.jsonl.xz").is_file():
        pytest.skip("no citations_cs768 in the data folder")
    d, entries = _first_cs768()
    refs = [{"target": i, "title": e.title, "year": e.year, "cite": e.key, "contexts": [], "raw": e.raw,
             "authors": e.authors, "mentions": 0, "paper_id": f"p{i}"} for i, e in enumerate(entries, 1)]
    full, bib = tmp_path / "extract", tmp_path / "extract-cs768"
    _write(full, "openreview0", refs[:3], {"title": d["title"], "abstract": d["abstract"], "year": 2023})
    _write(bib, "arxiv-" + d["id"], refs, {"title": d["title"], "abstract": d["abstract"], "year": 2023,
                                         "corpus_paper_id": CORPUS_ID,
                                         "corpus_versions": [CORPUS_ID, "workshop-version"]})
    pool = {r["paper_id"] for r in refs}
    # each folder alone reads the paper
    assert [p.id for p in load_reference_dirs([bib], pool)] == ["arxiv-" + d["id"]]
    assert load_reference_dirs([bib], pool)[0].versions == [CORPUS_ID, "workshop-version"]
    # both: the full text (first folder) wins, the bibliography of the same paper is not a second citer
    both = load_reference_dirs([full, bib], pool)
    assert [p.id for p in both] == ["openreview0"]
    # held out under its corpus id only (another title): no copy of it becomes a labelled paper
    held = paper_keys([{"id": CORPUS_ID, "title": "Some other title"}])
    assert [p.id for p in load_reference_dirs([bib], pool, exclude=held)] == []
    held = paper_keys([{"id": "workshop-version", "title": "Some other title"}])   # or another version
    assert load_reference_dirs([bib], pool, exclude=held) == []
    held = paper_keys([{"id": "x", "title": d["title"]}])        # or under its title
    assert load_reference_dirs([full, bib], pool, exclude=held) == []


def test_a_bibliography_teaches_the_cited_tier_only(data_dir):
    from mustcite.recommend import Recommender, RecommenderConfig

    labelled = [copy.deepcopy(p) for p in S.labelled()]
    target = labelled[0]
    imported = _imported(target, versions=[], title=target.title)
    rec = Recommender.build(S.pool(), labelled[1:] + [imported], RecommenderConfig(dense=False, seed=0))
    _, labels, _ = rec.training_matrix([imported])
    assert (labels["cited"] == 1).any()                              # its citations are positives
    for tier in ("must_cite", "type1", "type2", "type3"):
        assert (labels[tier] == -1).all(), tier                      # no tier label invented
    # a paper of the full texts, labelled, still teaches every tier
    _, labels, _ = rec.training_matrix([labelled[1]])
    assert (labels["must_cite"] >= 0).any()


def test_hold_out_file_errors_name_the_file_and_record(tmp_path):
    from mustcite.cli.recommend import read_hold_out
    from mustcite.errors import UsageError

    good = tmp_path / "held.json"
    good.write_text(json.dumps({"queries": [{"id": "a", "title": "T"}]}))
    assert read_hold_out(good) == [{"id": "a", "title": "T"}]
    lines = tmp_path / "held.jsonl"
    lines.write_text('{"id": "a"}\n{"title": "B"}\n')
    assert [q.get("id") or q["title"] for q in read_hold_out(lines)] == ["a", "B"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "a"}, {"abstract": "no id, no title"}]))
    with pytest.raises(UsageError, match=r"bad\.json: record 2 has neither an id nor a title"):
        read_hold_out(bad)
    bad.write_text(json.dumps({"papers": []}))
    with pytest.raises(UsageError, match=r"bad\.json: expected a list"):
        read_hold_out(bad)
    bad.write_text("[{")
    with pytest.raises(UsageError, match=r"bad\.json"):
        read_hold_out(bad)
