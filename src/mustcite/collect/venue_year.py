"""Run one venue-year: index -> classify tracks -> paper pages -> (PDFs) -> records, report, state.

Everything goes under the collect folder (``<work>/collect/`` by default):

* ``records/<VENUE>_<year>.jsonl`` - one collected record a line (``collected_record.schema.json``),
  ancillary-track papers included with ``main_track: false``; written atomically at the end;
* ``reports/<VENUE>_<year>.json`` - counts (collected, main track, with / without abstract, PDF
  links, per track), the per-item errors, requests and cache hits;
* ``state/<VENUE>_<year>.json`` - the items already complete (their records): a rerun reuses them
  and fetches only the missing ones (saved every 25 items, so an interrupted run resumes too);
* ``http-cache/`` - every page read (a rerun never reads a page twice), ``pdfs/`` with ``--pdfs``.

Per-item problems (a page that fails, a layout that changed, a paper without abstract, a duplicate
entry) go into the report; they never stop the run. A record with an empty abstract is counted in
``without_abstract`` and listed as a ``missing_abstract`` problem, never as collected with abstract.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..io import atomic_write_bytes, atomic_write_json, read_json, write_jsonl
from .base import RECORD_SCHEMA, CollectedRecord, Index, Item, ItemError, ParseError, check_record
from .http import Fetcher, FetchError
from .tracks import TrackClassifier

STATE_EVERY = 25


@dataclass
class VenueYearReport:
    venue: str
    year: int
    collector: str
    status: str = "ok"                   # ok | partial (item errors) | failed (no index)
    collected: int = 0                   # records written (all tracks)
    main_track: int = 0
    with_abstract: int = 0               # main-track records with a non-empty abstract
    without_abstract: int = 0            # main-track records whose abstract is empty
    with_pdf_link: int = 0
    pdfs_downloaded: int = 0
    duplicates: int = 0
    reused_from_state: int = 0
    tracks: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    index_pages: list[str] = field(default_factory=list)
    requests: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    offline: str = ""
    records_file: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def file_stem(venue: str, year: int) -> str:
    return f"{venue}_{year}"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:150] or "paper"


def load_state(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    try:
        data = read_json(path)
    except Exception:   # noqa: BLE001 - a corrupt state file: start over (the cache still helps)
        return {}
    done = data.get("done") if isinstance(data, dict) else None
    return done if isinstance(done, dict) else {}


def collect_venue_year(collector, venue: str, year: int, fetcher: Fetcher, out_dir: str | Path, *,
                       classifier: TrackClassifier | None = None, pdfs: bool = False,
                       pdf_dir: str | Path | None = None, progress: bool = False) -> VenueYearReport:
    t0 = time.perf_counter()
    out = Path(out_dir)
    stem = file_stem(venue, year)
    state_path = out / "state" / f"{stem}.json"
    classifier = classifier or TrackClassifier()
    rep = VenueYearReport(venue=venue, year=year, collector=collector.name,
                          offline=str(fetcher.offline.root) if fetcher.offline else "")
    req0, hits0 = len(fetcher.requests), fetcher.cache_hits
    errors: list[ItemError] = []

    def finish() -> VenueYearReport:
        rep.errors = [e.to_dict() for e in errors]
        rep.errors_by_kind = dict(Counter(e.kind for e in errors))
        rep.requests = len(fetcher.requests) - req0
        rep.cache_hits = fetcher.cache_hits - hits0
        rep.seconds = round(time.perf_counter() - t0, 2)
        if rep.status != "failed" and any(e.kind not in ("duplicate", "missing_abstract") for e in errors):
            rep.status = "partial"
        atomic_write_json(out / "reports" / f"{stem}.json", rep.to_dict())
        return rep

    try:
        idx: Index = collector.index(venue, year, fetcher)
    except FetchError as exc:
        errors.append(ItemError(key="index", url=exc.url, kind=exc.kind, message=exc.message))
        rep.status = "failed"
        return finish()
    except ParseError as exc:
        for url in fetcher.requests[req0:]:       # a changed / truncated index is read again next run
            fetcher.forget(url)
        errors.append(ItemError(key="index", url="", kind="parse", message=str(exc)))
        rep.status = "failed"
        return finish()
    rep.index_pages = idx.pages
    errors += idx.errors

    # duplicates (same key twice on the index) are reported and kept once
    items: list[Item] = []
    seen: set[str] = set()
    for it in idx.items:
        if it.key in seen:
            rep.duplicates += 1
            errors.append(ItemError(key=it.key, url=it.detail_url or it.record.url, kind="duplicate",
                                    message=f"listed more than once: {it.record.title[:80]}"))
            continue
        seen.add(it.key)
        items.append(it)

    # tracks
    decisions: dict[str, tuple[bool, str]] = {}
    for it in items:
        t = it.record.track
        if t not in decisions:
            decisions[t] = classifier.classify(venue, year, t) if t else (True, "rules")
        it.record.main_track, it.record.track_rule = decisions[t]

    done = load_state(state_path)
    records: list[CollectedRecord] = []
    pdf_root = Path(pdf_dir) if pdf_dir else out / "pdfs"
    since_save = 0
    for it in tqdm(items, desc=f"{venue} {year}", unit="paper", disable=not progress):
        rec = it.record
        n_errors = len(errors)
        if it.key in done:
            prev = CollectedRecord.from_dict(done[it.key])
            prev.main_track, prev.track_rule = rec.main_track, rec.track_rule
            rec = prev
            rep.reused_from_state += 1
        else:
            ok = True
            if it.detail_url and rec.main_track:
                try:
                    collector.detail(it, fetcher.get(it.detail_url))
                except FetchError as exc:
                    ok = False
                    errors.append(ItemError(key=it.key, url=exc.url, kind=exc.kind, message=exc.message))
                except ParseError as exc:
                    ok = False
                    fetcher.forget(it.detail_url)     # truncated / changed page: read it again next run
                    errors.append(ItemError(key=it.key, url=it.detail_url, kind="parse", message=str(exc)))
                rec = it.record
            why = check_record(rec)
            if why == "no title":
                errors.append(ItemError(key=it.key, url=it.detail_url, kind="parse", message=why))
                continue
            if why:
                errors.append(ItemError(key=it.key, url=it.detail_url or rec.url, kind="parse", message=why))
            if ok:
                done[it.key] = rec.to_dict()
                since_save += 1
                if since_save >= STATE_EVERY:
                    atomic_write_json(state_path, {"venue": venue, "year": year, "done": done})
                    since_save = 0
        rec.abstract = (rec.abstract or "").strip()
        records.append(rec)
        if rec.main_track and not rec.has_abstract and len(errors) == n_errors:
            errors.append(ItemError(key=it.key, url=it.detail_url or rec.url, kind="missing_abstract",
                                    message="no abstract on the page"))
        if pdfs and rec.main_track and rec.pdf:
            target = pdf_root / venue / str(year) / f"{_safe(rec.source_id or it.key)}.pdf"
            if not target.is_file():
                try:
                    data = fetcher.get(rec.pdf)
                    if not data.startswith(b"%PDF"):
                        raise FetchError(rec.pdf, "not a PDF (the answer does not start with %PDF)", kind="pdf")
                    atomic_write_bytes(target, data)
                    rep.pdfs_downloaded += 1
                except FetchError as exc:
                    errors.append(ItemError(key=it.key, url=rec.pdf, kind="pdf", message=exc.message))
            else:
                rep.pdfs_downloaded += 1
    atomic_write_json(state_path, {"venue": venue, "year": year, "done": done})

    tracks: dict[str, dict[str, Any]] = {}
    for r in records:
        t = tracks.setdefault(r.track or "(none)", {"papers": 0, "main": r.main_track, "rule": r.track_rule})
        t["papers"] += 1
    rep.tracks = tracks
    main = [r for r in records if r.main_track]
    rep.collected = len(records)
    rep.main_track = len(main)
    rep.with_abstract = sum(r.has_abstract for r in main)
    rep.without_abstract = rep.main_track - rep.with_abstract
    rep.with_pdf_link = sum(bool(r.pdf) for r in main)
    path = out / "records" / f"{stem}.jsonl"
    write_jsonl(path, ({"schema": RECORD_SCHEMA, **r.to_dict()} for r in records))
    rep.records_file = str(path)
    return finish()
