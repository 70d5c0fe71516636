"""Per citing paper: the references that link to no corpus paper, as :class:`Mention` records
(identifiers, a title that can identify a work, first author, labels). A pure function of one
reference file (:func:`read_paper`), mapped over a folder by :func:`mustcite.extract.works.read_folders`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...corpus.records import normalize_title
from ...io import read_json
from ..link import clean_title, identifier_keys, looks_like_authors, recover_title
from .names import paper_names, surname

#: a title identifies a work alone only with at least this many characters and words
MIN_TITLE_CHARS = 12
MIN_TITLE_WORDS = 2
#: titles that name no work ("Technical report", "arXiv preprint", "Online")
GENERIC_TITLES = frozenset({
    "technical report", "tech rep", "arxiv preprint", "in proceedings", "personal communication",
    "unpublished manuscript", "in preparation", "under review", "supplementary material",
    "available online", "github repository", "online", "website", "web page", "software", "dataset",
})

_URL = re.compile(r"https?://[^\s<>\"{}]+", re.I)
_ARXIV_TEXT = re.compile(r"arxiv(?:\s*preprint)?\s*(?:arxiv)?\s*[:/]?\s*"
                         r"((?:\d{4}\.\d{4,5})|(?:[a-z\-]+(?:\.[a-z]{2})?/\d{7}))",
                         re.I)
_DOI_TEXT = re.compile(r"(?:doi\s*:?\s*|doi\.org/)(10\.\d{4,9}/[^\s\"<>{},;\[\]*]+)", re.I)
_NOT_A_TITLE = re.compile(r"\b(?:arxiv \d{4}|arxiv abs|arxiv org|url https?|https? |doi org|preprint arxiv|"
                          r"arxiv preprint|arxiv cs)\b|^(?:url|https?|doi|in proceedings|in advances|proceedings of)\b")
_GITHUB = re.compile(r"github\.com/([A-Za-z0-9_.\-]+/[A-Za-z0-9_\-]+)", re.I)
_CITED_BY = re.compile(r"\s*Cited by:.*$", re.S)



# ---------------------------------------------------------------------------------- records


@dataclass
class Mention:
    """One reference, in one citing paper, that links to no corpus paper."""

    citing: str                # the citing paper's id (its reference file's stem)
    citing_year: int | None
    target: int                # its position in the citing paper's reference list
    title: str
    norm: str                  # normalised title (empty: the title identifies nothing alone)
    year: int | None
    surname: str               # the first author's surname, normalised ("" when unknown)
    authors: list[str]
    venue: str
    keys: list[str]            # identifier keys (doi:, arxiv:, acl:, openreview:, nips:, pmlr:, url:)
    raw: str
    contexts: int              # how many contexts cite it in the body
    mentions: int
    must_cite: bool | None     # from the labels stage (None: the paper is not labelled)
    type1: int | None = None
    type2: int | None = None
    type3: int | None = None


# ------------------------------------------------------------------------------- per paper


def _identifiers(ref: dict[str, Any]) -> list[str]:
    raw = ref.get("raw") or ""
    urls = _URL.findall(raw)
    doi = ref.get("doi") or next(iter(_DOI_TEXT.findall(raw)), None)
    arxiv = ref.get("arxiv") or next(iter(_ARXIV_TEXT.findall(raw)), None)
    keys: list[str] = []
    for u in [ref.get("url"), *urls] or [None]:
        keys += identifier_keys(doi=doi, arxiv=arxiv, url=u)
    if not keys:
        keys = identifier_keys(doi=doi, arxiv=arxiv)
    keys = [re.sub(r"[\])*.,;]+$", "", k.split("](")[0]) for k in keys]
    for u in [ref.get("url"), *urls]:        # a repository identifies software
        m = _GITHUB.search(u or "")
        if m:
            keys.append(f"github:{m.group(1).lower()}")
    return list(dict.fromkeys(keys))


def title_key(title: str) -> str:
    """The normalised title when it can identify a work alone, else ``""``."""
    if looks_like_authors(title):
        return ""
    norm = normalize_title(clean_title(title))
    if _NOT_A_TITLE.search(norm):                       # "arXiv preprint arXiv:1412.6980", "URL http://..."
        return ""
    if len(norm) < MIN_TITLE_CHARS or len(norm.split()) < MIN_TITLE_WORDS or norm in GENERIC_TITLES:
        return ""
    return norm


def venue_of(ref: dict[str, Any]) -> str:
    """The venue a reference names: its ``venue`` field, else the text after its title in ``raw``."""
    if ref.get("venue"):
        return str(ref["venue"]).strip()
    raw = _CITED_BY.sub("", ref.get("raw") or "")
    title = (ref.get("title") or "").strip()
    i = raw.lower().find(title.lower()) if title else -1
    if i < 0:
        return ""
    rest = raw[i + len(title):]
    rest = re.sub(r"^[\s.,:;\"'”]+", "", rest)
    rest = re.sub(r"^(?:In:?|In Proceedings of)\s+", "", rest)
    rest = re.split(r"(?:,\s*(?:pp\.|vol\.|volume|pages)|\s+pp\.|\(\d|\.\s|,\s*(?:19|20)\d\d|https?://)", rest)[0]
    rest = re.sub(r"\d+\s*$", "", rest.replace("*", "").replace("_", " ")).strip(" .,;:")
    return " ".join(rest.split())[:200]


def unlinked_mentions(path: str | Path, citing_year: int | None = None, *,
                      refs: list[dict[str, Any]] | None = None) -> list[Mention]:
    """The references of one reference file (a labelled copy or the extraction's) that link to no
    corpus paper (``refs``: the file's content, when already read). A pure function of the file."""
    path = Path(path)
    if refs is None:
        refs = read_json(path)
    citing = path.name[: -len(".json")]
    out = []
    for ref in refs if isinstance(refs, list) else []:
        if not isinstance(ref, dict) or ref.get("paper_id"):
            continue
        title = recover_title(str(ref.get("title") or "").strip(), ref.get("raw") or "")
        authors = [str(a) for a in (ref.get("authors") or []) if a]
        year = ref.get("year")
        year = int(year) if isinstance(year, int) and 1800 < year < 2100 else None
        labelled = "must_cite" in ref
        out.append(Mention(
            citing=citing, citing_year=citing_year, target=int(ref.get("target") or 0),
            title=clean_title(title), norm=title_key(title), year=year,
            surname=surname(authors[0]) if authors else "", authors=authors, venue=venue_of(ref),
            keys=_identifiers(ref), raw=_CITED_BY.sub("", ref.get("raw") or "")[:600],
            contexts=len(ref.get("contexts") or []), mentions=int(ref.get("mentions") or 0),
            must_cite=bool(ref["must_cite"]) if labelled else None,
            type1=ref.get("type1"), type2=ref.get("type2"), type3=ref.get("type3")))
    return out


@dataclass
class PaperRefs:
    """One citing paper's references: its unlinked ones, and counts of all of them."""

    paper: str
    mentions: list[Mention]
    references: int
    linked: int
    must_cite: int            # labelled must-cite references (0 when the paper is not labelled)
    must_cite_linked: int
    labelled: bool
    #: the names its citation contexts give its references: (name, reference position, the linked
    #: corpus paper or None)
    names: list[tuple[str, int, str | None]] = field(default_factory=list)
    year: int | None = None


def read_paper(args: tuple[str, int | None]) -> PaperRefs:
    """:func:`unlinked_mentions` of one reference file with its reference counts (pure)."""
    path, year = args
    refs = read_json(path)
    refs = [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []
    linked = {int(r.get("target") or 0): r.get("paper_id") or None for r in refs}
    return PaperRefs(
        paper=Path(path).name[: -len(".json")], mentions=unlinked_mentions(path, year, refs=refs),
        references=len(refs), linked=sum(bool(r.get("paper_id")) for r in refs),
        must_cite=sum(bool(r.get("must_cite")) for r in refs),
        must_cite_linked=sum(bool(r.get("must_cite")) and bool(r.get("paper_id")) for r in refs),
        labelled=any("must_cite" in r for r in refs),
        names=[(u.name, u.target, linked.get(u.target)) for u in paper_names(refs)], year=year)


