"""ICLR: the OpenReview API (v2 from 2024, v1 for 2018-2023) and proceedings.iclr.cc.

* API v2 (``api2.openreview.net/notes?content.venueid=ICLR.cc/<year>/Conference``): only accepted
  papers carry that venueid (rejected ones have ``.../Rejected_Submission``); every field is
  ``{"value": ...}``; ``content.venue`` (``ICLR 2024 poster``) is the track.
* API v1 (``api.openreview.net/notes?invitation=ICLR.cc/<year>/Conference/-/Blind_Submission&details=directReplies``):
  submissions with their direct replies; the reply whose ``content.decision`` (or
  ``recommendation``) is set decides; ``Accept (...)`` is kept, other decisions are not collected.
* Before 2018 (and whenever the API gives nothing): ``proceedings.iclr.cc`` (the NeurIPS
  proceedings software, read by :mod:`mustcite.collect.neurips`).

Pages of 1000 notes (``limit``/``offset``) are read until a short page. The API hosts get a slower
rate and long waits after a 429 (:data:`mustcite.collect.http.HOST_DELAYS`).
"""

from __future__ import annotations

import json

from .base import CollectedRecord, Collector, Index, Item, ItemError, ParseError, clean
from .neurips import NeuripsCollector

API1 = "https://api.openreview.net"
API2 = "https://api2.openreview.net"
PAGE = 1000
MAX_PAGES = 20


def v2_url(year: int, offset: int) -> str:
    return f"{API2}/notes?content.venueid=ICLR.cc/{year}/Conference&limit={PAGE}&offset={offset}"


def v1_url(year: int, offset: int) -> str:
    return (f"{API1}/notes?invitation=ICLR.cc/{year}/Conference/-/Blind_Submission"
            f"&details=directReplies&limit={PAGE}&offset={offset}")


def _val(content: dict, key: str):
    v = content.get(key)
    return v.get("value") if isinstance(v, dict) else v


def _notes(page: bytes) -> list[dict]:
    try:
        data = json.loads(page)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ParseError(f"OpenReview answer is not JSON (truncated?): {exc}") from None
    except RecursionError:
        raise ParseError("OpenReview answer is not usable JSON: nested too deeply") from None
    notes = data.get("notes") if isinstance(data, dict) else None
    if not isinstance(notes, list):
        raise ParseError("OpenReview answer has no 'notes' list")
    return notes


def decision_of(note: dict) -> str:
    for r in (note.get("details") or {}).get("directReplies") or []:
        c = r.get("content") or {}
        d = _val(c, "decision") or ""
        if d:
            return str(d)
    for r in (note.get("details") or {}).get("directReplies") or []:
        inv = str(r.get("invitation") or "")
        rec = _val(r.get("content") or {}, "recommendation") or ""
        if rec and ("Meta_Review" in inv or "Decision" in inv):
            return str(rec)
    return ""


def note_record(note: dict, year: int, *, v2: bool) -> CollectedRecord | None:
    c = note.get("content") or {}
    title = clean(str(_val(c, "title") or ""))
    if not title:
        raise ParseError("note without title")
    nid = str(note.get("forum") or note.get("id") or "")
    if v2:
        track = clean(str(_val(c, "venue") or ""))
    else:
        track = decision_of(note)
        if not track.lower().startswith("accept"):
            return None
    pdf = str(_val(c, "pdf") or "")
    if pdf.startswith("/"):
        pdf = "https://openreview.net" + pdf
    authors = _val(c, "authors") or []
    return CollectedRecord(
        venue="ICLR", year=year, title=title,
        authors=[clean(str(a)) for a in authors if clean(str(a))] if isinstance(authors, list) else [],
        abstract=clean(str(_val(c, "abstract") or "")), pdf=pdf,
        url=f"https://openreview.net/forum?id={nid}" if nid else "", source_id=nid, openreview_id=nid,
        site="openreview", track=track)


def parse_notes(pages: list[bytes], year: int, *, v2: bool) -> Index:
    idx = Index()
    for page in pages:
        for note in _notes(page):
            try:
                rec = note_record(note, year, v2=v2)
            except ParseError as exc:
                idx.errors.append(ItemError(key=str(note.get("id", "?")), url="", kind="parse", message=str(exc)))
                continue
            if rec is not None:
                idx.items.append(Item(key=rec.key(), record=rec))
    return idx


class IclrProceedingsCollector(NeuripsCollector):
    name = "iclr-proceedings"
    base = "https://proceedings.iclr.cc"


class OpenReviewCollector(Collector):
    name = "openreview"
    venues = ("ICLR",)

    def index(self, venue: str, year: int, fetch) -> Index:
        if year < 2018:
            return IclrProceedingsCollector().index(venue, year, fetch)
        v2 = year >= 2024
        pages: list[bytes] = []
        urls = []
        for k in range(MAX_PAGES):
            url = (v2_url if v2 else v1_url)(year, k * PAGE)
            page = fetch.get(url)
            urls.append(url)
            pages.append(page)
            if len(_notes(page)) < PAGE:
                break
        idx = parse_notes(pages, year, v2=v2)
        idx.pages.extend(urls)
        if not idx.items:
            raise ParseError(f"the OpenReview API lists no accepted ICLR {year} paper")
        return idx
