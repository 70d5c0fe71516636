"""Cited works that are records of the corpus's side file.

The corpus build keeps apart what is not a main-track paper of the 15 venues
(``<work>/corpus/side_tracks.parquet``: their workshops, Findings and Datasets & Benchmarks tracks,
and other venues such as TMLR, WACV or CoRL), with a venue, a track, a year and often a DOI. A cited
work that is one of those records gets its id, venue, year and track (and its DOI when the
references gave none), so the catalogue says what the work is, not only what citing papers wrote.

The rule (:meth:`SideRecords.match`): the work's normalised title equals the record's, their years
are at most :data:`YEAR_SLACK` apart, and, when both list authors, they share a surname. When
several records fit (a workshop paper and its TMLR version), the one sharing a surname, then the
closest in year, then one outside a workshop, then the smallest id is taken.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from ...corpus.records import normalize_title
from .names import surname

#: the years of a work and of its record may differ this much (arXiv and proceedings years)
YEAR_SLACK = 1


@dataclass(frozen=True)
class SideRecord:
    """One record of the side file, as a work links to it."""

    record_id: str
    year: int | None
    venue: str
    track: str
    doi: str
    surnames: frozenset[str]


def _surnames(authors: Iterable[str] | None) -> frozenset[str]:
    return frozenset(s for s in (surname(a) for a in authors or ()) if s)


class SideRecords:
    """The side file's records by normalised title."""

    def __init__(self, records: Iterable[tuple[str, SideRecord]]):
        self.by_title: dict[str, list[SideRecord]] = defaultdict(list)
        for norm, r in records:
            if norm:
                self.by_title[norm].append(r)

    def __len__(self) -> int:
        return sum(len(rs) for rs in self.by_title.values())

    @classmethod
    def load(cls, path: str | Path) -> SideRecords:
        """The records of a ``side_tracks.parquet`` (one written before a column existed reads it
        as empty)."""
        have = set(pq.read_schema(path).names)
        cols = [c for c in ("paper_id", "title", "title_norm", "year", "venue", "track", "doi", "authors")
                if c in have]
        rows = pq.read_table(path, columns=cols).to_pylist()
        return cls((r.get("title_norm") or normalize_title(r.get("title")),
                    SideRecord(r["paper_id"], r.get("year"), r.get("venue") or "", r.get("track") or "",
                               r.get("doi") or "", _surnames(r.get("authors"))))
                   for r in rows)

    def match(self, title: str, year: int | None, authors: Iterable[str] | None) -> SideRecord | None:
        """The record a work of this title, year and authors is (see the module docstring), or None."""
        if year is None:
            return None
        names = _surnames(authors)
        fits = []
        for r in self.by_title.get(normalize_title(title), ()):
            if r.year is None or abs(r.year - year) > YEAR_SLACK:
                continue
            shared = bool(names & r.surnames)
            if names and r.surnames and not shared:
                continue
            fits.append(((not shared, abs(r.year - year), r.track == "workshop", r.record_id), r))
        return min(fits, key=lambda f: f[0])[1] if fits else None
