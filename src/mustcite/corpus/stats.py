"""Per-venue, per-year counts of a built corpus (MasterSet Table 1, with and without abstracts)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ..config import Workspace
from ..errors import MustciteError
from .records import VENUES
from .store import BUILD_FILE, corpus_dir, require_store


@dataclass
class CorpusStats:
    total: int
    with_abstract: int
    duplicates_merged: int
    by_venue_year: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """Exactly ``{"total", "with_abstract", "duplicates_merged", "by_venue_year"}``."""
        return {"total": self.total, "with_abstract": self.with_abstract,
                "duplicates_merged": self.duplicates_merged, "by_venue_year": self.by_venue_year}

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


def corpus_stats(work: str | Path | Workspace | None = None) -> CorpusStats:
    """Counts from ``papers.parquet`` (duplicates_merged from ``build.json``)."""
    path = require_store(work)
    with duckdb.connect() as con:
        rows = con.execute(
            "SELECT venue, year, count(*) AS papers,"
            " count(*) FILTER (WHERE abstract IS NOT NULL AND trim(abstract) <> '') AS with_abstract"
            " FROM read_parquet(?) GROUP BY venue, year", [str(path)]).fetchall()
    order = {v: i for i, v in enumerate(VENUES)}
    rows.sort(key=lambda r: (order.get(r[0], 99), r[1] or 0))
    by = [{"venue": v, "year": int(y) if y is not None else None, "papers": int(n),
           "with_abstract": int(a)} for v, y, n, a in rows]
    info = read_build_info(work)
    return CorpusStats(total=sum(r["papers"] for r in by), with_abstract=sum(r["with_abstract"] for r in by),
                       duplicates_merged=int(info.get("duplicates_merged", 0)), by_venue_year=by)
