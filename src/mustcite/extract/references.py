"""Reference-list entries: split a reference section into entries and parse each one.

Handles Nougat's entry forms: ``* [12] Authors. Title. Venue, 2020.``, ``* (12) ...``,
``* [DKS17] ...`` (alpha tags), ``* Smith et al. (2020) Authors. Title...`` and
``* Smith and Lee [2020a] ...`` (natbib keys Nougat writes in front of the entry), plus plain
``* Author, A. (2020). Title...``. :func:`parse_reference_string` turns one raw string into
``(authors, title, year)``; it is shared by the TEI and PDF paths.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

# --- labels in front of an entry ----------------------------------------------------------
_NUM_LABEL = re.compile(r"^\s*[\[(]\s*((?!(?:1[89]|20)\d\d)[0-9lIO]{1,4})\s*[\])]\s*")
_ALPHA_LABEL = re.compile(r"^\s*\[\s*([A-Za-z][^\[\]\s]{0,30}?\d{2}[a-z]?)\s*\]\s*")
# "Smith et al. (2020a)", "Smith and Lee [2020]", "van den Oord et al. (2016b)", "OpenAI (2023)"
_KEY_LABEL = re.compile(
    r"^\s*(?P<names>[^\[\]()]{1,120}?)\s*[\[(](?P<year>(?:1[89]|20)\d{2}[a-z]?|n\.\s?d\.|in press|forthcoming)[\])]\s*")
_YEAR = re.compile(r"(?<![\d./:-])((?:1[89]|20)\d{2})(?![\d])([a-z])?")
_PAREN_YEAR = re.compile(r"\(((?:1[89]|20)\d{2})[a-z]?\)")
_ACL_YEAR = re.compile(r"\.\s+((?:1[89]|20)\d{2})[a-z]?\.\s+")
_TAG_MATH = re.compile(r"\\\(\s*\{\}\s*\^\s*\{\s*([^{}]*)\s*\}\s*\\\)")
_MD = re.compile(r"[_*`]+")


@dataclass
class RefEntry:
    """One entry of a reference list as found in the text."""
    raw: str                                  # the entry text, label included
    position: int                             # 1-based position in the raw list
    number: int | None = None                 # its own numeric label "[12]" -> 12
    tag: str | None = None                    # alpha tag "[DKS17]" -> "DKS17"
    key_names: str | None = None              # natbib key written by Nougat: "Smith et al."
    key_year: str | None = None               # "2020a"
    authors: list[str] = field(default_factory=list)
    title: str = ""
    year: int | None = None
    ocr_repaired_label: bool = False


def normalize_tag(tag: str) -> str:
    """``ACG\\({}^{+}\\)16`` -> ``ACG+16``; strips spaces and markup."""
    tag = _TAG_MATH.sub(lambda m: m.group(1).strip(), tag)
    return re.sub(r"[^A-Za-z0-9+]", "", tag)


def fold(s: str) -> str:
    """Lower-case ASCII letters only (accents removed), for surname comparison."""
    s = unicodedata.normalize("NFKD", s)
    return re.sub(r"[^a-z]", "", s.encode("ascii", "ignore").decode().lower())


def ocr_digits(token: str) -> str | None:
    """Map OCR look-alikes to digits: 'l0' -> '10', '1O' -> '10'; None unless all chars map."""
    table = str.maketrans({"l": "1", "I": "1", "i": "1", "|": "1", "O": "0", "o": "0"})
    out = token.translate(table)
    return out if out.isdigit() else None


def split_label(raw: str) -> tuple[dict, str]:
    """Split the leading label off an entry; returns (label fields, rest)."""
    s = raw.strip()
    if s.startswith("* ") or s.startswith("- "):
        s = s[2:]
    m = _NUM_LABEL.match(s)
    if m:
        tok = m.group(1)
        if tok.isdigit():
            return {"number": int(tok)}, s[m.end():]
        fixed = ocr_digits(tok)
        if fixed is not None:
            return {"number": int(fixed), "ocr_repaired_label": True}, s[m.end():]
    m = _ALPHA_LABEL.match(s)
    if m and re.search(r"[A-Z]", m.group(1)[:1]):
        return {"tag": normalize_tag(m.group(1))}, s[m.end():]
    m = _KEY_LABEL.match(s)
    if m and _looks_like_key_names(m.group("names")):
        return {"key_names": m.group("names").strip(), "key_year": m.group("year")}, s[m.end():]
    return {}, s


def _looks_like_key_names(names: str) -> bool:
    names = names.strip()
    if not names or len(names) > 100 or names.endswith((",", ".")) and not names.endswith("al."):
        return False
    if "," in names and "et al" not in names:
        return False                          # "Smith, J. (2020)" is an APA author list, not a key
    return names[0].isupper() or names[:3] in ("van", "von", "de ", "der", "le ", "da ")


def find_year(s: str) -> int | None:
    """The publication year of a reference string, or None when no four-digit year is there."""
    m = _PAREN_YEAR.search(s)
    if m:
        return int(m.group(1))
    cands = []
    for m in _YEAR.finditer(s):
        before = s[max(0, m.start() - 6):m.start()]
        after = s[m.end():m.end() + 2]
        if "arxiv" in before.lower() or re.match(r"[-\u2013]\d", after) or re.match(r"\.\d", after):
            continue
        y = int(m.group(1))
        if 1850 <= y <= 2030:
            cands.append(y)
    return cands[-1] if cands else None


_SEG_END = re.compile(r"[.?!]\s+")


def _segments(s: str) -> list[str]:
    """Split at '. ' boundaries that do not follow a single initial or 'et al'."""
    segs, start = [], 0
    for m in _SEG_END.finditer(s):
        word = s[max(0, m.start() - 4):m.start()]
        w = re.split(r"[\s,]", word)[-1]
        if s[m.start()] == "." and (re.fullmatch(r"[A-Z]|[A-Z]\.[A-Z]|-[A-Z]|Jr|St", w) or
                                    (w.endswith("al") and s[m.end():m.end() + 1].islower())):
            continue
        segs.append(s[start:m.start() + 1].strip())
        start = m.end()
    if start < len(s):
        segs.append(s[start:].strip())
    return [x for x in segs if x]


_SURNAME_FIRST = re.compile(r"^(?![A-Z]\.)[A-Z][^\s,]*(?:[ -][A-Za-z][^\s,]*){0,2}, [A-Z][a-z]?(?:\.|$)")
_SF_NAME = r"(?![A-Z]\.)[A-Z][^\s,]*(?:[ -][A-Za-z][^\s,]*){0,2}, [A-Z][a-z]?\.(?:[ -]?[A-Z]\.)*"
# a whole "Surname, I., Surname, I. J., and Surname, I." author list at the start of a string
_SF_LIST = re.compile(r"^(?:(?:and |& )?" + _SF_NAME + r"(?:,\s*|\s+(?=and |& )))*(?:and |& )?"
                      + _SF_NAME + r"(?:,? et al\.)?")


def split_authors(s: str) -> list[str]:
    """Split an author string into names ('Smith, J.' or 'John Smith' as written)."""
    s = _MD.sub("", s).strip().rstrip(".").strip()
    s = re.sub(r",?\s*(?:et al\.?|and others)$", "", s)
    if not s:
        return []
    if _SURNAME_FIRST.match(s):
        parts = re.split(r"(?<=\.),\s*(?:and\s+|&\s*)?|\s+(?:and|&)\s+", s)
    else:
        parts = re.split(r",\s*(?:and\s+|&\s*)?|\s+(?:and|&)\s+", s)
    return [p.strip(" ,.") for p in parts if p.strip(" ,.") and len(p) < 80]


def surname(name: str) -> str:
    """Family name of 'Smith, J.' / 'John Smith' / 'J. van den Smith' (as written, not folded)."""
    name = name.strip()
    if "," in name:
        return name.split(",")[0].strip()
    toks = [t for t in name.split() if not re.fullmatch(r"[A-Z]\.?(?:-?[A-Z]\.?)*|Jr\.?|III|II", t)]
    return toks[-1] if toks else name


def parse_reference_string(raw: str) -> tuple[list[str], str, int | None]:
    """Parse a reference string into ``(authors, title, year)``; year None when none is found."""
    _, s = split_label(raw)
    s = re.sub(r"\[([^\]]*)\]\((?:https?://)?[^)]*\)", r"\1", s)   # markdown links
    s = re.sub(r"\s+", " ", s).strip()
    year = find_year(s)
    authors_s, rest = "", s
    m = _PAREN_YEAR.search(s)
    if m and m.start() < 0.6 * len(s) and m.start() > 0:
        authors_s, rest = s[:m.start()], s[m.end():].lstrip(" .,:")
    else:
        m = _ACL_YEAR.search(s)
        if m and m.start() < 0.6 * len(s):
            authors_s, rest = s[:m.start()], s[m.end():]
        elif (m := _SF_LIST.match(s)) and m.end() < len(s):
            authors_s, rest = s[:m.end()], s[m.end():].lstrip(" .,:")
        else:
            segs = _segments(s)
            if len(segs) >= 2:
                authors_s, rest = segs[0], " ".join(segs[1:])
            else:
                rest = s
    title_segs = _segments(rest)
    while len(title_segs) > 1 and re.fullmatch(r"\(?(?:1[89]|20)\d\d[a-z]?\)?\.?", title_segs[0]):
        title_segs = title_segs[1:]          # ACL style with a long author list: "... Giles. 2014. Title."
    title = title_segs[0] if title_segs else rest
    title = _MD.sub("", title).strip().rstrip(".,").strip()
    if title.lower().startswith(("in ", "arxiv")) and len(title_segs) == 1:
        title = ""
    return split_authors(authors_s), title, year


# --- splitting a reference section ---------------------------------------------------------
_RUN_SPLIT = re.compile(r"(?<=[.\s])\s*(?=(?:\*\s)?\[\d{1,3}\]\s*[A-Z])")


_LABEL_ONLY = re.compile(r"^[\[(]\s*[0-9lIO]{1,3}\s*[\])]$")


def split_entries(lines: list[str]) -> list[str]:
    """Reference-section lines -> raw entry strings; splits entries Nougat ran together."""
    entries: list[str] = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if line.startswith(("* ", "- ")) or _NUM_LABEL.match(line) or not entries:
            if line.startswith(("* ", "- ")):
                line = line[2:].strip()
            pieces = [p.strip() for p in _RUN_SPLIT.split(line) if p.strip(" *")]
            if entries and _LABEL_ONLY.match(entries[-1]):
                entries[-1] = entries[-1] + " " + pieces.pop(0) if pieces else entries[-1]
            entries.extend(pieces)
        else:
            entries.append(line)
    return entries


def parse_entries(raw_entries: list[str]) -> list[RefEntry]:
    """Parse raw entry strings into :class:`RefEntry` records (labels, authors, title, year)."""
    out = []
    for i, raw in enumerate(raw_entries, 1):
        label, _ = split_label(raw)
        authors, title, year = parse_reference_string(raw)
        e = RefEntry(raw=raw.strip().removeprefix("* ").strip(), position=i, authors=authors,
                     title=title, year=year, **label)
        if e.year is None and e.key_year and e.key_year[:4].isdigit():
            e.year = int(e.key_year[:4])
        out.append(e)
    return out
