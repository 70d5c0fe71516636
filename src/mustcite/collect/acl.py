"""ACL Anthology (ACL, EMNLP, NAACL): the Anthology's XML per event, and single paper pages.

Primary source: ``data/xml/<collection>.xml`` of github.com/acl-org/acl-anthology (one request per
venue-year: every volume with every paper, abstracts included). ``<collection>`` is
``<year>.<venue>`` from 2020 on, the old letter ids before (``P19`` ACL, ``N19`` NAACL, ``D19``
EMNLP). Each ``<volume>`` (long, short, main, demos, srw, industry, tutorials, findings...) is a
track, classified main or not by :mod:`mustcite.collect.tracks` on its id and booktitle.

A paper page (``aclanthology.org/<id>/``) is read by :func:`parse_paper_page`: its
``citation_*`` meta tags and the ``.acl-abstract`` card.
"""

from __future__ import annotations

import re

from lxml import etree

from .base import (
    CollectedRecord,
    Collector,
    Index,
    Item,
    ItemError,
    ParseError,
    apply_meta,
    clean,
    parse_citation_meta,
    parse_html,
    text_of,
)

_OLD_LETTER = {"ACL": "P", "NAACL": "N", "EMNLP": "D"}
XML_BASE = "https://raw.githubusercontent.com/acl-org/acl-anthology/master/data/xml/"


def collection_id(venue: str, year: int) -> str:
    if year >= 2020:
        return f"{year}.{venue.lower()}"
    return f"{_OLD_LETTER[venue]}{year % 100:02d}"


def xml_url(venue: str, year: int) -> str:
    return f"{XML_BASE}{collection_id(venue, year)}.xml"


def _text(el) -> str:
    return clean("".join(el.itertext())) if el is not None else ""


def _person(el) -> str:
    first = el.find("first")
    last = el.find("last")
    return clean(" ".join(x for x in (_text(first), _text(last)) if x))


def track_name(vid: str, booktitle: str) -> str:
    """``long (Volume 1: Long Papers)``: the volume id and the booktitle's distinguishing part
    (its last parenthesis, else what follows its last colon); the volume id alone when neither."""
    m = re.search(r"\(([^()]*)\)\s*$", booktitle)
    short = m.group(1) if m else (booktitle.rsplit(":", 1)[-1].strip() if ":" in booktitle else "")
    return f"{vid} ({short})" if short else vid


def parse_xml(data: bytes, venue: str, year: int) -> tuple[Index, dict[str, str]]:
    """Items of every ``<paper>`` (frontmatter excluded) and ``{volume id: track text}``."""
    try:
        root = etree.fromstring(data, parser=etree.XMLParser(resolve_entities=False, no_network=True,
                                                            huge_tree=True))
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"malformed or truncated XML: {exc}") from None
    if root.tag != "collection":
        raise ParseError(f"not an Anthology collection (root element <{root.tag}>)")
    cid = root.get("id", "")
    idx = Index()
    tracks: dict[str, str] = {}
    volumes = root.findall("volume")
    if not volumes:
        raise ParseError("no <volume> in the collection")
    for vol in volumes:
        vid = vol.get("id", "")
        booktitle = _text(vol.find("meta/booktitle"))
        track = track_name(vid, booktitle)
        tracks[vid] = track
        for paper in vol.findall("paper"):
            pid = paper.get("id", "")
            title = _text(paper.find("title"))
            anth = _text(paper.find("url")) or (f"{cid}-{vid}.{pid}" if year >= 2020 else "")
            if not title:
                idx.errors.append(ItemError(key=anth or f"{vid}/{pid}", url="", kind="parse",
                                            message="paper without <title>"))
                continue
            if anth.startswith(("http://", "https://")):
                anth = ""
            rec = CollectedRecord(
                venue=venue, year=year, title=title,
                authors=[n for n in (_person(a) for a in paper.findall("author")) if n],
                abstract=_text(paper.find("abstract")),
                pdf=f"https://aclanthology.org/{anth}.pdf" if anth else "",
                url=f"https://aclanthology.org/{anth}/" if anth else "",
                source_id=anth, anthology_id=anth, site="acl", track=track,
                doi=_text(paper.find("doi")), pages=_text(paper.find("pages")))
            idx.items.append(Item(key=rec.key(), record=rec))
    return idx, tracks


def parse_paper_page(page: bytes | str, venue: str = "", year: int = 0) -> CollectedRecord:
    """One Anthology paper page: ``citation_*`` meta + the abstract card."""
    meta = parse_citation_meta(page)
    if not meta.get("citation_title"):
        raise ParseError("no citation_title meta tag (not an Anthology paper page, or layout changed)")
    rec = CollectedRecord(venue=venue, year=year, title="", site="acl")
    apply_meta(rec, meta)
    tree = parse_html(page)
    card = next(iter(tree.xpath('//div[contains(@class,"acl-abstract")]/span')), None)
    rec.abstract = text_of(card)
    url = next(iter(meta.get("og:url", [])), "")
    rec.url = url
    rec.anthology_id = rec.source_id = url.rstrip("/").rsplit("/", 1)[-1] if url else \
        rec.pdf.rsplit("/", 1)[-1].removesuffix(".pdf")
    if not year:
        date = next(iter(meta.get("citation_publication_date", [])), "")
        rec.year = int(date[:4]) if date[:4].isdigit() else 0
    return rec


class AclCollector(Collector):
    name = "acl"
    venues = ("ACL", "EMNLP", "NAACL")
    classified = True

    def index(self, venue: str, year: int, fetch) -> Index:
        url = xml_url(venue, year)
        idx, _ = parse_xml(fetch.get(url), venue, year)
        idx.pages.append(url)
        return idx

    def detail(self, item: Item, page: bytes) -> None:
        rec = parse_paper_page(page, item.record.venue, item.record.year)
        for f in ("abstract", "pdf", "doi", "pages"):
            if not getattr(item.record, f):
                setattr(item.record, f, getattr(rec, f))
