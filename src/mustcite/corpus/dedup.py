"""Merge the same paper seen in several sources.

Two records are the same paper when they have the same venue and year and either the same
OpenReview id, the same ACL Anthology id, or the same normalised title (:func:`normalize_title`,
which also folds ICLR-Oral's ``_``-for-``:`` titles). Groups are closed transitively (union-find).

The kept record is the richest one: an abstract beats none, then more filled fields, then the
source's priority (paperlists first), then file order. Empty fields of the kept record are filled
from the others; a title from a source that mangles titles is replaced by another member's title.
``source_ids`` lists every ``"source:id"`` of the group (``source:file:line`` when a source has no id).

The same work published twice (a JMLR article presented again at ICML, a conference paper
extended in a journal) is then one paper too (:func:`merge_same_work`): same normalised title and
a shared author surname (or no author list on one side and a title of four words or more). The
earliest version is kept, so that a paper is never dated later than its first publication;
``also_published`` names the other versions and ``source_ids`` holds their ids as well.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

from .importers import COLLECTED_PREFIX, ImportedRecord
from .records import Paper, make_paper_id, normalize_title, surname_key


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
    title = best.title
    if best.title_mangled:
        better = [members[i] for i in ranked if not members[i].title_mangled]
        if better:
            title = min(better, key=lambda r: r.priority).title

    def fill(attr: str):
        val = getattr(best, attr)
        if val:
            return val
        for i in ranked[1:]:
            v = getattr(members[i], attr)
            if v:
                return v
        return val

    refs: list[str] = []
    for r in members:
        ref = source_ref(r)
        if ref not in refs:
            refs.append(ref)
    paper_id = make_paper_id(title, best.venue or "", best.year, best.source_id)
    listed = [r for r in members if not r.source.startswith(COLLECTED_PREFIX)]
    if listed and len(listed) < len(members):
        # a paper keeps the id its paper lists give it: collecting a venue never renames a known paper
        # (reference files, benchmarks and models hold these ids)
        paper_id = merge_group(listed).paper_id
    return Paper(
        paper_id=paper_id,
        title=title, venue=best.venue or "", year=best.year, abstract=best.abstract,
        authors=list(fill("authors")), source=best.source, source_id=best.source_id,
        url=fill("url"), pdf=fill("pdf"), track=best.track, source_ids=refs)


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
        keys = [("t", normalize_title(r.title))]
        if r.openreview_id:
            keys.append(("or", r.openreview_id))
        if r.anthology_id:
            keys.append(("acl", r.anthology_id))
        for kind, val in keys:
            if not val:
                continue
            k = (r.venue, r.year, kind, val)
            j = first_with_key.setdefault(k, i)
            if j != i:
                uf.union(i, j)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(records)):
        groups[uf.find(i)].append(i)
    papers = []
    multi = merged = 0
    dropped_track: Counter = Counter()
    dropped_linked: Counter = Counter()
    unconfirmed: Counter = Counter()
    side: list[Paper] = []
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
        papers.append(merge_group(members))
    return DedupResult(papers=papers, duplicates_merged=merged, groups_multi_source=multi,
                       dropped_track=dropped_track, dropped_linked=dropped_linked,
                       unconfirmed=unconfirmed, side_track=side)


#: a title shared by records without an author list must have this many words to make them one work
MIN_WORDS_WITHOUT_AUTHORS = 4


def _same_authors(a: Paper, b: Paper) -> bool:
    sa = {surname_key(x) for x in a.authors} - {""}
    sb = {surname_key(x) for x in b.authors} - {""}
    if sa and sb:
        return bool(sa & sb)
    return len(normalize_title(a.title).split()) >= MIN_WORDS_WITHOUT_AUTHORS


def _version_rank(p: Paper, order: int) -> tuple:
    return (p.year if p.year is not None else 9999, not p.has_abstract, order)


def merge_same_work(papers: list[Paper]) -> tuple[list[Paper], int]:
    """Fold the versions of one work published at several venues or years into its earliest
    version; returns the papers (in their order, versions removed) and how many were folded."""
    by_title: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(papers):
        t = normalize_title(p.title)
        if t:
            by_title[t].append(i)
    uf = _UnionFind(len(papers))
    for idx in by_title.values():
        for x in range(len(idx)):
            for y in range(x + 1, len(idx)):
                if _same_authors(papers[idx[x]], papers[idx[y]]):
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
            keep.also_published.append(f"{other.venue} {other.year or ''}".strip())
            keep.source_ids.extend(s for s in [*other.source_ids, f"paper:{other.paper_id}"] if s not in keep.source_ids)
            keep.abstract = keep.abstract or other.abstract
            keep.authors = keep.authors or list(other.authors)
            keep.url, keep.pdf = keep.url or other.url, keep.pdf or other.pdf
        drop.update(members[1:])
    return [p for i, p in enumerate(papers) if i not in drop], len(drop)
