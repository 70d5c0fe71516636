"""The collector interface and the record it yields.

A collector handles one source family (PMLR, ACL Anthology, CVF, ...) for one or more venues. It
works in two steps so that a run can be resumed and a page that fails costs one item, not the run:

1. :meth:`Collector.index` reads the venue-year's index / volume / API pages and returns an
   :class:`Index`: one :class:`Item` per paper (often already a full record), the track counts and
   the problems met (an index page whose layout changed is a :class:`ParseError`).
2. :meth:`Collector.detail` is called for each item whose ``detail_url`` is set (a paper page
   with the abstract); it fills the item's record from that page.

Parsers depend on page content only (bytes in, records out): the same code reads live pages,
cached pages and the recorded pages of ``--offline``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from lxml import etree
from lxml import html as lhtml

from ..corpus.records import normalize_title

#: schema version of the collected record files
RECORD_SCHEMA = "collected_record/1"


@dataclass
class CollectedRecord:
    """One paper as read from an official proceedings site (``collected_record.schema.json``)."""

    venue: str
    year: int
    title: str
    authors: list[str] = field(default_factory=list)
    abstract: str = ""
    pdf: str = ""
    url: str = ""
    source_id: str = ""          # the site's id: PMLR id, Anthology id, OpenReview id, CVF file stem ...
    site: str = ""               # collector family: pmlr, acl, cvf, ecva, neurips, openreview, aaai, ijcai, jmlr
    track: str = ""              # the track / volume / section / issue the site files the paper under
    main_track: bool = True
    track_rule: str = ""         # what decided main_track: rules, override, llm:<model>
    openreview_id: str = ""
    anthology_id: str = ""
    doi: str = ""
    pages: str = ""

    @property
    def has_abstract(self) -> bool:
        return bool(self.abstract and self.abstract.strip())

    def key(self) -> str:
        """Stable key within a venue-year (duplicate entries share it)."""
        return self.source_id or normalize_title(self.title)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CollectedRecord:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class Item:
    """One paper found on an index page; ``detail_url`` when its own page must be read."""

    key: str
    record: CollectedRecord
    detail_url: str = ""


@dataclass
class ItemError:
    """A per-item problem, kept in the report (never raised)."""

    key: str
    url: str
    kind: str        # http | parse | missing_abstract | offline_missing | duplicate | pdf | robots
    message: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Index:
    items: list[Item] = field(default_factory=list)
    errors: list[ItemError] = field(default_factory=list)
    #: pages read to build the index (URLs)
    pages: list[str] = field(default_factory=list)


class ParseError(Exception):
    """A page does not have the expected structure (layout changed, truncated, wrong page)."""


class Collector:
    """Base class: subclasses set ``name`` and ``venues`` and implement ``index`` (and ``detail``)."""

    name: ClassVar[str] = ""
    venues: ClassVar[tuple[str, ...]] = ()
    #: venues whose tracks / volumes / sections are classified main vs ancillary
    classified: ClassVar[bool] = False

    def index(self, venue: str, year: int, fetch: FetchLike) -> Index:  # pragma: no cover
        raise NotImplementedError

    def detail(self, item: Item, page: bytes) -> None:
        """Fill ``item.record`` from the paper page (default: citation_* meta tags)."""
        meta = parse_citation_meta(page)
        apply_meta(item.record, meta)


class FetchLike:  # pragma: no cover - typing aid: mustcite.collect.http.Fetcher
    def get(self, url: str) -> bytes: ...
    def get_archive(self, url: str) -> dict[str, bytes]: ...


# ---------------------------------------------------------------- small parsing helpers

_WS = re.compile(r"\s+")


def clean(text: str | None) -> str:
    """Unescape HTML entities and collapse whitespace."""
    if not text:
        return ""
    return _WS.sub(" ", html.unescape(text)).strip()


def decode(page: bytes | str) -> str:
    if isinstance(page, str):
        return page
    for enc in ("utf-8", "cp1252"):
        try:
            return page.decode(enc)
        except UnicodeDecodeError:
            continue
    return page.decode("utf-8", errors="replace")


def parse_html(page: bytes | str):
    """An lxml HTML tree; an empty or non-HTML page raises ParseError."""
    text = decode(page)
    if not text.strip():
        raise ParseError("empty page")
    try:
        return lhtml.document_fromstring(text)
    except (etree.ParserError, ValueError) as exc:
        raise ParseError(f"not HTML: {exc}") from None


def text_of(el) -> str:
    return clean(el.text_content()) if el is not None else ""


def parse_citation_meta(page: bytes | str) -> dict[str, list[str]]:
    """All ``<meta name=citation_* content=...>`` (and DC.*) values, in page order."""
    tree = parse_html(page)
    out: dict[str, list[str]] = {}
    for m in tree.iter("meta"):
        name = (m.get("name") or m.get("property") or "").strip()
        if name.startswith(("citation_", "DC.", "og:")):
            out.setdefault(name, []).append(clean(m.get("content") or ""))
    return out


def apply_meta(rec: CollectedRecord, meta: dict[str, list[str]]) -> None:
    """Fill empty fields of ``rec`` from citation meta tags."""
    def one(*names: str) -> str:
        for n in names:
            for v in meta.get(n, []):
                if v:
                    return v
        return ""

    rec.title = rec.title or one("citation_title", "DC.Title")
    if not rec.authors:
        rec.authors = [a for a in meta.get("citation_author", []) if a] or \
            [a for a in meta.get("DC.Creator.PersonalName", []) if a]
    rec.pdf = rec.pdf or one("citation_pdf_url")
    rec.doi = rec.doi or one("citation_doi", "DC.Identifier.DOI")
    rec.abstract = rec.abstract or one("citation_abstract", "DC.Description")
    if not rec.pages:
        first, last = one("citation_firstpage"), one("citation_lastpage")
        rec.pages = f"{first}-{last}" if first and last else first


def check_record(rec: CollectedRecord) -> str:
    """'' when the record is usable, else why not (a missing title is a layout problem)."""
    if not rec.title.strip():
        return "no title"
    if not rec.authors:
        return "no authors"
    return ""


Resolver = Callable[[str], str]
