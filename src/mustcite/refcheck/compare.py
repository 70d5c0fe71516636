"""Field comparisons of an entry against the record found for it, each giving :class:`Issue` s.

* authors (:func:`compare_authors`): an entry author who is no author of the record is *added*;
  a record author the entry lacks is *dropped* (unless the entry ends in "and others"/"et al.",
  which may shorten the list, and then only in order from the front); the same people in another
  order are *swapped*. Records without authors (the NeurIPS 2025 title list) are not compared.
* year (:func:`compare_year`): the year of the venue the entry names (a work folded from several
  venues has one year per venue), the same for every venue; an entry without a venue may give
  its preprint's year, one before the record's; NeurIPS (by volume) and CoRL
  (:data:`NEXT_YEAR_PROCEEDINGS`) proceedings may be dated by their publication year, one after.
* venue (:func:`compare_venue`): the entry's venue code must be one of the record's venues.
* identifiers (:func:`compare_identifiers`): a DOI, arXiv id or URL that names another corpus
  paper (of another title: two records of one work may share a DOI; a NeurIPS hash only within the
  entry's year, :func:`id_scope_year`), or an ACL Anthology / OpenReview / NeurIPS / PMLR id other
  than the record's own.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from ..corpus.records import normalize_title
from ..extract.link import identifier_keys
from .entries import Entry
from .index import Record, RefIndex
from .names import align
from .results import Issue
from .venue import VenueClaim

#: identifier kinds the corpus records carry (from their URLs); others (a CVPR DOI) cannot be compared
RECORD_ID_KINDS = ("acl", "openreview", "nips", "pmlr")


#: venues whose proceedings appear the year after the meeting (CoRL: PMLR volumes 100, 155, 164, 205
#: of CoRL 2019-2022 are dated 2020-2023), so a citation may give either year
NEXT_YEAR_PROCEEDINGS = frozenset({"CoRL"})
#: the year in a NeurIPS proceedings URL (``/paper/2017/hash/...``, ``/paper_files/paper/2017/...``)
_URL_YEAR = re.compile(r"/paper(?:_files/paper)?/((?:19|20)\d\d)/")


def id_scope_year(entry: Entry) -> int | None:
    """The year a year-scoped identifier of the entry (a NeurIPS hash) is read in: its URL's, else the entry's."""
    m = _URL_YEAR.search(entry.url or "")
    return int(m.group(1)) if m else entry.year


def _names(xs: list[str]) -> str:
    return ", ".join(xs)


def compare_authors(entry: Entry, record: Record) -> list[Issue]:
    if not record.authors or not entry.authors:
        return []
    a = align(entry.authors, record.authors)
    issues = []
    shown_e, shown_r = _names(entry.authors) + (" and others" if entry.others else ""), _names(record.authors)
    if a.extra:
        who = _names([entry.authors[i] for i in a.extra])
        issues.append(Issue("authors", shown_e, shown_r,
                            f"{who} {'is' if len(a.extra) == 1 else 'are'} not among the record's authors "
                            f"({len(entry.authors)} named, the record has {len(record.authors)})"))
    if a.missing and not entry.others:
        who = _names([record.authors[j] for j in a.missing])
        issues.append(Issue("authors", shown_e, shown_r,
                            f"{who} {'is' if len(a.missing) == 1 else 'are'} missing "
                            f"({len(entry.authors)} named, the record has {len(record.authors)})"))
    if not a.extra and a.matched and not a.in_order:
        issues.append(Issue("authors", shown_e, shown_r, "the same authors in another order"))
    return issues


def compare_year(entry: Entry, claim: VenueClaim, record: Record, venue_year: int | None, *,
                 venue: str | None = None) -> Issue | None:
    """``venue_year``: the record's year at the venue the entry names (its main year otherwise);
    ``venue``: the record's venue, to name in the issue (the claimed held venue otherwise)."""
    if entry.year is None:
        return None
    ref = venue_year if venue_year is not None else record.year
    if ref is None or entry.year == ref:
        return None
    if claim.kind == "none" and entry.year == ref - 1:
        return None          # an entry without a venue may date the preprint
    if claim.code == "NeurIPS" and entry.year == ref + 1 and entry.volume == ref - 1987:
        return None          # "Advances in NeurIPS 36" (2023) dated by its publication year, 2024
    if venue in NEXT_YEAR_PROCEEDINGS and entry.year == ref + 1:
        return None          # CoRL 2019 in PMLR volume 100, published in 2020
    where = f"{venue} " if venue else (f"{claim.code} " if claim.kind == "held" else "")
    return Issue("year", str(entry.year), str(ref), f"the record is {where}{ref}, not {entry.year}")


def compare_venue(claim: VenueClaim, record: Record, held: bool = True) -> tuple[list[Issue], int | None]:
    """Issues of a held venue that is not the record's, and the record's year at the named venue.
    ``held``: the corpus holds the claimed venue-year completely; only then is another venue an
    error (a journal version of a conference paper, JMLR 2009 say, is a venue-year it lacks)."""
    if claim.kind != "held":
        return [], None
    years = [y for v, y in record.venue_years() if v == claim.code]
    if years:
        return [], years[0] if len(years) == 1 else (claim.year if claim.year in years else years[0])
    if not held:
        return [], None
    shown = ", ".join(f"{v} {y}" for v, y in record.venue_years())
    return [Issue("venue", claim.code, shown, f"the paper appeared at {shown}, not at {claim.code}")], None


def compare_identifiers(entry: Entry, record: Record, index: RefIndex) -> list[Issue]:
    keys = identifier_keys(doi=entry.doi, arxiv=entry.arxiv, url=entry.url)
    if not keys:
        return []
    issues = []
    year = id_scope_year(entry)
    own = set(record.identifiers)
    own_kinds = {k.split(":", 1)[0] for k in own}
    for k in keys:
        kind = k.split(":", 1)[0]
        field = "doi" if kind == "doi" else "identifier"
        shown = {"doi": entry.doi, "arxiv": entry.arxiv}.get(kind) or entry.url or k
        if k in own:
            continue
        if record.source == "corpus":
            mine = normalize_title(record.title)
            rows = [r for r in index.id_rows(k, year) if index.titles.ids[r] != record.paper_id
                    and index.titles.norms[r] != mine]
            if rows:
                other = index.record(rows[0])
                issues.append(Issue(field, shown, ", ".join(sorted(own)) or None,
                                    f"{k} is the identifier of another paper: {other.title!r} "
                                    f"({other.venue} {other.year})"))
                continue
            if kind in RECORD_ID_KINDS and kind in own_kinds:
                issues.append(Issue(field, shown, ", ".join(sorted(x for x in own if x.startswith(kind))),
                                    f"the record's {kind} id is not {k.split(':', 1)[1]}"))
    # an ACL DOI names an Anthology id: the acl key above covers it; keep one issue per field
    seen, out = set(), []
    for i in issues:
        if (i.field, i.why) not in seen:
            seen.add((i.field, i.why))
            out.append(i)
    return out


def title_similarity(a: str, b: str) -> float:
    """0-100: rapidfuzz ratio of the normalised titles."""
    return fuzz.ratio(normalize_title(a), normalize_title(b))
