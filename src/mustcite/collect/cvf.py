"""CVF open access (CVPR, ICCV) and ECVA (ECCV): ``dt.ptitle`` / ``dd`` index pages, paper pages.

Index page (``openaccess.thecvf.com/<CONF><YEAR>?day=all``, ``<CONF><YEAR>.py`` before 2018;
``ecva.net/papers.php`` for every ECCV): per paper a ``<dt class="ptitle"><a href=HTML>TITLE</a></dt>``
then ``<dd>`` with the authors - CVF: one ``form.authsearch`` per author holding
``<input name="query" value="NAME">`` (every name after the first has a leading space); ECVA:
plain text, comma separated - then a ``<dd>`` with ``[<a href="...pdf">pdf</a>]``. The paper page
(``div#abstract``, ``citation_*`` meta) gives the abstract. The CVF and ECVA pages list the main
conference only (workshops have their own pages), so nothing is classified.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from .base import CollectedRecord, Collector, Index, Item, ItemError, ParseError, clean, parse_html, text_of

CVF_BASE = "https://openaccess.thecvf.com/"
ECVA_URL = "https://www.ecva.net/papers.php"


def cvf_index_url(venue: str, year: int) -> str:
    if year >= 2018:
        return f"{CVF_BASE}{venue}{year}?day=all"
    return f"{CVF_BASE}{venue}{year}.py"


def parse_ptitle_page(page: bytes, venue: str, year: int, base_url: str, *, site: str,
                      href_filter: str | None = None) -> Index:
    """Items of a CVF / ECVA index page (``href_filter``: keep titles whose link contains it)."""
    tree = parse_html(page)
    dts = tree.xpath('//dt[contains(concat(" ", normalize-space(@class), " "), " ptitle ")]')
    if not dts:
        raise ParseError("no dt.ptitle on the index page (layout changed, or not an index page)")
    idx = Index()
    for n, dt in enumerate(dts):
        a = next(iter(dt.xpath(".//a[@href]")), None)
        title = text_of(a if a is not None else dt)
        html_url = urljoin(base_url, a.get("href")) if a is not None else ""
        if href_filter and href_filter not in html_url:
            continue
        authors: list[str] = []
        pdf = ""
        sib = dt.getnext()
        dds = []
        while sib is not None and sib.tag == "dd":
            dds.append(sib)
            sib = sib.getnext()
        for dd in dds:
            queries = dd.xpath('.//input[@name="query"]/@value')
            if queries and not authors:
                authors = [clean(q) for q in queries if clean(q)]
            for link in dd.xpath(".//a[@href]"):
                href = link.get("href")
                if href.lower().endswith(".pdf") and text_of(link).lower().strip("[] ") == "pdf" and not pdf:
                    pdf = urljoin(base_url, href)
        if not authors and dds and not dds[0].xpath(".//a[@href]"):
            raw = text_of(dds[0])
            authors = [clean(x.strip("* ")) for x in re.split(r",| and ", raw) if clean(x.strip("* "))]
        if not title:
            idx.errors.append(ItemError(key=f"#{n + 1}", url=base_url, kind="parse", message="dt.ptitle without title"))
            continue
        stem = html_url.rstrip("/").rsplit("/", 1)[-1].rsplit(".", 1)[0] if html_url else ""
        rec = CollectedRecord(venue=venue, year=year, title=title, authors=authors, pdf=pdf, url=html_url,
                              source_id=f"{site}:{stem}" if stem else "", site=site)
        if not pdf:
            idx.errors.append(ItemError(key=rec.key(), url=html_url, kind="parse", message="no pdf link"))
        idx.items.append(Item(key=rec.key(), record=rec, detail_url=html_url))
    return idx


def parse_paper_page(page: bytes) -> dict[str, object]:
    """``{"abstract", "authors", "pdf"}`` of a CVF / ECVA paper page."""
    tree = parse_html(page)
    div = next(iter(tree.xpath('//div[@id="abstract"]')), None)
    if div is None:
        raise ParseError("no div#abstract on the paper page")
    out: dict[str, object] = {"abstract": text_of(div)}
    out["authors"] = [clean(x) for x in tree.xpath('//meta[@name="citation_author"]/@content') if clean(x)]
    out["pdf"] = next(iter(tree.xpath('//meta[@name="citation_pdf_url"]/@content')), "")
    return out


class CvfCollector(Collector):
    name = "cvf"
    venues = ("CVPR", "ICCV")

    def index(self, venue: str, year: int, fetch) -> Index:
        url = cvf_index_url(venue, year)
        idx = parse_ptitle_page(fetch.get(url), venue, year, url, site="cvf")
        idx.pages.append(url)
        return idx

    def detail(self, item: Item, page: bytes) -> None:
        d = parse_paper_page(page)
        item.record.abstract = str(d["abstract"])
        if not item.record.authors:
            item.record.authors = list(d["authors"])
        if not item.record.pdf and d["pdf"]:
            item.record.pdf = urljoin(item.detail_url, str(d["pdf"]))


class EcvaCollector(CvfCollector):
    name = "ecva"
    venues = ("ECCV",)

    def index(self, venue: str, year: int, fetch) -> Index:
        idx = parse_ptitle_page(fetch.get(ECVA_URL), venue, year, ECVA_URL, site="ecva",
                                href_filter=f"eccv_{year}/")
        if not idx.items:
            raise ParseError(f"no ECCV {year} papers on {ECVA_URL}")
        idx.pages.append(ECVA_URL)
        return idx
