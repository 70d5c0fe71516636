"""PMLR (ICML, AISTATS, COLT, UAI): volume sources (Jekyll front matter) and rendered pages.

Primary source: the volume's source repository ``github.com/mlresearch/v<N>`` as one archive
(``_config.yml`` + one ``_posts/*.md`` per paper with YAML front matter: ``title``, ``author``
[{given, family}], ``abstract``, ``pdf``, ``id``, ``page``, ``section``, ``openreview``) - one
request for the whole volume. Fallback when the archive cannot be read: the rendered volume page
``proceedings.mlr.press/v<N>/`` (``div.paper``: ``p.title``, ``span.authors``, links ``abs`` /
``Download PDF``) and each paper's page for its abstract (``div#abstract``).
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

import yaml

from .base import CollectedRecord, Collector, Index, Item, ItemError, ParseError, clean, decode, parse_html, text_of
from .http import FetchError

#: (venue, year) -> PMLR volume
VOLUMES: dict[tuple[str, int], int] = {
    **{("ICML", y): v for y, v in {2013: 28, 2014: 32, 2015: 37, 2016: 48, 2017: 70, 2018: 80, 2019: 97,
                                   2020: 119, 2021: 139, 2022: 162, 2023: 202, 2024: 235, 2025: 267}.items()},
    **{("AISTATS", y): v for y, v in {2007: 2, 2009: 5, 2010: 9, 2011: 15, 2012: 22, 2013: 31, 2014: 33,
                                      2015: 38, 2016: 51, 2017: 54, 2018: 84, 2019: 89, 2020: 108,
                                      2021: 130, 2022: 151, 2023: 206, 2024: 238, 2025: 258}.items()},
    **{("COLT", y): v for y, v in {2011: 19, 2012: 23, 2013: 30, 2014: 35, 2015: 40, 2016: 49, 2017: 65,
                                   2018: 75, 2019: 99, 2020: 125, 2021: 134, 2022: 178, 2023: 195,
                                   2024: 247, 2025: 291}.items()},
    **{("UAI", y): v for y, v in {2019: 115, 2020: 124, 2021: 161, 2022: 180, 2023: 216, 2024: 244,
                                  2025: 286}.items()},
}

_HTML_TAG = re.compile(r"</?(?:em|b|i|strong|p|br|sup|sub|span|a|u|tt|code|ul|ol|li)(?:\s[^<>]*)?/?>", re.I)


def archive_url(volume: int) -> str:
    return f"https://github.com/mlresearch/v{volume}/archive/refs/heads/gh-pages.tar.gz"


def volume_url(volume: int) -> str:
    return f"https://proceedings.mlr.press/v{volume}/"


def strip_tags(text: str) -> str:
    return clean(_HTML_TAG.sub("", text or ""))


def front_matter(text: str) -> dict:
    """The YAML between the first two ``---`` lines; ParseError when absent or malformed."""
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        raise ParseError("no YAML front matter (first line is not ---)")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ParseError("front matter not closed (truncated file?)") from None
    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise ParseError(f"malformed YAML front matter: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ParseError("front matter is not a mapping")
    return data


def _name(a) -> str:
    if isinstance(a, dict):
        return clean(" ".join(str(a.get(k) or "") for k in ("given", "family")))
    return clean(str(a or ""))


def post_record(fm: dict, venue: str, year: int, volume: int | str) -> CollectedRecord:
    """One record from a post's front matter (ParseError when it has no title)."""
    title = clean(str(fm.get("title") or ""))
    if not title:
        raise ParseError("post has no title")
    authors = [n for n in (_name(a) for a in (fm.get("author") or [])) if n]
    pid = str(fm.get("id") or "")
    return CollectedRecord(
        venue=venue, year=year, title=title, authors=authors,
        abstract=strip_tags(str(fm.get("abstract") or "")), pdf=str(fm.get("pdf") or ""),
        url=f"https://proceedings.mlr.press/v{volume}/{pid}.html" if pid else "",
        source_id=f"pmlr-v{volume}-{pid}" if pid else "", site="pmlr",
        track=clean(str(fm.get("section") or "")), openreview_id=str(fm.get("openreview") or ""),
        pages=str(fm.get("page") or ""))


def parse_volume_archive(members: dict[str, bytes], venue: str, year: int, volume: int) -> Index:
    """Records of every ``_posts/*.md`` of an unpacked volume source; a bad post is an item error."""
    idx = Index()
    config = [n for n in members if n.endswith("_config.yml") and "_posts/" not in n]
    if not config:
        raise ParseError("no _config.yml in the volume source")
    try:
        cfg = yaml.safe_load(decode(members[min(config, key=len)])) or {}
    except yaml.YAMLError as exc:
        raise ParseError(f"malformed _config.yml: {str(exc).splitlines()[0]}") from None
    if not isinstance(cfg, dict):
        raise ParseError("_config.yml is not a mapping")
    vol = str(cfg.get("volume") or volume)
    posts = sorted(n for n in members if "/_posts/" in "/" + n and n.endswith((".md", ".markdown")))
    if not posts:
        raise ParseError("no _posts/*.md in the volume source")
    for name in posts:
        try:
            rec = post_record(front_matter(decode(members[name])), venue, year, vol)
        except ParseError as exc:
            idx.errors.append(ItemError(key=name.rsplit("/", 1)[-1], url=name, kind="parse", message=str(exc)))
            continue
        idx.items.append(Item(key=rec.key(), record=rec))
    return idx


def parse_volume_page(page: bytes, venue: str, year: int, base_url: str) -> Index:
    """The rendered ``proceedings.mlr.press/vN/`` page: one item per ``div.paper``."""
    tree = parse_html(page)
    papers = tree.xpath('//div[contains(concat(" ", normalize-space(@class), " "), " paper ")]')
    if not papers:
        raise ParseError("no div.paper on the PMLR volume page (layout changed?)")
    idx = Index()
    for i, div in enumerate(papers):
        title = text_of(next(iter(div.xpath('.//p[contains(@class,"title")]')), None))
        authors = text_of(next(iter(div.xpath('.//span[contains(@class,"authors")]')), None))
        abs_url = pdf = ""
        for a in div.xpath(".//a[@href]"):
            label = text_of(a).lower()
            href = urljoin(base_url, a.get("href"))
            if label == "abs" and not abs_url:
                abs_url = href
            elif "pdf" in label and href.endswith(".pdf") and not pdf:
                pdf = href
        if not title:
            idx.errors.append(ItemError(key=f"#{i + 1}", url=base_url, kind="parse", message="paper without title"))
            continue
        pid = abs_url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".html") if abs_url else ""
        rec = CollectedRecord(venue=venue, year=year, title=title,
                              authors=[clean(a) for a in authors.replace("\xa0", " ").split(",") if clean(a)],
                              pdf=pdf, url=abs_url, source_id=f"pmlr-{pid}" if pid else "", site="pmlr")
        idx.items.append(Item(key=rec.key(), record=rec, detail_url=abs_url))
    return idx


class PmlrCollector(Collector):
    name = "pmlr"
    venues = ("ICML", "AISTATS", "COLT", "UAI")

    def index(self, venue: str, year: int, fetch) -> Index:
        volume = VOLUMES.get((venue, year))
        if volume is None:
            raise ParseError(f"no PMLR volume known for {venue} {year} (see mustcite.collect.pmlr.VOLUMES)")
        url = archive_url(volume)
        try:
            members = fetch.get_archive(url)
        except FetchError as exc:
            page_url = volume_url(volume)
            try:
                idx = parse_volume_page(fetch.get(page_url), venue, year, page_url)
            except FetchError:
                raise exc from None
            idx.pages.append(page_url)
            return idx
        idx = parse_volume_archive(members, venue, year, volume)
        idx.pages.append(url)
        return idx

    def detail(self, item: Item, page: bytes) -> None:
        tree = parse_html(page)
        div = next(iter(tree.xpath('//div[@id="abstract"]')), None)
        if div is None:
            raise ParseError("no div#abstract on the PMLR paper page")
        item.record.abstract = text_of(div)
        super().detail(item, page)
