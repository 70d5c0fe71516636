"""Merge the same paper seen in several sources.

Two records of one venue are the same paper when they share an identifier: the OpenReview id, a
DOI, a PMLR, CVF, ECVA or JMLR page id (any year), the ACL Anthology id or a NeurIPS proceedings
hash (the same year only: NeurIPS reuses hashes across years); or, in the same year, the same
normalised title (:func:`normalize_title`, which also folds ICLR-Oral's ``_``-for-``:`` titles).
Workshop records of a source that files workshops apart (ML Anthology) are matched among
themselves, never with the main conference. Groups are closed transitively (union-find).

The kept record is the richest one: an abstract beats none, then more filled fields, then the
source's priority (paperlists first), then file order. Empty fields of the kept record are filled
from the others; a title from a source that mangles titles is replaced by another member's title.
``source_ids`` lists every ``"source:id"`` of the group (``source:file:line`` when a source has no id).
``field_sources`` says which source each kept field came from, and where the sources of a group
disagree on the title, the year or the authors, :func:`disagreements` reports it (nothing is
overwritten silently: the kept value and every other one are in the report).

The same work published twice (a JMLR article presented again at ICML, a conference paper
extended in a journal) is then one paper too (:func:`merge_same_work`): same normalised title and
a shared author surname (or no author list on one side and a title of four words or more). The
earliest version is kept, so that a paper is never dated later than its first publication;
``also_published`` names the other versions and ``source_ids`` holds their ids as well.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

import numpy as np
from rapidfuzz import fuzz, process

from .identifiers import normalize_doi, year_scoped
from .importers import COLLECTED_PREFIX, ImportedRecord
from .records import Paper, make_paper_id, normalize_title, surname_key

#: sources whose ids never name a corpus paper: a paper keeps the id its paper lists give it
SECONDARY_SOURCES = ("mlanthology",)


@dataclass
class DedupResult:
    papers: list[Paper]
    duplicates_merged: int          # records folded into another one
    groups_multi_source: int        # papers seen in more than one source
    #: (source, track) -> records dropped because their track/volume is not main-conference
    dropped_track: Counter = field(default_factory=Counter)
    #: source -> main-looking records dropped because another source marks the same paper ancillary
    dropped_linked: Counter = field(default_factory=Counter)
    #: source -> records of a ``confirm_only`` source that no other source lists (not accepted)
    unconfirmed: Counter = field(default_factory=Counter)
    #: the dropped groups of ancillary tracks, each merged into one Paper whose ``track`` names the
    #: ancillary track (kept apart from the corpus, so that a citation of one is recognised)
    side_track: list[Paper] = field(default_factory=list)
    #: where the sources of one paper disagree (:func:`disagreements`), one dict per field and paper
    disagreements: list[dict] = field(default_factory=list)


class _UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _rank(r: ImportedRecord, order: int) -> tuple:
    return (not r.has_abstract, -r.richness(), r.priority, order)


def source_ref(r: ImportedRecord) -> str:
    return f"{r.source}:{r.source_id}" if r.source_id else f"{r.source}:{r.file.rsplit('/', 1)[-1]}:{r.line}"


def merge_group(members: list[ImportedRecord]) -> Paper:
    """One Paper from a group of duplicate records (``members`` in file order)."""
    ranked = sorted(range(len(members)), key=lambda i: _rank(members[i], i))
    best = members[ranked[0]]
    id_title = best.title
    if best.title_mangled:
        better = [members[i] for i in ranked if not members[i].title_mangled]
        if better:
            id_title = min(better, key=lambda r: r.priority).title
    unmangled = [m for m in members if not m.title_mangled] or members
    title, title_src = _vote(unmangled, lambda r: normalize_title(r.title), lambda r: r.title)
    sources: dict[str, str] = {"title": title_src, "year": best.source, "venue": best.source}
    authors, authors_src = _vote([m for m in members if m.authors], lambda r: tuple(_surnames(r.authors)),
                                 lambda r: r.authors)
    if authors_src:
        sources["authors"] = authors_src

    def fill(attr: str):
        for i in ranked:
            v = getattr(members[i], attr)
            if v:
                sources[attr] = members[i].source
                return v
        return getattr(best, attr)

    refs: list[str] = []
    for r in members:
        ref = source_ref(r)
        if ref not in refs:
            refs.append(ref)
    abstract = fill("abstract")
    doi = next((k[4:] for i in ranked for k in members[i].id_keys if k.startswith("doi:")), "")
    if doi:
        sources["doi"] = next(members[i].source for i in ranked if f"doi:{doi}" in members[i].id_keys)
    paper_id = make_paper_id(id_title, best.venue or "", best.year, best.source_id)
    primary = [r for r in members if r.source not in SECONDARY_SOURCES]
    stable = [r for r in primary if not r.source.startswith(COLLECTED_PREFIX)] or primary
    if stable and len(stable) < len(members):
        # a paper keeps the id its paper lists give it: collecting a venue or reading another
        # catalogue never renames a known paper (reference files, benchmarks and models hold these ids)
        paper_id = merge_group(stable).paper_id
    return Paper(
        paper_id=paper_id,
        title=title, venue=best.venue or "", year=best.year, abstract=abstract,
        authors=list(authors or []), source=best.source, source_id=best.source_id,
        url=fill("url"), pdf=fill("pdf"), track=best.track, source_ids=refs,
        doi=normalize_doi(doi) or "", field_sources=sources)


def _surnames(authors: list[str]) -> list[str]:
    return [k for k in (surname_key(a) for a in authors) if k]


def _vote(members: list[ImportedRecord], key, value) -> tuple:
    """(value, source) of the reading most sources share (by ``key``); a tie goes to the record
    that ranks first (an abstract, more fields, a better source: the record of the published
    version over a title-only list). A source that truncates or reorders a field is outvoted by two
    that agree. ``(None, "")`` when ``members`` is empty."""
    if not members:
        return None, ""
    order = sorted(range(len(members)), key=lambda i: _rank(members[i], i))
    votes: dict = defaultdict(set)
    for m in members:
        votes[key(m)].add(m.source)
    first = {}
    for pos, i in enumerate(order):
        first.setdefault(key(members[i]), (pos, members[i]))
    top = max(votes, key=lambda k: (len(votes[k]), -first[k][0]))
    chosen = first[top][1]
    return value(chosen), chosen.source


def disagreements(paper: Paper, members: list[ImportedRecord]) -> list[dict]:
    """Where the records of one paper disagree: one dict per field (``title``, ``year``,
    ``authors``) with the kept value, its source and every other source's value."""
    out: list[dict] = []
    if len({m.source for m in members}) < 2:
        return out

    def report(fld: str, kind: str, kept, values: dict[str, object]) -> None:
        out.append({"paper_id": paper.paper_id, "venue": paper.venue, "year": paper.year, "field": fld,
                    "kind": kind, "kept": str(kept), "kept_source": paper.field_sources.get(fld, paper.source),
                    "values": {k: str(v) for k, v in values.items()}})

    titles = {m.source: m.title for m in members if not m.title_mangled}
    if len({normalize_title(t) for t in titles.values()}) > 1:
        report("title", "text", paper.title, titles)
    years = {m.source: m.year for m in members if m.year is not None}
    if len(set(years.values())) > 1:
        report("year", "value", paper.year, years)
    lists = {m.source: m.authors for m in members if m.authors}
    keys = {src: _surnames(a) for src, a in lists.items()}
    if len({tuple(k) for k in keys.values()}) > 1:
        sets = [set(k) for k in keys.values()]
        counts = {len(k) for k in keys.values()}
        kind = ("order" if all(x == sets[0] for x in sets) and len(counts) == 1
                else "count" if len(counts) > 1 else "names")
        report("authors", kind, "; ".join(paper.authors), {s: "; ".join(a) for s, a in lists.items()})
    return out


def match_keys(r: ImportedRecord) -> list[tuple]:
    """The keys under which ``r`` is the same paper as another record with one of them."""
    venue = r.group_venue
    keys: list[tuple] = []
    t = normalize_title(r.title)
    if t:
        keys.append((venue, r.year, "t", t))
    if r.openreview_id:
        # within the year: a bare id a list gives ("paper550" of IJCAI) may be taken for an OpenReview id
        keys.append((venue, r.year, "or", r.openreview_id))
    if r.anthology_id:
        keys.append((venue, r.year, "acl", r.anthology_id))
    for k in r.id_keys:
        keys.append((venue, r.year, k) if year_scoped(k) else (venue, k))
    return keys


#: a renamed title (submission vs camera-ready) joins a record of the same first author when the
#: similarity of the normalised titles (rapidfuzz token-set ratio) is at least this ...
NEAR_TITLE_SAME_AUTHOR = 70
#: ... or, when one side has no author list, this ...
NEAR_TITLE_NO_AUTHORS = 75
#: ... each is the other's best candidate, and both beat their second-best by this margin
NEAR_TITLE_MARGIN = 10


def _first_surnames(rs: list[ImportedRecord]) -> set[str]:
    return {k for r in rs if r.authors and (k := surname_key(r.authors[0]))}


def near_title_pairs(records: list[ImportedRecord], groups: list[list[int]]) -> list[tuple[int, int]]:
    """Pairs of records that are one paper under two titles (a submission title in one source, the
    camera-ready title in another). Within one venue-year, between the groups no secondary source
    lists and the groups only secondary sources list: the same first author (or no author list on
    one side), a title similarity at the thresholds above, and each the other's best candidate by
    :data:`NEAR_TITLE_MARGIN` (measured on the real NeurIPS 2025 lists: at these thresholds the
    pairs read by hand were the same paper renamed)."""
    primary: dict[tuple, list[int]] = defaultdict(list)
    secondary: dict[tuple, list[int]] = defaultdict(list)
    for gi, g in enumerate(groups):
        kinds = {records[i].source in SECONDARY_SOURCES for i in g}
        r0 = records[g[0]]
        if len(kinds) == 1:
            (secondary if kinds == {True} else primary)[(r0.group_venue, r0.year)].append(gi)
    pairs: list[tuple[int, int]] = []
    for key, ps in primary.items():
        ss = secondary.get(key)
        if not ss:
            continue
        titles = [[normalize_title(records[groups[g][0]].title) for g in side] for side in (ps, ss)]
        firsts = [[_first_surnames([records[i] for i in groups[g]]) for g in side] for side in (ps, ss)]
        score = process.cdist(titles[0], titles[1], scorer=fuzz.token_set_ratio, dtype=np.float32)
        need = np.full(score.shape, NEAR_TITLE_NO_AUTHORS, dtype=np.float32)
        for i, fa in enumerate(firsts[0]):
            for j, fb in enumerate(firsts[1]):
                if fa and fb:
                    if fa & fb:
                        need[i, j] = NEAR_TITLE_SAME_AUTHOR
                    else:
                        score[i, j] = 0
        best_j, best_i = score.argmax(1), score.argmax(0)
        for i, j in enumerate(best_j):
            if best_i[j] != i or score[i, j] < need[i, j]:
                continue
            row = np.partition(score[i], -2)[-2] if score.shape[1] > 1 else 0
            col = np.partition(score[:, j], -2)[-2] if score.shape[0] > 1 else 0
            if score[i, j] - max(row, col) >= NEAR_TITLE_MARGIN:
                pairs.append((groups[ps[i]][0], groups[ss[j]][0]))
    return pairs


def dedup(records: list[ImportedRecord]) -> DedupResult:
    """Group duplicates (within each venue-year) and merge each group into one Paper.

    Records of ancillary tracks (``main_track`` false) take part in the grouping, and a group with
    one of them is dropped whole: a NeurIPS Datasets & Benchmarks paper listed without a track by a
    second source is still a D&B paper. A group made only of records from ``confirm_only`` sources
    (lists that mix accepted and rejected submissions) is dropped too.
    """
    uf = _UnionFind(len(records))
    first_with_key: dict[tuple, int] = {}
    for i, r in enumerate(records):
        for k in match_keys(r):
            j = first_with_key.setdefault(k, i)
            if j != i:
                uf.union(i, j)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(records)):
        groups[uf.find(i)].append(i)
    near = near_title_pairs(records, list(groups.values()))
    if near:
        for a, b in near:
            uf.union(a, b)
        groups = defaultdict(list)
        for i in range(len(records)):
            groups[uf.find(i)].append(i)
    papers = []
    multi = merged = 0
    dropped_track: Counter = Counter()
    dropped_linked: Counter = Counter()
    unconfirmed: Counter = Counter()
    side: list[Paper] = []
    found: list[dict] = []
    for root in sorted(groups):
        members = [records[i] for i in groups[root]]
        if not all(m.main_track for m in members):
            for m in members:
                if m.main_track:
                    dropped_linked[m.source] += 1
                else:
                    dropped_track[(m.source, m.track)] += 1
            track = next(m.track for m in members if not m.main_track) or "ancillary"
            side.append(replace(merge_group(members), track=track))
            continue
        if all(m.confirm_only for m in members):
            for m in members:
                unconfirmed[m.source] += 1
            continue
        if len({m.source for m in members}) > 1:
            multi += 1
        merged += len(members) - 1
        paper = merge_group(members)
        papers.append(paper)
        found += disagreements(paper, members)
    return DedupResult(papers=papers, duplicates_merged=merged, groups_multi_source=multi,
                       dropped_track=dropped_track, dropped_linked=dropped_linked,
                       unconfirmed=unconfirmed, side_track=side, disagreements=found)


#: a title shared by records without an author list must have this many words to make them one work
MIN_WORDS_WITHOUT_AUTHORS = 4


def same_authors(a: Paper, b: Paper) -> bool:
    """A shared author surname, or no list on one side and a title of enough words."""
    sa = {surname_key(x) for x in a.authors} - {""}
    sb = {surname_key(x) for x in b.authors} - {""}
    if sa and sb:
        return bool(sa & sb)
    return len(normalize_title(a.title).split()) >= MIN_WORDS_WITHOUT_AUTHORS


def _version_rank(p: Paper, order: int) -> tuple:
    return (p.year if p.year is not None else 9999, not p.has_abstract, order)


def merge_same_work(papers: list[Paper], pairs: list[tuple[Paper, Paper]] | None = None
                    ) -> tuple[list[Paper], int]:
    """Fold the versions of one work published at several venues or years into its earliest
    version; returns the papers (in their order, versions removed) and how many were folded.
    ``pairs``, when given, receives each (kept paper, folded paper)."""
    by_title: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(papers):
        t = normalize_title(p.title)
        if t:
            by_title[t].append(i)
    uf = _UnionFind(len(papers))
    for idx in by_title.values():
        for x in range(len(idx)):
            for y in range(x + 1, len(idx)):
                if same_authors(papers[idx[x]], papers[idx[y]]):
                    uf.union(idx[x], idx[y])
    groups: dict[int, list[int]] = defaultdict(list)
    for idx in by_title.values():
        if len(idx) > 1:
            for i in idx:
                groups[uf.find(i)].append(i)
    drop: set[int] = set()
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: _version_rank(papers[i], i))
        keep, rest = papers[members[0]], [papers[i] for i in members[1:]]
        for other in rest:
            if pairs is not None:
                pairs.append((keep, replace(other)))
            keep.also_published.append(f"{other.venue} {other.year or ''}".strip())
            keep.source_ids.extend(s for s in [*other.source_ids, f"paper:{other.paper_id}"]
                                   if s not in keep.source_ids)
            keep.abstract = keep.abstract or other.abstract
            keep.authors = keep.authors or list(other.authors)
            keep.url, keep.pdf = keep.url or other.url, keep.pdf or other.pdf
        drop.update(members[1:])
    return [p for i, p in enumerate(papers) if i not in drop], len(drop)
