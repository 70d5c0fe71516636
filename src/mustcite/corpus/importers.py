"""Read every paper-list format in ``proceedings/`` into uniform :class:`ImportedRecord` rows.

Each source folder keeps its own field names (see ``proceedings/PROVENANCE.md``); a
:class:`SourceFormat` names, per folder, which keys hold the title, authors, abstract, id, links and
track. A folder not listed here is read with :data:`GENERIC_FORMAT` (the union of the usual keys).
Venue and year come from the file name (``nips2022.jsonl.gz``), JMLR years from each record.

Bad input raises :class:`~mustcite.errors.MustciteError` naming file and line (malformed JSON,
non-UTF-8, missing or non-string title, wrong field types). A record of an unknown venue or with no
year is not an error: it is returned with ``skip`` set, and the build counts and reports it.
"""

from __future__ import annotations

import ast
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MustciteError
from ..io import iter_jsonl
from .identifiers import identifier_keys
from .venues import ancillary_keyword, is_main_track, parse_file_name, track_label, venue_code


@dataclass(frozen=True)
class SourceFormat:
    """Which keys of one source's records hold which Paper field (first present key wins)."""

    title: tuple[str, ...] = ("title",)
    authors: tuple[str, ...] = ("authors", "author")
    abstract: tuple[str, ...] = ("abstract",)
    source_id: tuple[str, ...] = ("id",)
    url: tuple[str, ...] = ("url", "site", "link")
    pdf: tuple[str, ...] = ("pdf", "pdf_url")
    #: keys whose values decide main track vs ancillary (track, volume, status, booktitle ...)
    track: tuple[str, ...] = ("track",)
    #: keys looked at, in order, for an OpenReview id (plain id or a URL with ``id=``)
    openreview: tuple[str, ...] = ()
    #: base URL for relative ``url`` values
    url_base: str = ""
    #: rank used to break ties between equally rich duplicates and to pick titles (lower = better)
    priority: int = 50
    #: the source rewrites titles (ICLR-Oral replaced ':' by '_'): prefer another source's title
    title_mangled: bool = False
    #: the source also holds papers that were not accepted: keep a record only when another
    #: source lists the same paper
    confirm_only: bool = False


_ANTHOLOGY = SourceFormat(track=("volume", "booktitle"), url=("url",), priority=10)
_OPENREVIEW_CSV = SourceFormat(source_id=("paper_id",), url=("link",), openreview=("paper_id",),
                               priority=20)

#: folder name -> format. Every folder under ``proceedings/`` in the shared data is listed.
SOURCE_FORMATS: dict[str, SourceFormat] = {
    "paperlists": SourceFormat(track=("track", "status"), url=("site", "oa"),
                               openreview=("openreview", "site", "id"), priority=0),
    "ICLR-Oral": SourceFormat(authors=("author",), source_id=("openreview_url", "pdf_url", "url"),
                              url=("url",), pdf=("pdf_url",), track=("session",),
                              openreview=("openreview_url", "pdf_url"), priority=60, title_mangled=True),
    "NeurIPS2025_AcceptedPapers": SourceFormat(source_id=("paper_id",), url=(), pdf=(), track=(),
                                               priority=90),
    "yhamidullah-acl-anthology": _ANTHOLOGY,
    "Bhavyashah20-acl-anthology": _ANTHOLOGY,
    **{f"JmlrOrg-v{v}": SourceFormat(track=(), url=(), pdf=(), priority=10) for v in range(19, 26)},
    "umgupta-paperquest": SourceFormat(abstract=("abs",), source_id=("id", "url"), url=("url",),
                                       openreview=("id",), url_base="https://papers.nips.cc",
                                       priority=30),
    "evanzd-ICLR2021-OpenReviewData": _OPENREVIEW_CSV,
    # all 2,795 submissions were kept, only 2,642 are accepted (PROVENANCE): confirm by another source
    "346644054-NeurIPS2022-OpenReviewData": SourceFormat(source_id=("paper_id",), url=("link",),
                                                         openreview=("paper_id",), priority=20,
                                                         confirm_only=True),
    "chengyao-xie-NeurIPS2023-OpenReviewData": SourceFormat(
        source_id=("paper_id",), url=("link",), track=("presentation",), openreview=("paper_id",),
        priority=20),
    "LukasMosser-icml2024_finder": SourceFormat(title=("name",), authors=("speakers/authors",),
                                                source_id=("virtualsite_url",),
                                                url=("virtualsite_url",), track=("type",), priority=30),
    "dotd-NeurIPS2024Scrape": SourceFormat(source_id=("id", "pdf"), url=("id",), track=("venue",),
                                           openreview=("id",), priority=25),
    "rajatmodi62-ai-conf-abstract-generator": SourceFormat(source_id=(), url=(), pdf=(), track=(),
                                                           priority=70),
    "whitney-house-ICLR2025-OpenReview": SourceFormat(title=("Title",), authors=("Authors",),
                                                      source_id=(), url=(), pdf=(),
                                                      track=("Decision",), priority=40),
    "Junyi-99-neurips25authors": SourceFormat(track=("venue",), openreview=("id",), priority=20),
    "davidheineman-conference-papers": SourceFormat(source_id=("url",), url=("url",), pdf=(),
                                                    track=(), priority=40),
}

GENERIC_FORMAT = SourceFormat(
    title=("title", "Title", "name"),
    authors=("authors", "author", "Authors", "speakers/authors"),
    abstract=("abstract", "abs"),
    source_id=("id", "paper_id"),
    url=("url", "site", "link"),
    pdf=("pdf", "pdf_url"),
    track=("track", "status", "volume", "booktitle"),
    openreview=("openreview", "openreview_url"),
    priority=80,
)


def source_format(source: str) -> SourceFormat:
    return SOURCE_FORMATS.get(source, GENERIC_FORMAT)


@dataclass(slots=True)
class ImportedRecord:
    """One record of one source file, normalised; ``skip`` (a reason) when it cannot be placed."""

    source: str
    file: str                 # path relative to the data dir
    line: int
    venue: str | None
    year: int | None
    title: str
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    source_id: str = ""
    url: str = ""
    pdf: str = ""
    track: str = ""
    main_track: bool = True
    openreview_id: str = ""
    anthology_id: str = ""
    priority: int = 50
    title_mangled: bool = False
    confirm_only: bool = False
    skip: str = ""
    doi: str = ""
    pages: str = ""
    volume: str = ""
    #: identifier keys (:func:`~mustcite.corpus.identifiers.identifier_keys` of DOI, URL and PDF link)
    id_keys: list[str] = field(default_factory=list)
    #: the namespace a record is matched in by title: its venue, or "<venue> workshops" for a
    #: workshop record of a source that files workshops apart ('' = the venue)
    group: str = ""

    @property
    def has_abstract(self) -> bool:
        return bool(self.abstract.strip())

    @property
    def group_venue(self) -> str | None:
        return self.group or self.venue

    def richness(self) -> int:
        """How many optional fields are filled (used to choose among duplicates)."""
        return sum(bool(x) for x in (self.authors, self.source_id, self.url, self.pdf, self.track))


_OR_ID_IN_URL = re.compile(r"openreview\.net/(?:forum|pdf)\?id=([A-Za-z0-9_\-]+)")
_OR_ID = re.compile(r"^[A-Za-z0-9_\-]{8,14}$")
_ANTHOLOGY_ID = re.compile(r"^(?:[A-Z]\d{2}-\d{4}|\d{4}\.[a-z]+-[a-z]+\.\w+)$")


def openreview_id(value: str) -> str:
    """The OpenReview id inside a URL (``forum?id=`` / ``pdf?id=``) or a bare id, else ''."""
    if not value:
        return ""
    m = _OR_ID_IN_URL.search(value)
    if m:
        return m.group(1)
    if "/" not in value and _OR_ID.match(value) and not value.isdigit():
        return value
    return ""


def parse_authors(value: Any, *, path: str | Path = "", line: int | None = None) -> list[str]:
    """Authors as a list: accepts a list, a Python/JSON list repr string, or a string joined by
    ``"; "``, ``";"`` or ``", "``."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        items = value
    elif isinstance(value, str):
        s = value.strip()
        if s.startswith("[") and s.endswith("]"):
            try:
                items = ast.literal_eval(s)
            except (ValueError, SyntaxError):
                raise MustciteError("authors look like a list but cannot be parsed", path=path,
                                    line=line, field="authors") from None
            if not isinstance(items, list):
                raise MustciteError("authors list repr is not a list", path=path, line=line,
                                    field="authors")
        else:
            # entities first, so that "O&#x27; Toole" is not split at its ';'
            s = html.unescape(s) if "&" in s else s
            items = s.split(";") if ";" in s else s.split(",")
    else:
        raise MustciteError(f"authors must be a string or list, got {type(value).__name__}",
                            path=path, line=line, field="authors")
    out = []
    for a in items:
        if not isinstance(a, str):
            raise MustciteError(f"author names must be strings, got {type(a).__name__}", path=path,
                                line=line, field="authors")
        a = " ".join((html.unescape(a) if "&" in a else a).split())
        if a:
            out.append(a)
    return out


def _first(obj: dict[str, Any], keys: tuple[str, ...], *, path: str, line: int,
           allow_number: bool = False) -> tuple[str, str]:
    """(key, value) of the first key present with a non-empty value; values must be strings."""
    for k in keys:
        v = obj.get(k)
        if v is None or v == "":
            continue
        if allow_number and isinstance(v, (int, float)) and not isinstance(v, bool):
            return k, str(v)
        if not isinstance(v, str):
            raise MustciteError(f"expected a string, got {type(v).__name__}", path=path, line=line,
                                field=k)
        return k, v
    return "", ""


def _year_of(obj: dict[str, Any], *, path: str, line: int) -> int | None:
    v = obj.get("year")
    if v is None or v == "":
        return None
    try:
        return int(str(v).strip())
    except ValueError:
        raise MustciteError(f"year is not a number: {v!r}", path=path, line=line, field="year") from None


def import_file(path: Path, data_dir: Path, source: str | None = None) -> Iterator[ImportedRecord]:
    """Yield one :class:`ImportedRecord` per line of ``path`` (a ``.jsonl`` or ``.jsonl.gz`` file).

    ``source`` defaults to the name of the file's folder.
    """
    path = Path(path)
    try:
        rel = str(path.relative_to(data_dir))
    except ValueError:
        rel = str(path)
    source = source or path.parent.name
    fmt = source_format(source)
    stem = path.name.split(".")[0]
    prefix, file_year = parse_file_name(stem)
    file_venue = venue_code(prefix)
    findings_file = prefix == "findings"

    for line, obj in iter_jsonl(path):
        where = dict(path=rel, line=line)
        tkey, title = _first(obj, fmt.title, **where)
        if not tkey:
            raise MustciteError("record has no title", field=fmt.title[0], **where)
        title = " ".join(title.split())
        akey = next((k for k in fmt.authors if obj.get(k) not in (None, "")), "")
        authors = parse_authors(obj.get(akey), **where) if akey else []
        _, abstract = _first(obj, fmt.abstract, **where)
        _, sid = _first(obj, fmt.source_id, allow_number=True, **where)
        _, url = _first(obj, fmt.url, **where)
        if url and fmt.url_base and url.startswith("/"):
            url = fmt.url_base + url
        _, pdf = _first(obj, fmt.pdf, **where)
        track_texts = []
        for k in fmt.track:
            v = obj.get(k)
            if v not in (None, ""):
                if not isinstance(v, (str, int)):
                    raise MustciteError(f"expected a string, got {type(v).__name__}", field=k, **where)
                track_texts.append(str(v))
        or_id = ""
        for k in fmt.openreview:
            v = obj.get(k)
            if isinstance(v, str) and (or_id := openreview_id(v)):
                break
        anth = sid if _ANTHOLOGY_ID.match(sid or "") else ""
        if anth and "." in anth:          # 2021.findings-emnlp.3 -> the volume tells the track
            track_texts.append(anth.split(".")[1])
        if or_id and source != "paperlists":
            sid = or_id
        # "10.1007/978-3-031-19830-4 _6": a space inside a DOI would leave the book's DOI, shared by its chapters
        doi = "".join(obj["doi"].split()) if isinstance(obj.get("doi"), str) else ""
        year = file_year if file_year is not None else _year_of(obj, **where)
        venue = file_venue
        skip = ""
        if findings_file:
            venue = venue_code(str(obj.get("volume", "")))
            track_texts.insert(0, "findings")
        if venue is None and not findings_file:
            skip = f"unknown venue '{prefix}' (from the file name)"
        elif year is None:
            skip = "no year in the file name or the record"
        yield ImportedRecord(
            source=source, file=rel, line=line, venue=venue, year=year, title=title,
            abstract=(abstract or "").strip(), authors=authors, source_id=sid, url=url, pdf=pdf,
            track=_track_of(track_texts), main_track=is_main_track(*track_texts), openreview_id=or_id,
            anthology_id=anth,
            priority=fmt.priority, title_mangled=fmt.title_mangled, confirm_only=fmt.confirm_only,
            skip=skip, id_keys=identifier_keys(doi=doi, url=url, pdf=pdf))


def _track_of(texts: list[str]) -> str:
    """The label recorded as ``track``: the first ancillary text if any, else the first text."""
    for t in texts:
        if not is_main_track(t):
            return track_label(t) if len(t) <= 40 else ancillary_keyword(t)
    return track_label(texts[0]) if texts else ""


def list_source_files(proceedings_dir: Path) -> list[Path]:
    """Every paper-list file under ``proceedings/`` (``<folder>/*.jsonl[.gz]``), sorted."""
    files = [p for p in proceedings_dir.glob("*/*") if p.is_file()
             and (p.name.endswith(".jsonl.gz") or p.name.endswith(".jsonl"))]
    return sorted(files, key=lambda p: (p.parent.name != "paperlists", str(p)))


# ---------------------------------------------------------------- collector output (mustcite collect)

#: source name prefix of records read from ``mustcite collect`` output (``collected-pmlr``, ...)
COLLECTED_PREFIX = "collected"
#: official proceedings sites rank before every paper list when duplicates are merged
COLLECTED_PRIORITY = 5


def list_collected_files(records_dir: Path) -> list[Path]:
    """The collector's record files (``<VENUE>_<year>.jsonl[.gz]``) under ``records_dir``, sorted."""
    return sorted(p for p in Path(records_dir).glob("*") if p.is_file()
                  and (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.gz")))


def import_collected(path: Path, base_dir: Path | None = None) -> Iterator[ImportedRecord]:
    """Yield one :class:`ImportedRecord` per line of a ``mustcite collect`` records file
    (``collected_record.schema.json``). Bad lines raise :class:`MustciteError` naming file and line."""
    path = Path(path)
    try:
        rel = str(path.relative_to(base_dir)) if base_dir else str(path)
    except ValueError:
        rel = str(path)
    for line, obj in iter_jsonl(path):
        where = dict(path=rel, line=line)
        title = obj.get("title")
        if not isinstance(title, str) or not title.strip():
            raise MustciteError("record has no title", field="title", **where)
        venue = venue_code(obj.get("venue") if isinstance(obj.get("venue"), str) else None)
        year = obj.get("year")
        if isinstance(year, bool) or not isinstance(year, int):
            raise MustciteError(f"year must be an integer, got {year!r}", field="year", **where)
        for k in ("abstract", "pdf", "url", "source_id", "track", "site", "openreview_id", "anthology_id"):
            if obj.get(k) is not None and not isinstance(obj.get(k), str):
                raise MustciteError(f"expected a string, got {type(obj[k]).__name__}", field=k, **where)
        main = obj.get("main_track", True)
        if not isinstance(main, bool):
            raise MustciteError("main_track must be true or false", field="main_track", **where)
        site = obj.get("site") or "site"
        yield ImportedRecord(
            source=f"{COLLECTED_PREFIX}-{site}", file=rel, line=line, venue=venue, year=year,
            title=" ".join(title.split()), abstract=(obj.get("abstract") or "").strip(),
            authors=parse_authors(obj.get("authors"), **where), source_id=obj.get("source_id") or "",
            url=obj.get("url") or "", pdf=obj.get("pdf") or "", track=track_label(obj.get("track") or ""),
            main_track=main, openreview_id=obj.get("openreview_id") or "",
            anthology_id=obj.get("anthology_id") or "", priority=COLLECTED_PRIORITY,
            skip="" if venue else f"unknown venue {obj.get('venue')!r}")
