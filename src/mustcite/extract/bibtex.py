"""Bibliography entries of a LaTeX project: ``.bib`` files (bibtexparser v2) and ``.bbl`` files
(BibTeX/natbib ``\\bibitem`` lists, also inline ``thebibliography``, and biblatex ``\\entry`` lists).

Every entry becomes a :class:`BibEntry` with LaTeX decoded (pylatexenc): title, authors ("Given
Family"), year, venue, DOI, arXiv id (``eprint`` with ``archivePrefix = arXiv``, an arxiv.org URL,
``journal = {arXiv preprint arXiv:...}`` or DBLP's ``CoRR``/``abs/...``), URL and key. Blocks the
parser cannot read come back as messages naming the file and line; nothing here raises on bad
input.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache

from .link import normalize_arxiv, normalize_doi
from .references import find_year, parse_reference_string, surname


@dataclass
class BibEntry:
    key: str
    title: str = ""
    authors: list[str] = field(default_factory=list)   # "Ashish Vaswani"
    year: int | None = None
    venue: str = ""
    doi: str | None = None
    arxiv: str | None = None
    url: str | None = None
    raw: str = ""                                       # a one-line rendering of the entry
    source: str = ""                                    # "refs.bib:12"
    others: bool = False                                # "and others" in the author list

    def label(self) -> str:
        """An author-year label: "Vaswani et al., 2017"; the key when there are no authors."""
        if not self.authors:
            return f"{self.key}, {self.year}" if self.year and not self.key[:1].isdigit() else self.key
        names = [surname(a) for a in self.authors]
        if len(names) == 1 and not self.others:
            who = names[0]
        elif len(names) == 2 and not self.others:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        return f"{who}, {self.year}" if self.year else who


@lru_cache(maxsize=1)
def _converter():
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text")


LATEX_PIECE = 20_000      # pylatexenc is quadratic in a long run of text: longer LaTeX goes in pieces
_SPACE = re.compile(r"\s")


def latex_pieces(latex: str, size: int = LATEX_PIECE) -> list[str]:
    """``latex`` cut into pieces of about ``size`` characters (one piece when shorter), each cut at
    white space outside braces and ``$...$`` where one comes within ``4 * size`` characters (else at
    the first white space, else anywhere); linear in the text. pylatexenc copies the text it has
    read so far for each token of a run of plain text, so one long piece costs quadratic time."""
    pieces, start, n = [], 0, len(latex)
    while n - start > size:
        k = start + size
        depth = (latex.count("{", start, k) - latex.count("\\{", start, k)
                 - latex.count("}", start, k) + latex.count("\\}", start, k))
        dollars = latex.count("$", start, k) - latex.count("\\$", start, k)
        cut, first, prev = None, None, k
        while True:
            w = _SPACE.search(latex, prev, min(n, start + 4 * size))
            if w is None:
                break
            i = w.start()
            depth += (latex.count("{", prev, i) - latex.count("\\{", prev, i)
                      - latex.count("}", prev, i) + latex.count("\\}", prev, i))
            dollars += latex.count("$", prev, i) - latex.count("\\$", prev, i)
            first = i if first is None else first
            if depth <= 0 and dollars % 2 == 0:
                cut = i
                break
            prev = i + 1
        cut = cut if cut is not None else first if first is not None else k
        pieces.append(latex[start:cut])
        start = cut
    pieces.append(latex[start:])
    return pieces


def decode_latex(value: str) -> str:
    """LaTeX field text -> plain Unicode (accents, ``\\&``, braces); white space collapsed."""
    value = value or ""
    if "\\" in value or "{" in value or "~" in value or "$" in value:
        try:
            value = " ".join(_converter().latex_to_text(p) for p in latex_pieces(value))
        except Exception:  # pylatexenc is tolerant, but never let a field break a reading
            value = re.sub(r"\\[a-zA-Z]+\*?|[{}]", "", value)
    return re.sub(r"\s+", " ", value).strip()


# "and" between names; tried at the start of a white-space run only, so a long run costs linear time
_AUTHOR_TOKENS = re.compile(r"(\{|\}|(?<!\s)\s+and\s+)")


def split_authors(value: str) -> tuple[list[str], bool]:
    """BibTeX ``author`` field -> (["Given Family", ...], had "and others")."""
    parts, depth, cur = [], 0, []
    tokens = _AUTHOR_TOKENS.split(value or "")
    for t in tokens:
        if t == "{":
            depth += 1
        elif t == "}":
            depth = max(0, depth - 1)
        if depth == 0 and t and t[0].isspace() and t[-1].isspace() and t.strip() == "and":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(t or "")
    parts.append("".join(cur))
    names, others = [], False
    for p in parts:
        p = decode_latex(p)
        if not p:
            continue
        if p.lower() in ("others", "et al.", "et al"):
            others = True
            continue
        bits = [b.strip() for b in p.split(",")]
        if len(bits) == 3:                    # "von Last, Jr, First"
            p = f"{bits[2]} {bits[0]} {bits[1]}"
        elif len(bits) == 2:
            p = f"{bits[1]} {bits[0]}"
        names.append(re.sub(r"\s+", " ", p).strip())
    return names, others


def _year(fields: dict[str, str]) -> int | None:
    for k in ("year", "date", "eventdate"):
        m = re.search(r"(?<!\d)(1[5-9]\d\d|2\d\d\d)(?!\d)", fields.get(k, ""))
        if m:
            return int(m.group(1))
    return None


def _arxiv(fields: dict[str, str]) -> str | None:
    prefix = (fields.get("archiveprefix") or fields.get("eprinttype") or "").lower()
    if fields.get("eprint") and (prefix == "arxiv" or not prefix):
        a = normalize_arxiv(fields["eprint"])
        if a:
            return a
    for k in ("journal", "journaltitle", "booktitle", "note", "howpublished", "volume"):
        v = fields.get(k, "")
        if re.search(r"arxiv|corr|abs/", v, re.I) or (k == "volume" and "corr" in fields.get("journal", "").lower()):
            a = normalize_arxiv(v)
            if a:
                return a
    for k in ("url", "doi", "pdf"):
        if "arxiv" in fields.get(k, "").lower():
            a = normalize_arxiv(fields[k])
            if a:
                return a
    return None


def entry_from_fields(key: str, fields: dict[str, str], source: str = "") -> BibEntry:
    """A :class:`BibEntry` from raw (LaTeX) field values; field names in any case."""
    f = {k.lower(): (v if isinstance(v, str) else str(v)) for k, v in fields.items()}
    authors, others = split_authors(f.get("author") or f.get("editor") or "")
    venue = decode_latex(next((f[k] for k in ("booktitle", "journal", "journaltitle", "eventtitle",
                                              "publisher", "school", "institution", "howpublished")
                               if f.get(k)), ""))
    title = decode_latex(f.get("title", "")).rstrip(".")
    url = (f.get("url") or "").strip() or None
    e = BibEntry(key=key, title=title, authors=authors, year=_year(f), venue=venue,
                 doi=normalize_doi(f.get("doi")), arxiv=_arxiv(f), url=url, source=source, others=others)
    if e.doi is None and url and "doi.org/" in url.lower():
        e.doi = normalize_doi(url)
    who = ", ".join(authors) + (" et al." if others else "")
    e.raw = ". ".join(x.rstrip(".") for x in (who, title, venue, str(e.year or "")) if x) + "."
    return e


# ---- .bib ------------------------------------------------------------------------------------

def parse_bib(text: str, name: str) -> tuple[list[BibEntry], list[str]]:
    """Entries of one ``.bib`` file's text, and messages for blocks that failed (with line)."""
    import bibtexparser

    log = logging.getLogger("bibtexparser")
    level = log.level
    log.setLevel(logging.ERROR)          # failed blocks are reported as messages instead
    try:
        lib = bibtexparser.parse_string(text)
    except Exception as exc:  # the parser should not raise; a bug there must not stop an audit
        return [], [f"{name}: cannot parse the BibTeX file ({type(exc).__name__}: {exc})"]
    finally:
        log.setLevel(level)
    entries, messages = [], []
    for e in lib.entries:
        fields = {f.key: f.value for f in e.fields}
        entries.append(entry_from_fields(e.key, fields, f"{name}:{e.start_line + 1}"))
    for b in lib.failed_blocks:
        kind = type(b).__name__
        line = getattr(b, "start_line", 0) + 1
        if kind == "DuplicateBlockKeyBlock":
            messages.append(f"{name}:{line}: duplicate BibTeX key {getattr(b, 'key', '?')!r}; the first entry is used")
        elif kind == "DuplicateFieldKeyBlock":
            messages.append(f"{name}:{line}: an entry repeats a field; the entry is skipped")
        else:
            head = (b.raw or "").strip().split("\n")[0][:60]
            messages.append(f"{name}:{line}: malformed BibTeX entry skipped ({head!r})")
    return entries, messages


# ---- .bbl and thebibliography ------------------------------------------------------------------

# keys and labels are bounded: an unclosed "{" must not make every later item scan to the end
_BIBITEM = re.compile(r"\\bibitem\s*(?:\[(?P<label>(?:[^\[\]{}]|\{[^{}]{0,1000}\}){0,1000})\])?"
                      r"\s*\{(?P<key>[^}]{0,1000})\}")
_BIBLATEX_HEAD = re.compile(r"\\entry\{(?P<key>[^}]{0,1000})\}\{(?P<type>[^}]{0,100})\}\{[^}]{0,1000}\}")
_VERB_HEAD = re.compile(r"\\verb\{(\w+)\}\s*\\verb\s?")
_NAME_HEAD = re.compile(r"\\name\{(author|editor)\}\{\d+\}\{[^}]{0,1000}\}\{")
_BRACE = re.compile(r"(?<!\\)[{}]")      # a brace not preceded by a backslash


def _blocks(text: str, head: re.Pattern, end: str):
    """``(head match, body)`` of each ``head ... end`` block (as ``head(.*?)end`` with re.S, in one
    pass: once no ``end`` follows a head, no later head can have one either)."""
    pos = 0
    while True:
        m = head.search(text, pos)
        if m is None:
            return
        e = text.find(end, m.end())
        if e < 0:
            return
        yield m, text[m.end():e]
        pos = e + len(end)


class _Braces:
    """Where each ``{`` of ``text`` closes, with :func:`_braced`'s rules, found in one pass."""

    def __init__(self, text: str):
        self.text, self.close = text, {}
        stack = []
        for m in _BRACE.finditer(text):
            if m.group() == "{":
                stack.append(m.start())
            elif stack:
                self.close[stack.pop()] = m.start()
        self.opened = set(stack)                  # never closed

    def braced(self, start: int) -> tuple[str, int] | None:
        if start in self.close:
            i = self.close[start]
            return self.text[start + 1:i], i + 1
        return None if start in self.opened else _braced(self.text, start)


def _braced(text: str, start: int) -> tuple[str, int] | None:
    """The content of the brace group opening at ``text[start]`` and the index after it."""
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "\\":
            continue
        if c == "{" and (i == 0 or text[i - 1] != "\\"):
            depth += 1
        elif c == "}" and text[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
    return None


def _biblatex_fields(body: str) -> dict[str, str]:
    f: dict[str, str] = {}
    braces = _Braces(body)
    for m in re.finditer(r"\\(?:field|range)\{(\w+)\}", body):
        if m.group(1).lower() in f:
            continue
        got = braces.braced(m.end())
        if got:
            f[m.group(1).lower()] = got[0]
    for m, value in _blocks(body, _VERB_HEAD, "\\endverb"):
        f.setdefault(m.group(1).lower(), value.strip())
    for m in _NAME_HEAD.finditer(body):
        if m.group(1) in f:
            continue
        got = braces.braced(m.end() - 1)
        if not got:
            continue
        names, people, close = [], got[0], -1
        for nm in re.finditer(r"family=\{((?:[^{}]|\{[^{}]*\})*)\}", people):
            if close is not None and close < nm.end():     # the "}}" ending this name (found once each)
                close = people.find("}}", nm.end())
                close = None if close < 0 else close
            stop = len(people) if close is None else close + 1
            seg = people[nm.start():min(stop, nm.end() + 2000)]
            given = re.search(r"given=\{((?:[^{}]|\{[^{}]*\})*)\}", seg)
            names.append(f"{nm.group(1)}, {given.group(1)}" if given else nm.group(1))
        f[m.group(1)] = " and ".join(names)
    if "moreauthor" in body and "author" in f:
        f["author"] += " and others"
    return f


def _bibitem_entry(key: str, label: str, body: str, source: str) -> BibEntry:
    blocks = [b.strip() for b in re.split(r"\\newblock\b", body)]
    plain = [decode_latex(b) for b in blocks]
    text = " ".join(p for p in plain if p)
    if len(plain) >= 2 and plain[1]:
        authors_s, title = plain[0].rstrip(". "), plain[1].rstrip(". ")
        authors = [a.strip() for a in re.split(r",\s*(?:and\s+)?|\s+and\s+", authors_s) if a.strip()]
        others = bool(re.search(r"et al\.?$", authors_s))
        authors = [a for a in authors if not re.fullmatch(r"et al\.?", a)]
        year = find_year(text)
    else:
        authors, title, year = parse_reference_string(text)
        others = False
    if year is None:
        m = re.search(r"(?:1[89]|20)\d\d", label or "")
        year = int(m.group(0)) if m else None
    url = None
    m = re.search(r"\\url\{([^}]{0,2000})\}|\\href\{([^}]{0,2000})\}", body)
    if m:
        url = m.group(1) or m.group(2)
    e = BibEntry(key=key, title=title, authors=authors, year=year, url=url, raw=text, source=source,
                 others=others, doi=normalize_doi(body) if re.search(r"doi", body, re.I) else None,
                 arxiv=normalize_arxiv(text) if re.search(r"arxiv|corr", text, re.I) else None)
    return e


def parse_bbl(text: str, name: str) -> tuple[list[BibEntry], list[str]]:
    """Entries of a ``.bbl`` file (or a ``thebibliography`` environment): BibTeX/natbib
    ``\\bibitem[...]{key}`` items or biblatex ``\\entry{key}{type}{}...\\endentry`` records."""
    entries: list[BibEntry] = []
    messages: list[str] = []
    line, at = 1, 0                       # line numbers counted on as the items come (not from the start each time)

    def line_of(i: int) -> int:
        nonlocal line, at
        line += text.count("\n", at, i)
        at = i
        return line

    if "\\entry{" in text and "\\endentry" in text:
        for m, body in _blocks(text, _BIBLATEX_HEAD, "\\endentry"):
            entries.append(entry_from_fields(m.group("key").strip(), _biblatex_fields(body),
                                             f"{name}:{line_of(m.start())}"))
        return entries, messages
    items = list(_BIBITEM.finditer(text))
    for i, m in enumerate(items):
        end = items[i + 1].start() if i + 1 < len(items) else len(text)
        body = text[m.end():end]
        body = re.split(r"\\end\{thebibliography\}", body)[0]
        ln = line_of(m.start())
        key = m.group("key").strip()
        if not key:
            messages.append(f"{name}:{ln}: a \\bibitem without a key; skipped")
            continue
        entries.append(_bibitem_entry(key, m.group("label") or "", body, f"{name}:{ln}"))
    return entries, messages
