"""JMLR volumes: the volume source repository (one ``info.json`` per paper), or jmlr.org pages.

Primary source: github.com/JmlrOrg/v<N> as one archive: ``<id>/info.json`` with ``title``,
``authors`` (display strings, some with BibTeX accents such as ``S{{\\'e}}bastien``: converted
to Unicode with pylatexenc), ``abstract``, ``issue``, ``pages``. Official links follow the fixed
pattern ``jmlr.org/papers/v<N>/<id>.html`` and ``jmlr.org/papers/volume<N>/<id>/<id>.pdf``.
Fallback: the volume page ``jmlr.org/papers/v<N>/`` (``dl`` of ``dt`` title / ``dd`` authors and
``abs`` / ``pdf`` links) and each ``abs`` page for the abstract. Volume N is year - 1999.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urljoin

from pylatexenc.latex2text import LatexNodes2Text

from .base import CollectedRecord, Collector, Index, Item, ItemError, ParseError, clean, parse_html, text_of
from .http import FetchError

_ACCENT = re.compile(r"\\[`'^\"~=.uvHckbdrt]|\{\\|\\[a-zA-Z]+\{")


def volume_of(year: int) -> int:
    return year - 1999


def archive_url(volume: int) -> str:
    return f"https://github.com/JmlrOrg/v{volume}/archive/refs/heads/main.tar.gz"


def latex_name(name: str) -> str:
    """BibTeX accents to Unicode (``S{{\\'e}}bastien`` -> ``Sébastien``); plain names unchanged."""
    if "\\" not in name and "{" not in name:
        return clean(name)
    try:
        return clean(LatexNodes2Text().latex_to_text(name))
    except Exception:   # noqa: BLE001 - pylatexenc on odd input: keep the raw name
        return clean(name.replace("{", "").replace("}", ""))


def info_record(info: dict, volume: int, year: int) -> CollectedRecord:
    if not isinstance(info, dict):
        raise ParseError("info.json is not an object")
    pid = str(info.get("id") or "")
    title = clean(str(info.get("title") or ""))
    if not title or not pid:
        raise ParseError("info.json without title or id")
    authors = info.get("authors") or []
    if not isinstance(authors, list):
        raise ParseError("authors is not a list")
    pages = info.get("pages") or []
    return CollectedRecord(
        venue="JMLR", year=int(info.get("year") or year), title=title,
        authors=[n for n in (latex_name(str(a)) for a in authors) if n],
        abstract=clean(str(info.get("abstract") or "")),
        pdf=f"https://jmlr.org/papers/volume{volume}/{pid}/{pid}.pdf",
        url=f"https://jmlr.org/papers/v{volume}/{pid}.html", source_id=f"jmlr-v{volume}-{pid}", site="jmlr",
        track=str(info.get("special_issue") or ""),
        pages="-".join(str(p) for p in pages) if isinstance(pages, list) else str(pages))


def parse_archive(members: dict[str, bytes], volume: int, year: int) -> Index:
    names = sorted(n for n in members if n.endswith("/info.json"))
    if not names:
        raise ParseError("no */info.json in the JMLR volume source")
    idx = Index()
    for n in names:
        key = n.rsplit("/", 2)[-2]
        try:
            rec = info_record(json.loads(members[n].decode("utf-8")), volume, year)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else exc
            idx.errors.append(ItemError(key=key, url=n, kind="parse", message=f"malformed info.json: {why}"))
            continue
        except ParseError as exc:
            idx.errors.append(ItemError(key=key, url=n, kind="parse", message=str(exc)))
            continue
        idx.items.append(Item(key=rec.key(), record=rec))
    return idx


def parse_volume_page(page: bytes, volume: int, year: int, base_url: str) -> Index:
    tree = parse_html(page)
    dts = tree.xpath("//dl/dt")
    if not dts:
        raise ParseError("no dl/dt entries on the JMLR volume page (layout changed?)")
    idx = Index()
    for dt in dts:
        title = text_of(dt)
        dd = dt.getnext()
        if dd is None or dd.tag != "dd" or not title:
            idx.errors.append(ItemError(key=title or "?", url=base_url, kind="parse", message="dt without dd"))
            continue
        names = text_of(next(iter(dd.xpath(".//b|.//i")), None))
        abs_url = pdf = ""
        for a in dd.xpath(".//a[@href]"):
            label = text_of(a).lower()
            if label == "abs" and not abs_url:
                abs_url = urljoin(base_url, a.get("href"))
            elif label == "pdf" and not pdf:
                pdf = urljoin(base_url, a.get("href"))
        pid = abs_url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".html")
        rec = CollectedRecord(venue="JMLR", year=year, title=title,
                              authors=[clean(x) for x in names.split(",") if clean(x)], pdf=pdf, url=abs_url,
                              source_id=f"jmlr-v{volume}-{pid}" if pid else "", site="jmlr")
        idx.items.append(Item(key=rec.key(), record=rec, detail_url=abs_url))
    return idx


class JmlrCollector(Collector):
    name = "jmlr"
    venues = ("JMLR",)

    def index(self, venue: str, year: int, fetch) -> Index:
        volume = volume_of(year)
        url = archive_url(volume)
        try:
            members = fetch.get_archive(url)
        except FetchError as exc:
            page_url = f"https://jmlr.org/papers/v{volume}/"
            try:
                idx = parse_volume_page(fetch.get(page_url), volume, year, page_url)
            except FetchError:
                raise exc from None
            idx.pages.append(page_url)
            return idx
        idx = parse_archive(members, volume, year)
        idx.pages.append(url)
        return idx

    def detail(self, item: Item, page: bytes) -> None:
        tree = parse_html(page)
        el = next(iter(tree.xpath('//p[contains(@class,"abstract")]|//*[@id="abstract"]')), None)
        if el is None:
            h = next(iter(tree.xpath('//h3[normalize-space()="Abstract"]')), None)
            el = h.getnext() if h is not None else None
        if el is None:
            raise ParseError("no abstract on the JMLR abs page")
        item.record.abstract = text_of(el)
