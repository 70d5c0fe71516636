"""AAAI (OJS at ojs.aaai.org): issue archive -> issue pages -> article pages.

* archive ``ojs.aaai.org/index.php/AAAI/issue/archive[/<page>]``: ``div.obj_issue_summary`` with
  ``a.title`` (``AAAI-24 Technical Tracks 1``, ``AAAI-24 Special Track on ...``, ``Student
  Abstracts ...``) and ``div.series`` (``Vol. 38 No. 1: ...``). A year's issues are the ones of
  volume ``year - 1986`` (AAAI-24 is volume 38) or named ``AAAI-<yy>``.
* issue page ``.../issue/view/<id>``: ``div.section`` with an ``h2`` section name and one
  ``div.obj_article_summary`` per article (``h3.title a``, ``div.authors``, ``div.pages``,
  ``a.obj_galley_link.pdf``).
* article page ``.../article/view/<id>``: ``citation_*`` meta and ``section.item.abstract``.

The track of an article is ``<issue title> / <section>``; issues and sections are classified by
:mod:`mustcite.collect.tracks` (Technical Tracks and special tracks main; student abstracts, EAAI,
IAAI, senior member, demos and the like not).
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

ARCHIVE = "https://ojs.aaai.org/index.php/AAAI/issue/archive"
MAX_ARCHIVE_PAGES = 15


def volume_of(year: int) -> int:
    return year - 1986


def parse_archive(page: bytes, base_url: str) -> list[dict[str, object]]:
    """``[{"title", "series", "url", "volume"}]`` of one archive page."""
    tree = parse_html(page)
    out = []
    for div in tree.xpath('//div[contains(@class,"obj_issue_summary")]'):
        a = next(iter(div.xpath('.//a[contains(@class,"title")]')), None)
        if a is None:
            continue
        series = text_of(next(iter(div.xpath('.//div[contains(@class,"series")]')), None))
        m = re.search(r"Vol\.?\s*(\d+)", series + " " + text_of(a))
        out.append({"title": text_of(a), "series": series, "url": urljoin(base_url, a.get("href")),
                    "volume": int(m.group(1)) if m else None})
    return out


def issues_of_year(issues: list[dict[str, object]], year: int) -> list[dict[str, object]]:
    tag = f"AAAI-{year % 100:02d}"
    return [i for i in issues if i["volume"] == volume_of(year) or tag in str(i["title"])]


def parse_issue(page: bytes, year: int, issue_title: str, base_url: str) -> Index:
    tree = parse_html(page)
    idx = Index()
    arts = tree.xpath('//div[contains(@class,"obj_article_summary")]')
    if not arts:
        raise ParseError("no div.obj_article_summary on the issue page (layout changed?)")
    for art in arts:
        sec = art.xpath('ancestor::div[contains(concat(" ", normalize-space(@class), " "), " section ")][1]/h2')
        section = text_of(sec[0]) if sec else ""
        a = next(iter(art.xpath('.//h3[contains(@class,"title")]//a[@href]'
                                '|.//div[contains(@class,"title")]//a[@href]')), None)
        if a is None:
            idx.errors.append(ItemError(key="?", url=base_url, kind="parse", message="article without title link"))
            continue
        url = urljoin(base_url, a.get("href"))
        authors = text_of(next(iter(art.xpath('.//div[contains(@class,"authors")]')), None))
        pdf_a = next(iter(art.xpath('.//a[contains(@class,"obj_galley_link") and contains(@class,"pdf")]')), None)
        pdf = ("" if pdf_a is None
               else urljoin(base_url, pdf_a.get("href")).replace("/article/view/", "/article/download/"))
        aid = url.rstrip("/").rsplit("/", 1)[-1]
        rec = CollectedRecord(venue="AAAI", year=year, title=text_of(a),
                              authors=[clean(x) for x in authors.split(",") if clean(x)], pdf=pdf, url=url,
                              source_id=f"aaai:{aid}", site="aaai",
                              track=" / ".join(x for x in (issue_title, section) if x),
                              pages=text_of(next(iter(art.xpath('.//div[contains(@class,"pages")]')), None)))
        idx.items.append(Item(key=rec.key(), record=rec, detail_url=url))
    return idx


def parse_article(page: bytes) -> tuple[str, dict[str, list[str]]]:
    meta = parse_citation_meta(page)
    tree = parse_html(page)
    sec = next(iter(tree.xpath('//section[contains(@class,"abstract")]|//div[contains(@class,"item abstract")]')), None)
    abstract = ""
    if sec is not None:
        label = sec.xpath('./h2|./h3')
        abstract = text_of(sec)
        if label:
            lab = text_of(label[0])
            abstract = abstract[len(lab):].strip() if abstract.startswith(lab) else abstract
    if not abstract and not meta.get("citation_title"):
        raise ParseError("no abstract section and no citation meta on the article page")
    return abstract, meta


class AaaiCollector(Collector):
    name = "aaai"
    venues = ("AAAI",)
    classified = True

    def index(self, venue: str, year: int, fetch) -> Index:
        issues: list[dict[str, object]] = []
        pages = []
        for n in range(1, MAX_ARCHIVE_PAGES + 1):
            url = ARCHIVE if n == 1 else f"{ARCHIVE}/{n}"
            found = parse_archive(fetch.get(url), url)
            pages.append(url)
            if not found:
                if n == 1:
                    raise ParseError("no div.obj_issue_summary on the AAAI archive page (layout changed?)")
                break
            issues += found
            vols = [i["volume"] for i in found if i["volume"]]
            if vols and min(vols) < volume_of(year):
                break
        mine = issues_of_year(issues, year)
        if not mine:
            raise ParseError(f"no AAAI {year} issue (volume {volume_of(year)}) in the OJS archive")
        idx = Index(pages=pages)
        for issue in mine:
            try:
                sub = parse_issue(fetch.get(str(issue["url"])), year, str(issue["title"]), str(issue["url"]))
            except ParseError as exc:
                idx.errors.append(ItemError(key=str(issue["title"]), url=str(issue["url"]), kind="parse",
                                            message=str(exc)))
                continue
            idx.items += sub.items
            idx.errors += sub.errors
            idx.pages.append(str(issue["url"]))
        return idx

    def detail(self, item: Item, page: bytes) -> None:
        abstract, meta = parse_article(page)
        item.record.abstract = abstract
        apply_meta(item.record, meta)
