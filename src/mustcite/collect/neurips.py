"""NeurIPS proceedings (papers.nips.cc / proceedings.neurips.cc; also proceedings.iclr.cc).

Index ``papers.nips.cc/paper_files/paper/<year>``, two layouts:

* new (2022- site): ``<li class="conference|datasets_and_benchmarks|none">`` with
  ``<a title=... href="/paper_files/paper/<year>/hash/<hash>-Abstract-<Track>.html">TITLE</a>`` and
  the authors in ``<i>`` or ``span.paper-authors``; the track is the ``li`` class or the link's
  ``-Abstract-<Track>`` suffix (``Datasets_and_Benchmarks`` is not the main track);
* old (``/book/advances-in-neural-information-processing-systems-<n>-<year>``): ``<li>`` with
  ``<a href="/paper/<n>-slug">TITLE</a>`` then one ``a.author`` per author.

Paper page: ``citation_*`` meta (title, authors, pdf) and the abstract: the paragraph after
``<h4>Abstract</h4>`` (new) or ``p.abstract`` (old).
"""

from __future__ import annotations

import re
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

NEURIPS_BASE = "https://papers.nips.cc"
_TRACK_IN_HREF = re.compile(r"-Abstract(?:-([A-Za-z_]+))?\.html$")


def index_url(year: int, base: str = NEURIPS_BASE) -> str:
    return f"{base}/paper_files/paper/{year}"


def parse_index(page: bytes, venue: str, year: int, base_url: str, site: str = "neurips") -> Index:
    tree = parse_html(page)
    idx = Index()
    new = tree.xpath('//li[.//a[contains(@href,"/hash/")]]')
    old = tree.xpath('//li[a[contains(@class,"author")]]')
    if not new and not old:
        raise ParseError("no paper list on the NeurIPS index page (layout changed?)")
    for li in new or old:
        a = li.xpath('.//a[contains(@href,"/hash/") or starts-with(@href,"/paper/")]')
        if not a:
            continue
        a = a[0]
        title = text_of(a) or clean(a.get("title"))
        href = urljoin(base_url, a.get("href"))
        if new:
            names = li.xpath('.//span[contains(@class,"paper-authors")]|.//i')
            authors = [clean(x) for x in text_of(names[0]).split(",") if clean(x)] if names else []
            m = _TRACK_IN_HREF.search(href)
            track = (m.group(1) if m and m.group(1) else "") or " ".join((li.get("class") or "").split())
            track = "" if track in ("none", "Conference", "conference") else track.replace("_", " ")
            sid = href.rsplit("/", 1)[-1].split("-Abstract")[0]
        else:
            authors = [text_of(x) for x in li.xpath('./a[contains(@class,"author")]') if text_of(x)]
            track = ""
            sid = href.rstrip("/").rsplit("/", 1)[-1].split("-", 1)[0]
        if not title:
            idx.errors.append(ItemError(key=href, url=base_url, kind="parse", message="paper link without title"))
            continue
        rec = CollectedRecord(venue=venue, year=year, title=title, authors=authors, url=href,
                              source_id=f"{site}:{year}:{sid}", site=site, track=track)
        idx.items.append(Item(key=rec.key(), record=rec, detail_url=href))
    return idx


def parse_paper_page(page: bytes, url: str) -> dict[str, object]:
    meta = parse_citation_meta(page)
    tree = parse_html(page)
    abstract = ""
    el = next(iter(tree.xpath('//p[contains(@class,"abstract")]')), None)
    if el is None:
        h = next(iter(tree.xpath('//h4[normalize-space()="Abstract"]|//h3[normalize-space()="Abstract"]')), None)
        if h is not None:
            sib = h.getnext()
            while sib is not None and not text_of(sib) and sib.tag == "p":
                sib = sib.getnext()
            el = sib
    if el is not None:
        abstract = text_of(el)
    if not meta.get("citation_title") and el is None:
        raise ParseError("neither citation meta nor an abstract on the paper page (layout changed?)")
    pdf = next(iter(meta.get("citation_pdf_url", [])), "")
    if not pdf:
        for a in tree.xpath("//a[@href]"):
            if a.get("href").lower().endswith(".pdf") and "supplement" not in a.get("href").lower():
                pdf = urljoin(url, a.get("href"))
                break
    return {"abstract": abstract, "meta": meta, "pdf": pdf}


class NeuripsCollector(Collector):
    name = "neurips"
    venues = ("NeurIPS",)
    base = NEURIPS_BASE

    def index(self, venue: str, year: int, fetch) -> Index:
        url = index_url(year, self.base)
        idx = parse_index(fetch.get(url), venue, year, url, site=self.name)
        idx.pages.append(url)
        return idx

    def detail(self, item: Item, page: bytes) -> None:
        d = parse_paper_page(page, item.detail_url)
        rec = item.record
        rec.abstract = str(d["abstract"])
        apply_meta(rec, d["meta"])
        if not rec.pdf and d["pdf"]:
            rec.pdf = str(d["pdf"])
