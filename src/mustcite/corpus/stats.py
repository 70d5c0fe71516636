"""Counts of a built corpus: papers per venue and year (MasterSet Table 1, with and without
abstracts), per year band, the side records by venue and track, and what each source gave.

A store built before the side file or the per-field sources existed still reads: what it lacks
comes from ``build.json`` when that has it, else is left empty.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq

from ..config import Workspace
from ..errors import MustciteError
from .records import VENUES
from .store import BUILD_FILE, SIDE_TRACKS_FILE, corpus_dir, require_store

#: the year bands of :attr:`CorpusStats.year_bands`: (name, first year, last year); None is open
YEAR_BANDS: tuple[tuple[str, int | None, int | None], ...] = (
    ("pre-2013", None, 2012), ("2013-2018", 2013, 2018), ("2019-2022", 2019, 2022),
    ("2023-2024", 2023, 2024), ("2025+", 2025, None))

_HAS_ABSTRACT = "abstract IS NOT NULL AND trim(abstract) <> ''"


@dataclass
class CorpusStats:
    total: int
    with_abstract: int
    duplicates_merged: int
    by_venue_year: list[dict[str, Any]]
    #: the side records (workshops, Findings, other venues...): one row per venue and track with
    #: records, with_abstract, first_year and last_year (years None when only build.json gives it)
    tracks: list[dict[str, Any]] = field(default_factory=list)
    #: per source: files and records read (build.json), the corpus papers it lists and the abstracts
    #: it gave them (None when the store does not record it)
    sources: list[dict[str, Any]] = field(default_factory=list)
    #: papers per year band (:data:`YEAR_BANDS`) with the share that have an abstract
    year_bands: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """``{"total", "with_abstract", "duplicates_merged", "by_venue_year"}`` first, then
        ``"tracks"``, ``"sources"`` and ``"year_bands"``."""
        return {"total": self.total, "with_abstract": self.with_abstract,
                "duplicates_merged": self.duplicates_merged, "by_venue_year": self.by_venue_year,
                "tracks": self.tracks, "sources": self.sources, "year_bands": self.year_bands}

    def by_venue(self) -> list[dict[str, Any]]:
        """One row per venue: papers, with_abstract, first and last year."""
        rows: dict[str, dict[str, Any]] = {}
        for r in self.by_venue_year:
            row = rows.setdefault(r["venue"], {"venue": r["venue"], "papers": 0, "with_abstract": 0,
                                               "first_year": r["year"], "last_year": r["year"],
                                               "years": 0})
            row["papers"] += r["papers"]
            row["with_abstract"] += r["with_abstract"]
            row["first_year"] = min(row["first_year"], r["year"])
            row["last_year"] = max(row["last_year"], r["year"])
            row["years"] += 1
        return list(rows.values())


def read_build_info(work: str | Path | Workspace | None = None) -> dict[str, Any]:
    """The ``build.json`` written next to the store ({} if absent)."""
    path = corpus_dir(work) / BUILD_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise MustciteError(f"cannot read build report: {exc}", path=path) from None


def year_bands(by_venue_year: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Papers and the share with an abstract per :data:`YEAR_BANDS` band (papers of no year in a
    last ``"unknown"`` band, when there are any)."""
    rows = [{"band": name, "first_year": lo, "last_year": hi, "papers": 0, "with_abstract": 0}
            for name, lo, hi in YEAR_BANDS]
    unknown = {"band": "unknown", "first_year": None, "last_year": None, "papers": 0, "with_abstract": 0}
    for r in by_venue_year:
        y = r["year"]
        row = unknown if y is None else next(
            b for b in rows if (b["first_year"] is None or y >= b["first_year"])
            and (b["last_year"] is None or y <= b["last_year"]))
        row["papers"] += r["papers"]
        row["with_abstract"] += r["with_abstract"]
    for row in [*rows, unknown]:
        row["share_with_abstract"] = round(row["with_abstract"] / row["papers"], 4) if row["papers"] else None
    return rows + ([unknown] if unknown["papers"] else [])


def _sql_path(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def side_tracks(work: str | Path | Workspace | None = None,
                info: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The side records by venue and track, most records first: from ``side_tracks.parquet`` when
    it exists, else the counts of ``build.json`` (no years), else []."""
    path = corpus_dir(work) / SIDE_TRACKS_FILE
    if path.is_file():
        with duckdb.connect() as con:
            rows = con.execute(
                "SELECT coalesce(venue, ''), coalesce(nullif(track, ''), 'ancillary') AS t, count(*),"
                f" count(*) FILTER (WHERE {_HAS_ABSTRACT}), min(year), max(year)"
                f" FROM read_parquet({_sql_path(path)}) GROUP BY ALL ORDER BY 3 DESC, 1, 2").fetchall()
        return [{"venue": v, "track": t, "records": int(n), "with_abstract": int(a), "first_year": lo,
                 "last_year": hi} for v, t, n, a, lo, hi in rows]
    counts = (info if info is not None else read_build_info(work)).get("side_by_venue_track") or {}
    out = []
    for key, n in counts.items():
        venue, _, track = key.partition("/")
        out.append({"venue": venue, "track": track, "records": int(n), "with_abstract": None,
                    "first_year": None, "last_year": None})
    return sorted(out, key=lambda r: (-r["records"], r["venue"], r["track"]))


def source_counts(path: Path, info: dict[str, Any]) -> list[dict[str, Any]]:
    """Per source: ``files``, ``records`` and ``with_abstract`` read (``build.json``), the corpus
    ``papers`` it lists (``source_ids``) and the ``abstracts`` the corpus took from it
    (``field_sources``; from ``build.json`` for a store without that column), most records first."""
    have = set(pq.read_schema(path).names)
    src = _sql_path(path)
    listed: dict[str, int] = {}
    abstracts: dict[str, int] | None = None
    with duckdb.connect() as con:
        if "source_ids" in have:
            listed = dict(con.execute(
                "SELECT split_part(s, ':', 1), count(DISTINCT paper_id) FROM"
                f" (SELECT paper_id, unnest(source_ids) AS s FROM read_parquet({src}))"
                " WHERE NOT starts_with(s, 'paper:') GROUP BY 1").fetchall())   # paper: a folded version
        if "field_sources" in have:
            abstracts = dict(con.execute(
                f"SELECT field_sources['abstract'], count(*) FROM read_parquet({src}) WHERE {_HAS_ABSTRACT}"
                " AND field_sources['abstract'] IS NOT NULL GROUP BY 1").fetchall())
    if abstracts is None and "abstract_sources" in info:
        abstracts = info["abstract_sources"]
    read = info.get("sources") or {}
    out = []
    for name in sorted((set(read) | set(listed) | set(abstracts or {})) - {""}):
        r = read.get(name) or {}
        out.append({"source": name, "files": r.get("files"), "records": r.get("records"),
                    "with_abstract": r.get("with_abstract"), "papers": int(listed.get(name, 0)),
                    "abstracts": None if abstracts is None else int(abstracts.get(name, 0))})
    return sorted(out, key=lambda r: (-(r["records"] or 0), -r["papers"], r["source"]))


def corpus_stats(work: str | Path | Workspace | None = None) -> CorpusStats:
    """Counts from ``papers.parquet`` and ``side_tracks.parquet`` (duplicates_merged and the
    records read per source from ``build.json``)."""
    path = require_store(work)
    with duckdb.connect() as con:
        rows = con.execute(
            "SELECT venue, year, count(*) AS papers,"
            f" count(*) FILTER (WHERE {_HAS_ABSTRACT}) AS with_abstract"
            " FROM read_parquet(?) GROUP BY venue, year", [str(path)]).fetchall()
    order = {v: i for i, v in enumerate(VENUES)}
    rows.sort(key=lambda r: (order.get(r[0], 99), r[1] or 0))
    by = [{"venue": v, "year": int(y) if y is not None else None, "papers": int(n),
           "with_abstract": int(a)} for v, y, n, a in rows]
    info = read_build_info(work)
    return CorpusStats(total=sum(r["papers"] for r in by), with_abstract=sum(r["with_abstract"] for r in by),
                       duplicates_merged=int(info.get("duplicates_merged", 0)), by_venue_year=by,
                       tracks=side_tracks(work, info), sources=source_counts(path, info),
                       year_bands=year_bands(by))
