"""Bibliography entries of a LaTeX project: ``.bib`` files (bibtexparser v2) and ``.bbl`` files
(BibTeX/natbib ``\\bibitem`` lists, also inline ``thebibliography``, and biblatex ``\\entry`` lists).

Every entry becomes a :class:`BibEntry` with LaTeX decoded (pylatexenc): title, authors ("Given
Family"), year, venue, DOI, arXiv id (``eprint`` with ``archivePrefix = arXiv``, an arxiv.org URL,
``journal = {arXiv preprint arXiv:...}`` or DBLP's ``CoRR``/``abs/...``), URL and key. Blocks the
parser cannot read come back as messages naming the file and line (or, with ``keep_unreadable``,
as entries marked :attr:`BibEntry.unreadable`, in input order); nothing here raises on bad input.

A ``.bib`` value is read as BibTeX reads it: ``#`` joins quoted and braced parts, ``@string``
names (any case; a definition may use others, :data:`MAX_STRING_DEPTH` deep, so a cycle ends; a
name defined again holds its new value for the entries after it) and
the month macros (``jan`` ... ``dec``); an entry with ``crossref`` takes the fields it lacks
(booktitle, year, editor, publisher, ...) from its parent in the same file, :data:`MAX_CROSSREF_DEPTH`
parents up; a repeated field keeps its first value, as BibTeX does. An entry with a field over
:data:`MAX_FIELD_CHARS` characters or a title over :data:`MAX_TITLE_WORDS` words is not read.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text

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
    kind: str = ""                                      # the entry type, lower case ("inproceedings")
    volume: int | None = None                           # the ``volume`` number, when it starts with one
    unreadable: str = ""                                # why the block could not be read ("" when read)
    notes: list[str] = field(default_factory=list)      # what the reader noticed (a repeated field)
    #: every field as written (LaTeX kept; @string names and crossref parents resolved), by lower-case name
    fields: dict[str, str] = field(default_factory=dict, repr=False)

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
    return LatexNodes2Text(math_mode="text")


LATEX_PIECE = 20_000      # pylatexenc is quadratic in a long run of text: longer LaTeX goes in pieces
_SPACE = re.compile(r"\s")


_COMMAND_START = re.compile(r"(?<!\\)\\(?=[A-Za-z])")      # where a command's name starts


def _cut_at(latex: str, start: int, k: int, stop: int, at: re.Pattern) -> int | None:
    """The first place from ``k`` (before ``stop``) where ``at`` matches outside braces and
    ``$...$`` (counted from ``start``), else the first where it matches at all, else None."""
    depth = (latex.count("{", start, k) - latex.count("\\{", start, k)
             - latex.count("}", start, k) + latex.count("\\}", start, k))
    dollars = latex.count("$", start, k) - latex.count("\\$", start, k)
    first, prev = None, k
    while True:
        w = at.search(latex, prev, stop)
        if w is None:
            return first
        i = w.start()
        depth += (latex.count("{", prev, i) - latex.count("\\{", prev, i)
                  - latex.count("}", prev, i) + latex.count("\\}", prev, i))
        dollars += latex.count("$", prev, i) - latex.count("\\$", prev, i)
        first = i if first is None else first
        if depth <= 0 and dollars % 2 == 0:
            return i
        prev = i + 1


def latex_pieces(latex: str, size: int = LATEX_PIECE) -> list[str]:
    """``latex`` cut into pieces of about ``size`` characters (one piece when shorter), each cut at
    white space outside braces and ``$...$`` where one comes within ``4 * size`` characters (else at
    the first white space; without white space, before a command the same way; else anywhere);
    linear in the text. pylatexenc copies the text it has read so far for each token of a run of
    plain text, so one long piece costs quadratic time."""
    pieces, start, n = [], 0, len(latex)
    while n - start > size:
        k, stop = start + size, min(n, start + 4 * size)
        cut = _cut_at(latex, start, k, stop, _SPACE)
        if cut is None:
            cut = _cut_at(latex, start, k, stop, _COMMAND_START)
        cut = k if cut is None or cut <= start else cut
        pieces.append(latex[start:cut])
        start = cut
    pieces.append(latex[start:])
    return pieces


# an accent command on one letter: \"o, \" o, \"{o}, \'\i, \v s, \v{s} (the command's backslash not
# itself escaped); each is decoded alone, as pylatexenc decodes it, once per distinct spelling
_LETTER = r"(?:[A-Za-z]|\\[ij](?![A-Za-z]))"
_ACCENT = re.compile(r"(?<!\\)\\(?:[\"'`^~=.][ \t]*(?:" + _LETTER + r"|\{" + _LETTER + r"\})"
                     r"|[uvHckrdb](?:[ \t]+" + _LETTER + r"|[ \t]*\{" + _LETTER + r"\}))")
# what pylatexenc changes in text without commands: dashes, quotes, comments, "&", "?`", "!`"
_PLAIN_UNSAFE = re.compile(r"[\\$%&`#]|--|''|[?!]`")


# a command just before: it may take the accent as its argument, or its name would run into the letter
_COMMAND_BEFORE = re.compile(r"\\(?:[A-Za-z]+|[^A-Za-z\s])(?:\s|%[^\n]*\n)*$")


@lru_cache(maxsize=4096)
def _accented(command: str) -> str:
    return _converter().latex_to_text(command)


def _accents(value: str) -> str:
    """``value`` with each accent command on one letter replaced by its letter, except right after
    another command (left to pylatexenc)."""
    def one(m: re.Match) -> str:
        at = m.start()
        # after a brace that is no command ("{\\"o}{\\"o}"), or at the start, no command can take it
        if not (at == 0 or (value[at - 1] in "{}" and (at < 2 or value[at - 2] != "\\"))) \
                and _COMMAND_BEFORE.search(value, max(0, at - 64), at):
            return m.group()
        return _accented(m.group())
    return _ACCENT.sub(one, value)
#: decoded values of up to this many characters are kept (a venue or an author list recurs across entries)
DECODED_CACHE_CHARS = 2000


def decode_latex(value: str) -> str:
    """LaTeX field text -> plain Unicode (accents, ``\\&``, braces); white space collapsed.

    Accent commands on one letter (most of a name's or title's LaTeX) are replaced first, each as
    pylatexenc reads it alone, in one linear pass; text left with only braces and ``~`` then needs
    no LaTeX reader at all (its braces go, ``~`` is a space); anything else goes to pylatexenc."""
    value = value or ""
    if "\\" in value or "{" in value or "~" in value or "$" in value:
        return _decoded(value) if len(value) <= DECODED_CACHE_CHARS else _decode(value)
    return re.sub(r"\s+", " ", value).strip()


@lru_cache(maxsize=8192)
def _decoded(value: str) -> str:
    return _decode(value)


def _decode(value: str) -> str:
    if "\\" in value:
        value = _accents(value)
    simple = value if _PLAIN_UNSAFE.search(value) is None else _simple_markup(value)
    if simple is not None:
        value = simple.replace("{", "").replace("}", "").replace("~", " ")
    else:
        try:
            # a piece cut at white space is joined with a space, one cut inside a word without one
            value = "".join((" " if p[:1].isspace() else "") + _converter().latex_to_text(p)
                            for p in latex_pieces(value))
        except Exception:  # pylatexenc is tolerant, but never let a field break a reading
            value = re.sub(r"\\[a-zA-Z]+\*?|[{}]", "", value)
    return re.sub(r"\s+", " ", value).strip()


# the markup most bibliographies use, read without a LaTeX parser (as pylatexenc reads it): a font
# switch in a group ("{\\em Title}"), a font command ("\\emph{Title}", "\\natexlab{a}"), an escaped
# character ("\\&") and dashes ("--", "---")
_PLAIN_ARG = r"((?:[^{}\\$%&`#]|\{[^{}\\$%&`#]*\})*)"         # text with brace groups one deep ("{B}ayes")
_FONT_GROUP = re.compile(r"\{\\(?:em|it|bf|sc|sl|tt|rm|sf|upshape|itshape|bfseries)(?![A-Za-z])\s*"
                         + _PLAIN_ARG + r"\}")
_FONT_COMMAND = re.compile(r"\\(?:emph|textit|textbf|textsc|textsl|texttt|textrm|textsf|textup|textnormal|mbox|"
                           r"natexlab|text|doi)\s*\{" + _PLAIN_ARG + r"\}")
# commands that print nothing or a space: "\\ " (a space), "\\/" (italic correction), "\\relax"
_NOTHING = re.compile(r"\\/|\\relax(?![A-Za-z])\s*")
_CONTROL_SPACE = re.compile(r"\\(?=\s)")
_URL = re.compile(r"\\url\s*\{([^{}\\%#$&`~\s]*)\}")        # pylatexenc writes "\\url{x}" as "<x>"
_ESCAPED = re.compile(r"\\([&%$#_])")
_ESCAPE_MARKS = {"&": "\ue000", "%": "\ue001", "$": "\ue002", "#": "\ue003", "_": "\ue004"}
_STILL_UNSAFE = re.compile(r"[\\$%&`#]|''|[?!]`|-{4,}")
_MARKS = re.compile(r"[\ue000-\ue004]")
_UNMARK = {ord(v): k for k, v in _ESCAPE_MARKS.items()}


def _simple_markup(value: str) -> str | None:
    """``value`` with the common markup above read, or None when it holds anything else (then
    pylatexenc reads it; so does a value with the private-use characters this uses as marks)."""
    if _MARKS.search(value):
        return None
    v = _ESCAPED.sub(lambda m: _ESCAPE_MARKS[m.group(1)], value)
    v = _CONTROL_SPACE.sub(" ", _NOTHING.sub("", _URL.sub(r"<\1>", v)))
    v = v.replace("``", "\u201c").replace("''", "\u201d")
    for _ in range(3):                       # nested ("{\\em \\natexlab{a}}"): inside out
        w = _FONT_COMMAND.sub(r"\1", _FONT_GROUP.sub(r"\1", v))
        if w == v:
            break
        v = w
    if _STILL_UNSAFE.search(v) is not None:
        return None
    v = v.replace("---", "\u2014").replace("--", "\u2013")
    return v.translate(_UNMARK)


# "and" between names; tried at the start of a white-space run only, so a long run costs linear time
_AUTHOR_TOKENS = re.compile(r"(\{|\}|(?<!\s)\s+and\s+)")


# a name that ends the list with "et al." (any dots, spacing or case): "Smith, J. et al.", "J. Smith, et al"
_ET_AL = re.compile(r"(?:^|[\s,;]+)et(?:\.\s*|\s+)al(?:ii|ia)?\.?$", re.I)


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
        cut = _ET_AL.search(p)
        if cut:                               # "Smith, J. et al.", "J. Smith et al": a list cut short
            others = True
            p = p[:cut.start()].strip(" ,;")
            if not p:
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


def entry_from_fields(key: str, fields: dict[str, str], source: str = "", kind: str = "") -> BibEntry:
    """A :class:`BibEntry` from raw (LaTeX) field values; field names in any case."""
    f = {k.lower(): (v if isinstance(v, str) else str(v)) for k, v in fields.items()}
    authors, others = split_authors(f.get("author") or f.get("editor") or "")
    venue = decode_latex(next((f[k] for k in ("booktitle", "journal", "journaltitle", "eventtitle",
                                              "publisher", "school", "institution", "howpublished")
                               if f.get(k)), ""))
    title = decode_latex(f.get("title", "")).rstrip(".")
    url = (f.get("url") or "").strip() or None
    volume = re.match(r"\s*(\d{1,4})\b", f.get("volume", ""))
    e = BibEntry(key=key, title=title, authors=authors, year=_year(f), venue=venue,
                 doi=normalize_doi(f.get("doi")), arxiv=_arxiv(f), url=url, source=source, others=others,
                 kind=kind.lower(), volume=int(volume.group(1)) if volume else None, fields=f)
    if e.doi is None and url and "doi.org/" in url.lower():
        e.doi = normalize_doi(url)
    who = ", ".join(authors) + (" et al." if others else "")
    e.raw = ". ".join(x.rstrip(".") for x in (who, title, venue, str(e.year or "")) if x) + "."
    return e


# ---- .bib ------------------------------------------------------------------------------------

#: a field value longer than this (characters, after ``@string`` expansion) makes its entry unreadable
MAX_FIELD_CHARS = 64 * 1024
#: a title of more words than this makes its entry unreadable (no paper's title is near it)
MAX_TITLE_WORDS = 200
#: ``@string`` definitions that use other strings are expanded this many levels deep at most
MAX_STRING_DEPTH = 16
#: ``crossref`` parents are followed this many levels up at most
MAX_CROSSREF_DEPTH = 4
#: characters ``@string`` expansion may add to one file (as many as the largest file read): past
#: it, the entries whose values still need expanding are unreadable
MAX_EXPANDED_CHARS = 32 * 2**20

#: BibTeX's month macros
MONTHS = {m[:3].lower(): m for m in ("January", "February", "March", "April", "May", "June", "July", "August",
                                     "September", "October", "November", "December")}
#: the fields a ``crossref`` child takes from its parent when it lacks them (never the parent's
#: title, DOI, URL or eprint: those are the volume's, not the paper's)
INHERITED_FIELDS = ("booktitle", "booksubtitle", "booktitleaddon", "year", "date", "month", "editor", "publisher",
                    "address", "location", "organization", "series", "volume", "number", "journal", "journaltitle",
                    "eventtitle", "eventdate", "venue", "isbn", "issn")
#: entry types whose ``title`` is a volume's (a child's booktitle)
VOLUME_TYPES = frozenset({"proceedings", "mvproceedings", "book", "mvbook", "collection", "mvcollection"})

_MALFORMED = "malformed BibTeX entry"
_CONCAT_MARKS = re.compile(r'(?<!\\)[{}"#]')
_BRACE_MARKS = re.compile(r"(?<!\\)[{}]")
_MACRO = re.compile(r"[^\s{}\"#,=()]+")
_HEAD = re.compile(r"@\s*(\w*)\s*[{(]\s*([^,\s{}()=\"#%]*)")


def _concat_parts(value: str) -> list[str]:
    """The parts of a BibTeX value joined by ``#`` outside braces and quotes (one pass)."""
    parts, depth, quoted, start = [], 0, False, 0
    for m in _CONCAT_MARKS.finditer(value):
        c = m.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif c == '"':
            quoted = not quoted if depth == 0 else quoted
        elif depth == 0 and not quoted:
            parts.append(value[start:m.start()])
            start = m.end()
    parts.append(value[start:])
    return parts


def braced_whole(value: str) -> bool:
    """Whether the ``{`` opening ``value`` is the one closed by its last character."""
    depth = 0
    for m in _BRACE_MARKS.finditer(value):
        depth += 1 if m.group() == "{" else -1
        if depth == 0:
            return m.end() == len(value)
    return False


class _Values:
    """BibTeX values of one file, read as BibTeX reads them: ``#`` joins quoted and braced parts,
    ``@string`` names (any case) and month macros; a name neither defines stays as written. A
    string that uses others is expanded :data:`MAX_STRING_DEPTH` levels deep at most (a cycle
    stops there); a value is cut after ``MAX_FIELD_CHARS + 1`` characters (its entry is unreadable
    then), and expansion adds :data:`MAX_EXPANDED_CHARS` characters to the file at most."""

    def __init__(self, strings: dict[str, str]):
        self.strings = strings                       # lower-case name -> value as written
        self.memo: dict[str, str] = {}
        self.busy: set[str] = set()
        self.expanded = 0
        self.refused = False                         # a name was left unexpanded: the budget is spent

    def macro(self, name: str, depth: int) -> str | None:
        """The value of an ``@string`` name or month macro; None to keep ``name`` as written."""
        low = name.lower()
        if low not in self.strings:
            return MONTHS.get(low)
        if self.expanded > MAX_EXPANDED_CHARS:
            self.refused = True
            return None
        got = self.memo.get(low)
        if got is None:
            if low in self.busy or depth >= MAX_STRING_DEPTH:
                return None
            self.busy.add(low)
            try:
                got = self.value(self.strings[low], depth + 1)
            finally:
                self.busy.discard(low)
            self.memo[low] = got
        self.expanded += len(got)
        return got

    def value(self, raw: str, depth: int = 0) -> str:
        raw = raw.strip()
        if raw.isdigit():
            return raw
        out, size = [], 0
        for part in _concat_parts(raw) if "#" in raw else [raw]:
            part = part.strip()
            if len(part) >= 2 and part[0] == "{" and part[-1] == "}" and braced_whole(part):
                text = part[1:-1]
            elif len(part) >= 2 and part[0] == '"' and part[-1] == '"':
                text = part[1:-1]
            elif _MACRO.fullmatch(part) and not part.isdigit():
                got = self.macro(part, depth)
                text = part if got is None else got
            else:
                text = part
            out.append(text)
            size += len(text)
            if size > MAX_FIELD_CHARS:
                break
        return "".join(out)[:MAX_FIELD_CHARS + 1]


# what follows a value's first part when the comma before the next field is missing: "title = {A}
# author = {B}" reads, to bibtexparser, as a title of "{A}\n author = {B}"; BibTeX stops on it
_SWALLOWED = re.compile(r"\s*(?P<field>[A-Za-z][\w:.+-]*)\s*=")
_BARE = re.compile(r"[^\s{}\"#,=]+")


def _first_part_end(value: str) -> int | None:
    """Where the first part of a value as written ends (a braced group, a quoted string or a bare
    word): None when it does not end inside ``value``."""
    if value.startswith("{"):
        depth = 0
        for m in _BRACE_MARKS.finditer(value):
            depth += 1 if m.group() == "{" else -1
            if depth == 0:
                return m.end()
        return None
    if value.startswith('"'):
        depth = 0
        for m in re.finditer(r'(?<!\\)[{}"]', value[1:]):
            c = m.group()
            depth += 1 if c == "{" else -1 if c == "}" else 0
            if c == '"' and depth == 0:
                return m.end() + 1
        return None
    m = _BARE.match(value)
    return m.end() if m else None


def missing_comma(fields: list[tuple[str, str]]) -> tuple[str, str, int] | None:
    """The first field whose value as written swallowed the next field because the comma between
    them is missing: (the field, the one swallowed, the offset in the value where the comma is
    missing); None when every value is whole."""
    for name, value in fields:
        v = value.lstrip()
        end = _first_part_end(v)
        if end is None or end >= len(v):
            continue
        m = _SWALLOWED.match(v, end)
        if m and v[end:m.start("field")].strip() == "":
            return name, m.group("field"), len(value) - len(v) + end
    return None


def _block_head(raw: str) -> tuple[str, str]:
    """(type, key) of a block as its head ``@type{key,`` writes them ("" where it does not)."""
    m = _HEAD.match((raw or "").lstrip())
    return (m.group(1).lower(), m.group(2)) if m else ("", "")


def _inherit(fields: dict[str, str], parents: dict[str, tuple[str, dict[str, str]]]) -> dict[str, str]:
    """``fields`` with what it lacks of :data:`INHERITED_FIELDS` taken from its ``crossref`` parent,
    and that one's, :data:`MAX_CROSSREF_DEPTH` levels up at most (a cycle ends at a parent met
    before). A volume's title is the child's booktitle; the editors of the volume are not taken
    for a child without an author (they would be read as its authors)."""
    out, seen = dict(fields), set()
    ref = fields.get("crossref", "").strip().lower()
    for _ in range(MAX_CROSSREF_DEPTH):
        if not ref or ref in seen or ref not in parents:
            break
        seen.add(ref)
        kind, parent = parents[ref]
        for k in INHERITED_FIELDS:
            if parent.get(k) and not out.get(k) and not (k == "editor" and not out.get("author")):
                out[k] = parent[k]
        if not out.get("booktitle") and kind in VOLUME_TYPES and parent.get("title"):
            out["booktitle"] = parent["title"]
        ref = parent.get("crossref", "").strip().lower()
    return out


def _over_cap(fields: dict[str, str]) -> str:
    """Why an entry's fields are over the caps ("" when they are not)."""
    for k, v in fields.items():
        if len(v) > MAX_FIELD_CHARS:
            return f"the field {k!r} is longer than the cap of {MAX_FIELD_CHARS:,} characters"
    words = len(fields.get("title", "").split())
    if words > MAX_TITLE_WORDS:
        return f"the title has {words:,} words, over the cap of {MAX_TITLE_WORDS} words"
    return ""


def unreadable_entry(key: str, source: str, why: str, kind: str = "", raw: str = "") -> BibEntry:
    """A :class:`BibEntry` standing for a block that could not be read, and why."""
    return BibEntry(key=key or "?", source=source, kind=kind, unreadable=why, raw=raw)


def skipped_message(e: BibEntry) -> str:
    """The message for an entry marked :attr:`BibEntry.unreadable`: "refs.bib:12: malformed BibTeX
    entry skipped ('@misc{x,'): ..." (file and line, the entry's first line, why)."""
    head = (e.raw or f"@{e.kind}{{{e.key},").strip().split("\n")[0][:60]
    why = e.unreadable
    what, _, why = why.partition(": ") if why.startswith(_MALFORMED) else ("BibTeX entry", "", why)
    return f"{e.source}: {what} skipped ({head!r}): {why}"


def _comma_why(entry, line: int) -> str:
    """Why a parsed entry cannot be read because a comma between two fields is missing ("" when none is)."""
    found = missing_comma([(f.key, f.value if isinstance(f.value, str) else str(f.value)) for f in entry.fields])
    if found is None:
        return ""
    field_name, swallowed, at = found
    value = next(f.value for f in entry.fields if f.key == field_name)
    raw = entry.raw or ""
    start = raw.find(value)
    where = line + raw.count("\n", 0, start + at) if start >= 0 else line
    return (f"{_MALFORMED}: no comma after the field '{field_name}' (line {where}), before '{swallowed} =': "
            "BibTeX stops on it")


def parse_bib(text: str, name: str, *, keep_unreadable: bool = False, strings: dict[str, str] | None = None,
              expanded: list[int] | None = None) -> tuple[list[BibEntry], list[str]]:
    """Entries of one ``.bib`` file's text in input order, and messages (with line) for blocks it
    skipped; with ``keep_unreadable``, the blocks it could not read are entries marked
    :attr:`BibEntry.unreadable` (with the parser's reason) instead of messages. ``strings``: the
    ``@string`` definitions in force before the text (lower-case name -> value as written; the
    text's own come after them); ``expanded``: a one-item list of the characters ``@string``
    expansion has added so far to the file this text is part of (updated here: the cap
    :data:`MAX_EXPANDED_CHARS` holds for the whole file when it is read in parts). See the module
    doc for values, ``crossref`` and the caps."""
    # slow to import (~15 ms): loaded with the first .bib file, not when the language server starts
    import bibtexparser
    from bibtexparser.model import DuplicateBlockKeyBlock, DuplicateFieldKeyBlock, Entry, ParsingFailedBlock, String

    log = logging.getLogger("bibtexparser")
    level = log.level
    log.setLevel(logging.ERROR)          # failed blocks are reported as messages instead
    try:
        lib = bibtexparser.parse_string(text, parse_stack=[])       # values as written: read below
    except Exception as exc:  # the parser should not raise; a bug there must not stop an audit
        return [], [f"{name}: cannot parse the BibTeX file ({type(exc).__name__}: {exc})"]
    finally:
        log.setLevel(level)
    values = _Values({**(strings or {}), **{s.key.lower(): s.value for s in lib.blocks if isinstance(s, String)}})
    values.expanded = expanded[0] if expanded else 0
    messages: list[str] = []
    read: list[tuple] = []           # (line, kind, key, fields as written, why unreadable, notes, raw)
    # a later @string of a name redefines it for the entries after it, as in BibTeX (the CVPR author
    # kit's .bib defines the venue names twice, long then short): (index in read, name, value)
    redefined: list[tuple[int, str, str]] = []
    for b in lib.blocks:
        line = (b.start_line or 0) + 1
        if isinstance(b, DuplicateBlockKeyBlock) and isinstance(b.ignore_error_block, String):
            redefined.append((len(read), b.ignore_error_block.key.lower(), b.ignore_error_block.value))
        elif isinstance(b, DuplicateBlockKeyBlock):
            messages.append(f"{name}:{line}: duplicate BibTeX key {getattr(b, 'key', '?')!r}; the first entry is used")
        elif isinstance(b, DuplicateFieldKeyBlock) and isinstance(b.ignore_error_block, Entry):
            e = b.ignore_error_block
            fields: dict[str, str] = {}
            for f in e.fields:
                fields.setdefault(f.key.lower(), f.value)
            note = (f"the entry repeats the field{'s' if len(b.duplicate_keys) > 1 else ''} "
                    f"{', '.join(sorted(b.duplicate_keys))}; the first value is used, as BibTeX does")
            messages.append(f"{name}:{line}: {e.key}: {note}")
            read.append((line, e.entry_type.lower(), e.key, fields, _comma_why(e, line), [note], e.raw))
        elif isinstance(b, ParsingFailedBlock):
            reason = (getattr(b.error, "abort_reason", None) or str(b.error)).strip() or type(b.error).__name__
            kind, key = _block_head(b.raw)
            # no raw text: where a malformed block ends is the parser's guess (often the file's end)
            read.append((line, kind, key, {}, f"{_MALFORMED}: {reason}", [], ""))
        elif isinstance(b, Entry):
            fields = {}
            for f in b.fields:
                fields.setdefault(f.key.lower(), f.value)
            read.append((line, b.entry_type.lower(), b.key, fields, _comma_why(b, line), [], b.raw))
    # values, then crossref parents (by key, any case; the first of a key)
    for i, (line, kind, key, raw_fields, why, notes, raw) in enumerate(read):
        while redefined and redefined[0][0] <= i:
            _, string, value = redefined.pop(0)
            values.strings[string] = value
            values.memo.clear()                     # strings that use it are read again
        if why:
            continue
        why = _over_cap(raw_fields)
        values.refused = False
        fields = {} if why else {k: values.value(v) for k, v in raw_fields.items()}
        if values.refused:
            why = f"the @string expansions of the file exceed the cap of {MAX_EXPANDED_CHARS:,} characters"
        read[i] = (line, kind, key, fields, why, notes, raw)
    parents = {}
    for _, kind, key, fields, why, _, _ in read:
        if not why:
            parents.setdefault(key.strip().lower(), (kind, fields))
    entries = []
    for line, kind, key, fields, why, notes, raw in read:
        source = f"{name}:{line}"
        if not why:
            if fields.get("crossref"):
                fields = _inherit(fields, parents)
            why = _over_cap(fields)
        if why:
            bad = unreadable_entry(key, source, why, kind, raw)    # raw: the entry's text, when it is known
            if keep_unreadable:
                entries.append(bad)
            else:
                messages.append(skipped_message(bad))
            continue
        e = entry_from_fields(key, fields, source, kind)
        e.notes = list(notes)
        entries.append(e)
    if expanded:
        expanded[0] = values.expanded
    return entries, messages


# ---- .bbl and thebibliography ------------------------------------------------------------------

# keys and labels are bounded: an unclosed "{" or "[" must not make every later item scan to the end
# (a key ends on its line; a label ends before the next \bibitem, a blank line or MAX_LABEL characters)
_BIBITEM_HEAD = re.compile(r"\\bibitem(?![a-zA-Z])\s*")
# a TeX comment may stand between the label and the key ("...]%\n  {key}", ACM's styles)
_BIBITEM_KEY = re.compile(r"(?:\s|%[^\n]*\n)*\{(?P<key>[^}\n]{0,1000})\}")      # MAX_KEY characters at most
_LABEL_TOKEN = re.compile(r"\\.|[{}\]]|\n[ \t]*\n", re.S)   # an escape, a brace, "]" or a blank line
MAX_LABEL = 2000
#: bracketed arguments after the label that a ``\bibitem`` head may carry (read and dropped)
MAX_EXTRA_LABELS = 4


@dataclass(frozen=True)
class _Item:
    """A ``\\bibitem[label]{key}`` head: where it starts and ends, its label and key."""

    start: int
    end: int
    label: str
    key: str


_UNREADABLE_HEAD = "a \\bibitem whose key cannot be read (an unclosed brace or bracket?)"
MAX_KEY = 1000
_LONG_KEY = re.compile(r"\s*\{(?P<key>[^}\n]*)\}")


def _label_end(text: str, i: int, end: int) -> int | None:
    """Where the ``[label]`` opening at ``text[i]`` closes (after its ``]``), read before ``end``: None
    when it does not close there; -1 when it cannot be a label (a stray ``}``, a blank line)."""
    depth = 0
    for t in _LABEL_TOKEN.finditer(text, i + 1, end):
        c = t.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return -1
        elif c == "]" and depth == 0:
            return t.end()
        elif c[0] == "\n":                 # a blank line ends a LaTeX argument: never a label
            return -1
    return None


def _bibitem_head(text: str, start: int, stop: int) -> _Item | str:
    """The ``\\bibitem`` head at ``text[start]``, read before ``stop`` (the next ``\\bibitem``): an
    optional ``[label]`` whose braces nest to any depth and whose escapes (``\\'``, ``\\{``, ``\\]``)
    are single characters, as TeX reads it, then ``{key}``. When it cannot be read, why: an unclosed
    brace or bracket, a stray ``}``, no key, or a label or key over its cap (:data:`MAX_LABEL`,
    :data:`MAX_KEY` characters)."""
    i = _BIBITEM_HEAD.match(text, start).end()
    label = ""
    if i < stop and text[i] == "[":
        close = _label_end(text, i, min(stop, i + 1 + MAX_LABEL))
        if close is None and i + 1 + MAX_LABEL < stop:
            later = _label_end(text, i, stop)           # read on to the next item: linear in all
            if later is not None and later > 0:
                return (f"a \\bibitem whose label is {later - i - 2:,} characters long, over the cap of "
                        f"{MAX_LABEL:,} characters")
        if close is None or close < 0:
            return _UNREADABLE_HEAD
        label, i = text[i + 1:close - 1], close
        # more bracketed arguments (apalike/chicago's "\bibitem[Bishop \& Winn, 2003][Bishop and Winn][2003]{key}"):
        # the first is the label
        for _ in range(MAX_EXTRA_LABELS):
            if i >= stop or text[i] != "[":
                break
            close = _label_end(text, i, min(stop, i + 1 + MAX_LABEL))
            if close is None or close < 0:
                return _UNREADABLE_HEAD
            i = close
    m = _BIBITEM_KEY.match(text, i, stop)
    if m is None:
        long_key = _LONG_KEY.match(text, i, stop)
        if long_key:
            return (f"a \\bibitem whose key is {len(long_key.group('key')):,} characters long, over the cap of "
                    f"{MAX_KEY:,} characters")
        return _UNREADABLE_HEAD
    return _Item(start, m.end(), label, m.group("key"))


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


@dataclass(frozen=True)
class _Unclosed:
    """A biblatex field whose value never closes: its name and where it starts in the entry's body."""

    field: str
    at: int
    what: str = "an unclosed brace"


def _biblatex_fields(body: str) -> tuple[dict[str, str], _Unclosed | None]:
    """The fields of a biblatex ``\\entry``'s body, and the first field whose value never closes (a
    ``{`` with no ``}``, a ``\\verb`` with no ``\\endverb``), if one does not: biber never writes one,
    so the entry cannot be read."""
    f: dict[str, str] = {}
    braces = _Braces(body)
    unclosed: list[_Unclosed] = []
    for m in re.finditer(r"\\(?:field|range)\{(\w+)\}", body):
        got = braces.braced(m.end())
        if got is None and body.startswith("{", m.end()):
            unclosed.append(_Unclosed(m.group(1).lower(), m.start()))
        if m.group(1).lower() in f:
            continue
        if got:
            f[m.group(1).lower()] = got[0]
    verbs = 0
    for m, value in _blocks(body, _VERB_HEAD, "\\endverb"):
        verbs += 1
        f.setdefault(m.group(1).lower(), value.strip())
    heads = list(_VERB_HEAD.finditer(body))
    if len(heads) > verbs:
        unclosed.append(_Unclosed(heads[verbs].group(1).lower(), heads[verbs].start(), "a \\verb without \\endverb"))
    for m in _NAME_HEAD.finditer(body):
        got = braces.braced(m.end() - 1)
        if not got:
            unclosed.append(_Unclosed(m.group(1), m.start()))
            continue
        if m.group(1) in f:
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
    return f, min(unclosed, key=lambda u: u.at, default=None)


# a line-break point natbib styles put in a .bbl ("91\penalty0 (5):\penalty0 794"): prints nothing
_PENALTY = re.compile(r"\\penalty\s*-?\d+ ?")


# ACM's reference styles mark each field: "\bibinfo{person}{J. Angwin}", "\bibfield{author}{...}"; the
# field's name is no text
_BIBINFO_NAME = re.compile(r"\\bib(?:info|field)\s*\{[^{}]{0,100}\}")
_SHOW_TITLE = re.compile(r"\\showarticletitle\s*(?=\{)")
# the year an author block ends with ("M. Verleysen (2006)", "L. Kirchner. 2016")
_AUTHORS_YEAR = re.compile(r"[\s,]*\(?(?:1[89]|20)\d\d[a-z]?\)?[.,]?\s*$")
# initials: "A.", "A. B.", "G.-H.", "Th." (a dot after each), or a lone capital ("M S")
_INITIALS = re.compile(r"(?:(?:[A-Z][a-z]?\.|[A-Z](?=[\s-]|$))[\s-]*)+")
_SURNAME_FIRST = re.compile(r"^(?P<family>[^,]+),\s*(?P<given>[^,]+)$")


def _swap(name: str) -> str:
    """"Family, Given" -> "Given Family"; any other name as written."""
    m = _SURNAME_FIRST.match(name)
    return f"{m.group('given').strip()} {m.group('family').strip()}" if m else name


def bibitem_authors(block: str) -> tuple[list[str], bool]:
    """The names of a ``\\bibitem``'s author block (LaTeX decoded), each as "Given Family": "A.
    Smith, B. Jones, and C. Lee"; APA's "Smith, A., Jones, B., \\& Lee, C. (2006)"; BibTeX's
    "Smith, Alice and Jones, Bob"; and whether the list ends with "et al."."""
    s = _AUTHORS_YEAR.sub("", block.strip()).rstrip(", ")
    if s.endswith(".") and not re.search(r"(?:^|[\s.-])[A-Z]\.$", s):    # keep an initial's dot
        s = s[:-1].rstrip()
    others = bool(re.search(r"et\.? al\.?$", s))
    s = re.sub(r",?\s*et\.? al\.?$", "", s) if others else s
    pieces = [p.strip() for p in re.split(r",?\s+(?:and|&)\s+", s) if p.strip()]
    if pieces and all(p.count(",") == 1 for p in pieces) and \
            (len(pieces) >= 2 or " " not in pieces[0].split(",")[0].strip()):
        return [_swap(p) for p in pieces], others          # "Family, Given and Family, Given"
    parts = [a.strip() for a in re.split(r",\s*(?:(?:and|&)\s+)?|\s+(?:and|&)\s+", s) if a.strip()]
    parts = [re.sub(r"^(?:and|&)\s+", "", a) for a in parts if not re.fullmatch(r"et al\.?", a)]
    if len(parts) >= 2 and len(parts) % 2 == 0 and all(_INITIALS.fullmatch(x) for x in parts[1::2]) \
            and not any(_INITIALS.fullmatch(x) for x in parts[::2]):
        parts = [f"{given} {family}" for family, given in zip(parts[::2], parts[1::2])]
    return parts, others


# a title that ends with its year ("Climax: A foundation model for weather and climate, 2023")
_TITLE_YEAR = re.compile(r",\s*(?:1[89]|20)\d\d[a-z]?$")
# one block whose title is quoted (IEEE: 'A. Smith, "The title," in ...') or set in italics after the
# names (AMS: 'A. Smith and B. Jones, \\emph{The title}, Annals ...')
_QUOTED_TITLE = re.compile(r"[\u201c\"](?P<title>[^\u201c\u201d\"]{8,400}?)[,.]?[\u201d\"]")
_EMPH = re.compile(r"\\emph\s*\{|\{\\(?:em|it)\s")


def _one_block(body: str, text: str) -> tuple[list[str], str, bool] | None:
    """Authors, title and et al. of a one-block item whose title is quoted or in italics; None
    when it is neither."""
    m = _QUOTED_TITLE.search(text)
    if m and m.start() > 0 and len(m.group("title").split()) >= 2:
        authors, others = bibitem_authors(text[:m.start()].rstrip(" ,:"))
        return authors, m.group("title").strip(" ,."), others
    m = _EMPH.search(body)
    if m and m.start() > 0 and "," in body[:m.start()]:
        got = _braced(body, m.start() if body[m.start()] == "{" else m.end() - 1)
        title = decode_latex(got[0]) if got else ""
        if got and len(title.split()) >= 3:
            authors, others = bibitem_authors(decode_latex(body[:m.start()]).rstrip(" ,:"))
            title = re.sub(r"^\\?(?:em|it)\s+", "", title)
            return authors, title.strip(" ,."), others
    return None


def _bibitem_entry(key: str, label: str, body: str, source: str) -> BibEntry:
    body = _PENALTY.sub("", body)
    body = _BIBINFO_NAME.sub("", body)
    shown = None
    m = _SHOW_TITLE.search(body)
    if m:
        got = _braced(body, m.end())
        shown = decode_latex(got[0]).rstrip(". ") if got else None
    blocks = [b.strip() for b in re.split(r"\\newblock\b", body)]
    plain = [decode_latex(b) for b in blocks]
    text = " ".join(p for p in plain if p)
    if len(plain) >= 2 and plain[1]:
        title = shown or plain[1].rstrip(". ")
        authors, others = bibitem_authors(plain[0])
        year = find_year(text)
    else:
        got = _one_block(body, text)
        authors, title, year = parse_reference_string(text)
        others = False
        if got is not None:
            authors, title, others = got
        else:
            authors = [_swap(a) if _INITIALS.fullmatch(a.partition(",")[2].strip() or "-") else a
                       for a in authors]                 # "Bégaint, J" (LNCS)
    if year is None:
        m = re.search(r"(?:1[89]|20)\d\d", label or "")
        year = int(m.group(0)) if m else None
    m = _TITLE_YEAR.search(title)
    if m and year is not None and str(year) in m.group():
        title = title[:m.start()]
    url = None
    m = re.search(r"\\url\{([^}]{0,2000})\}|\\href\{([^}]{0,2000})\}", body)
    if m:
        url = m.group(1) or m.group(2)
    venue = bibitem_venue(plain[2]) if len(plain) >= 3 and plain[1] else ""
    e = BibEntry(key=key, title=title, authors=authors, year=year, url=url, raw=text, source=source,
                 others=others, doi=normalize_doi(body) if re.search(r"doi", body, re.I) else None,
                 arxiv=normalize_arxiv(text) if re.search(r"arxiv|corr", text, re.I) else None, venue=venue)
    return e


_VENUE_HEAD = re.compile(r"^(?:In:?|in:?)\s+")
# where a venue block's venue ends: its volume, pages, editors, publisher's year or a URL
_VENUE_END = re.compile(r",?\s*(?:\(?\b(?:pages?|pp\.?|vol\.?|volume|no\.|number|edited by|URL|doi|"
                        r"(?:1[89]|20)\d\d\b)|\d+\s*[(:]|\d+\s*$|https?:)", re.I)


def bibitem_venue(block: str) -> str:
    """The venue of a ``\\bibitem``'s third block ("In Proc. ICML, pages 1040-1047, 2008." ->
    "Proc. ICML"; "J. Mach. Learn. Res., 7:2541-2563, 2006." -> "J. Mach. Learn. Res."); "" when the
    block holds none (only a year, a URL)."""
    v = _VENUE_HEAD.sub("", block.strip())
    m = _VENUE_END.search(v)
    if m:
        v = v[:m.start()]
    v = v.strip(" ,;:")
    if v.endswith(".") and not re.search(r"\b\w{1,5}\.$", v):     # keep an abbreviation's dot ("Res.")
        v = v[:-1]
    return v if len(v) >= 3 and re.search(r"[A-Za-z]{2}", v) else ""


def parse_bbl(text: str, name: str, *, keep_unreadable: bool = False) -> tuple[list[BibEntry], list[str]]:
    """Entries of a ``.bbl`` file (or a ``thebibliography`` environment): BibTeX/natbib
    ``\\bibitem[...]{key}`` items or biblatex ``\\entry{key}{type}{}...\\endentry`` records. An item
    over the caps (a field, or a ``\\bibitem``'s text, over :data:`MAX_FIELD_CHARS` characters; a
    title over :data:`MAX_TITLE_WORDS` words) is skipped with a message, or with ``keep_unreadable``
    kept as an entry marked :attr:`BibEntry.unreadable`."""
    entries: list[BibEntry] = []
    messages: list[str] = []
    line, at = 1, 0                       # line numbers counted on as the items come (not from the start each time)

    def line_of(i: int) -> int:
        nonlocal line, at
        line += text.count("\n", at, i)
        at = i
        return line

    def unreadable(key: str, source: str, why: str, kind: str = "") -> None:
        if keep_unreadable:
            entries.append(unreadable_entry(key, source, why, kind))
        else:
            messages.append(f"{source}: {key}: item skipped: {why}")

    if "\\entry{" in text and "\\endentry" in text:
        end = 0
        for m, body in _blocks(text, _BIBLATEX_HEAD, "\\endentry"):
            source, key = f"{name}:{line_of(m.start())}", m.group("key").strip()
            end = m.end() + len(body)
            fields, unclosed = _biblatex_fields(body)
            if unclosed is not None:
                field_line = line + text.count("\n", m.start(), m.end() + unclosed.at)
                unreadable(key, source, f"the field '{unclosed.field}' (line {field_line}) never closes before "
                           "\\endentry "
                           f"({unclosed.what})", m.group("type").lower())
                continue
            why = _over_cap(fields)
            if why:
                unreadable(key, source, why, m.group("type").lower())
                continue
            entries.append(entry_from_fields(key, fields, source, m.group("type")))
        for m in _BIBLATEX_HEAD.finditer(text, end):      # heads after the last \endentry: a file cut short
            unreadable(m.group("key").strip(), f"{name}:{line_of(m.start())}", "a biblatex \\entry without "
                       "\\endentry (the file is cut short?)", m.group("type").lower())
        return entries, messages
    heads = [m.start() for m in _BIBITEM_HEAD.finditer(text)]
    # each head is read up to the next one (linear in all); one that cannot be read (an unclosed brace
    # or bracket) is not an item, and its text belongs to no item
    for start, end in zip(heads, heads[1:] + [len(text)]):
        ln = line_of(start)
        m = _bibitem_head(text, start, end)
        if isinstance(m, str):
            unreadable("?", f"{name}:{ln}", m)
            continue
        body = text[m.end:end]
        body = re.split(r"\\end\{thebibliography\}", body)[0]
        key = m.key.strip()
        if not key:
            unreadable("?", f"{name}:{ln}", "a \\bibitem without a key")
            continue
        if len(body) > MAX_FIELD_CHARS:
            unreadable(key, f"{name}:{ln}", f"the item is longer than the cap of {MAX_FIELD_CHARS:,} characters")
            continue
        e = _bibitem_entry(key, m.label, body, f"{name}:{ln}")
        words = len(e.title.split())
        if words > MAX_TITLE_WORDS:
            unreadable(key, e.source, f"the title has {words:,} words, over the cap of {MAX_TITLE_WORDS} words")
            continue
        entries.append(e)
    return entries, messages
