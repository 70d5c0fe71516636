"""IJCAI proceedings (``www.ijcai.org/proceedings/<year>/``).

The year page lists tracks as ``div.section_title`` (``<h3>Main Track</h3>``, ``Survey Track``,
``Demo Track``, special tracks...) followed by ``div.paper_wrapper`` blocks: ``div.title``,
``div.authors`` (comma separated) and ``div.details`` with the ``PDF`` and ``Details`` links. The
paper page (``/proceedings/<year>/<n>``) gives ``citation_*`` meta and the abstract (the longest
``div.col-md-12`` text that is not the title or the authors, or a ``.abstract`` element). Tracks
are classified by :mod:`mustcite.collect.tracks`.
"""

from __future__ import annotations

from urllib.parse import urljoin

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


def year_url(year: int) -> str:
    return f"https://www.ijcai.org/proceedings/{year}/"


def parse_year_page(page: bytes, year: int, base_url: str) -> Index:
    tree = parse_html(page)
    nodes = tree.xpath('//div[contains(@class,"section_title") or contains(@class,"paper_wrapper")]')
    if not any("paper_wrapper" in (n.get("class") or "") for n in nodes):
        raise ParseError("no div.paper_wrapper on the IJCAI proceedings page (layout changed?)")
    idx = Index()
    track = ""
    for n in nodes:
        if "section_title" in (n.get("class") or ""):
            track = text_of(n)
            continue
        title = text_of(next(iter(n.xpath('./div[contains(@class,"title")]')), None))
        authors = text_of(next(iter(n.xpath('./div[contains(@class,"authors")]')), None))
        pdf = url = ""
        for a in n.xpath('.//div[contains(@class,"details")]//a[@href]'):
            label = text_of(a).lower()
            href = urljoin(base_url, a.get("href"))
            if label == "pdf" or href.lower().endswith(".pdf"):
                pdf = pdf or href
            elif "detail" in label:
                url = url or href
        if not title:
            idx.errors.append(ItemError(key=n.get("id") or "?", url=base_url, kind="parse",
                                        message="paper without title"))
            continue
        pid = url.rstrip("/").rsplit("/", 1)[-1] if url else (n.get("id") or "")
        rec = CollectedRecord(venue="IJCAI", year=year, title=title,
                              authors=[clean(x) for x in authors.split(",") if clean(x)], pdf=pdf, url=url,
                              source_id=f"ijcai:{year}:{pid}" if pid else "", site="ijcai", track=track)
        idx.items.append(Item(key=rec.key(), record=rec, detail_url=url))
    return idx


def parse_paper_page(page: bytes, title: str = "", authors: str = "") -> tuple[str, dict[str, list[str]]]:
    meta = parse_citation_meta(page)
    tree = parse_html(page)
    el = next(iter(tree.xpath('//*[contains(@class,"abstract")]')), None)
    abstract = text_of(el)
    if not abstract:
        skip = {clean(title), clean(authors)} | set(meta.get("citation_title", []))
        texts = [text_of(d) for d in tree.xpath('//div[contains(@class,"col-md-12")]')
                 if not d.xpath('.//div[contains(@class,"col-md-12")]')]
        texts = [t for t in texts if t and t not in skip and not t.startswith(("Proceedings of", "PDF"))]
        abstract = max(texts, key=len) if texts else ""
        if len(abstract) < 100:
            abstract = ""
    if not abstract and not meta.get("citation_title"):
        raise ParseError("no abstract and no citation meta on the IJCAI paper page")
    return abstract, meta


class IjcaiCollector(Collector):
    name = "ijcai"
    venues = ("IJCAI",)
    classified = True

    def index(self, venue: str, year: int, fetch) -> Index:
        url = year_url(year)
        idx = parse_year_page(fetch.get(url), year, url)
        idx.pages.append(url)
        return idx

    def detail(self, item: Item, page: bytes) -> None:
        abstract, meta = parse_paper_page(page, item.record.title, ", ".join(item.record.authors))
        item.record.abstract = abstract
        apply_meta(item.record, meta)
