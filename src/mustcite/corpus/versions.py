"""Versions of one work: the same paper at a workshop, a conference and a journal, linked.

A *version link* joins two records of the build (a corpus paper or a side record: workshop, journal,
Datasets & Benchmarks, a venue outside the 15) that are one work published twice. The evidence is
written with each link:

* ``folded``: two corpus papers :func:`~mustcite.corpus.dedup.merge_same_work` made one (the later
  one is in the earlier one's ``also_published``);
* ``doi``: the two records carry the same DOI (a workshop paper filed under the main conference);
* ``title+authors``: the same normalised title and a shared author surname, or the same title of
  at least :data:`~mustcite.corpus.dedup.MIN_WORDS_WITHOUT_AUTHORS` words where one record has no
  author list.

``kind`` says what the linked version is: ``workshop``, ``journal``, ``datasets-benchmarks``,
``conference`` (a main track, of one of the 15 or another venue) or ``other``. Each link is written
in both directions, so the versions of a record are the rows whose ``paper_id`` is its id. A preprint
is not a record of the build; a citation of one is resolved by title (the catalogue of cited works
and check-refs link an arXiv entry to the paper it became).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import pyarrow as pa

from .dedup import same_authors
from .records import Paper, normalize_title
from .venues import ancillary_keyword

#: venues (outside the 15) that are journals; JMLR is a corpus venue but a journal too
JOURNALS = frozenset({"JMLR", "TMLR", "MLJ", "JAIR", "Neural Computation", "FTML", "Distill", "DMLR"})
#: a title group larger than this is a generic title ("Introduction", "Editorial"): not linked
MAX_GROUP = 6

VERSIONS_SCHEMA = pa.schema([
    ("paper_id", pa.string()), ("version_id", pa.string()), ("version_title", pa.string()),
    ("version_venue", pa.string()), ("version_year", pa.int32()), ("version_track", pa.string()),
    ("kind", pa.string()), ("evidence", pa.string()),
])


def version_kind(p: Paper) -> str:
    """What kind of version ``p`` is (see the module doc): a Findings, demo or other ancillary
    volume is ``other``; a main track of any conference (a poster, an oral, ACL's long papers) is
    ``conference``."""
    track = (p.track or "").lower()
    if "workshop" in track:
        return "workshop"
    if "datasets" in track:
        return "datasets-benchmarks"
    if p.venue in JOURNALS or track == "journal":
        return "journal"
    if ancillary_keyword(track) or p.venue == "other":
        return "other"
    return "conference"


def _link(a: Paper, b: Paper, evidence: str) -> list[dict]:
    def row(x: Paper, y: Paper) -> dict:
        return {"paper_id": x.paper_id, "version_id": y.paper_id, "version_title": y.title,
                "version_venue": y.venue, "version_year": y.year, "version_track": y.track or "main",
                "kind": version_kind(y), "evidence": evidence}
    return [row(a, b), row(b, a)]


def version_links(corpus: list[Paper], side: list[Paper], folded: Iterable[tuple[Paper, Paper]] = ()
                  ) -> list[dict]:
    """Every version link among ``corpus`` and ``side`` records, plus the ``folded`` pairs
    (kept corpus paper, folded paper) of :func:`~mustcite.corpus.dedup.merge_same_work`."""
    rows: list[dict] = []
    seen: set[tuple[str, str]] = set()

    def add(a: Paper, b: Paper, evidence: str) -> None:
        key = tuple(sorted((a.paper_id, b.paper_id)))
        if a.paper_id == b.paper_id or key in seen:
            return
        seen.add(key)
        rows.extend(_link(a, b, evidence))

    for keep, other in folded:
        add(keep, other, "folded")
    everything = [*corpus, *side]
    by_doi: dict[str, list[int]] = defaultdict(list)
    by_title: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(everything):
        if p.doi:
            by_doi[p.doi].append(i)
        t = normalize_title(p.title)
        if t:
            by_title[t].append(i)
    for idx in by_doi.values():
        for x in range(1, len(idx)):
            add(everything[idx[0]], everything[idx[x]], "doi")
    for idx in by_title.values():
        if len(idx) < 2 or len(idx) > MAX_GROUP:
            continue
        for x in range(len(idx)):
            for y in range(x + 1, len(idx)):
                a, b = everything[idx[x]], everything[idx[y]]
                if (a.venue, a.year, a.track) != (b.venue, b.year, b.track) and same_authors(a, b):
                    add(a, b, "title+authors")
    return rows


def link_kinds(rows: list[dict]) -> dict[str, int]:
    """Each link once, by the kinds of its two ends ("conference+workshop" -> n)."""
    kind = {(r["paper_id"], r["version_id"]): r["kind"] for r in rows}
    counts: dict[str, int] = defaultdict(int)
    for (a, b), k in kind.items():
        if a < b:
            counts["+".join(sorted((kind.get((b, a), "other"), k)))] += 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def versions_table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=VERSIONS_SCHEMA)
