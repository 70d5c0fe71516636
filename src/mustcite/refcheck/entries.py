"""The reference entries of the file to check, in input order.

A ``.bib`` file is read with :func:`mustcite.extract.bibtex.parse_bib`, a ``.bbl`` with
:func:`~mustcite.extract.bibtex.parse_bbl`; anything else goes through the draft reader that
``audit`` uses (:func:`mustcite.recommend.draft.check_draft_file`, then the LaTeX or the
Markdown/TEI/PDF extraction), so a LaTeX project, a source archive or a draft gives the reference
list the audit would read. Every entry becomes an :class:`Entry`; the reader's messages (with file
and line) come back beside them. A ``.bib`` or ``.bbl`` block that cannot be read (a brace error, a
field over :data:`~mustcite.extract.bibtex.MAX_FIELD_CHARS` characters, a title over
:data:`~mustcite.extract.bibtex.MAX_TITLE_WORDS` words) is an :class:`Entry` too, marked
``unreadable`` with the reason, so that it is counted; a file of more than :data:`MAX_ENTRIES`
entries is refused before any of them is read.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import MustciteError
from ..extract.bibtex import BibEntry, parse_bbl, parse_bib
from ..io import BinaryContentError, decode_text
from ..recommend.draft import extract_draft

#: a .bib or .bbl file larger than this is refused (a bibliography is far smaller)
MAX_BIB_BYTES = 32 * 2**20
#: a .bib or .bbl file of more entries than this is refused (error at the first entry over it)
MAX_ENTRIES = 10_000


@dataclass
class Entry:
    key: str
    title: str = ""
    authors: list[str] = field(default_factory=list)
    others: bool = False           # the author list ends in "and others" / "et al."
    year: int | None = None
    venue: str = ""                # booktitle / journal / ... as written ("" when none)
    doi: str | None = None
    arxiv: str | None = None
    url: str | None = None
    raw: str = ""                  # the entry as one line (the reference string for a draft)
    source: str = ""               # "refs.bib:12"
    structured: bool = True        # fields came from BibTeX/biblatex (False: parsed from a string)
    volume: int | None = None      # a volume number ("Advances in NeurIPS 36")
    kind: str = ""                 # the BibTeX entry type, lower case ("inproceedings"; "" when none)
    unreadable: str = ""           # why the block could not be read ("" when it was)
    pages: str = ""                # the ``pages`` field as written ("" when none)
    notes: list[str] = field(default_factory=list)   # what the reader noticed (a repeated field)
    #: a .bib entry's fields as written (LaTeX kept), by lower-case name ({} for other inputs)
    fields: dict[str, str] = field(default_factory=dict, repr=False)


_VOLUME_TEXT = re.compile(r"neural information processing systems[\s_*,:(NeurIPS)]{0,20}?(?:vol\.?\s*)?(\d{1,2})\b",
                          re.I)


_ET_AL = re.compile(r"\s*\bet\.? al\.?$", re.I)
_URL_ESCAPES = re.compile(r"\\([_%#&~])")


def _authors(names: list[str], others: bool) -> tuple[list[str], bool]:
    """The author list as written: a name ending in "et al." shortens the list (``others``); a
    braced group of several names ("{A and B}") is those names; HTML entities ("Ch&apos;ng") are read."""
    out = []
    for n in names:
        n = html.unescape(n)
        cut = _ET_AL.sub("", n)
        others = others or cut != n
        out += [x.strip() for x in re.split(r"\s+and\s+", cut) if x.strip()]
    return out, others


_PAGES = re.compile(r"\bpages\s*=\s*(?:\{([^{}]*)\}|\"([^\"]*)\"|(\d+))", re.I)


def pages_by_line(text: str) -> dict[int, str]:
    """The ``pages`` field of each BibTeX block, by the line its head is on (1-based), as written."""
    heads = [(m.start(), text.count("\n", 0, m.start()) + 1) for m in _BIB_HEAD.finditer(text)]
    out = {}
    for i, (start, line) in enumerate(heads):
        end = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        m = _PAGES.search(text, start, end)
        if m:
            out[line] = next(g for g in m.groups() if g is not None).strip()
    return out


def _with_pages(entries: list[Entry], text: str) -> list[Entry]:
    pages = pages_by_line(text)
    for e in entries:
        line = e.source.rsplit(":", 1)[-1]
        if line.isdigit():
            e.pages = pages.get(int(line), "")
    return entries


def _from_bib(e: BibEntry, structured: bool) -> Entry:
    if e.unreadable:
        return Entry(key=e.key, raw=e.raw, source=e.source, structured=structured, kind=e.kind,
                     unreadable=e.unreadable)
    volume = e.volume
    if volume is None:
        m = _VOLUME_TEXT.search(e.raw or "")
        volume = int(m.group(1)) if m else None
    authors, others = _authors(list(e.authors), e.others)
    url = _URL_ESCAPES.sub(r"\1", e.url) if e.url else e.url          # "id=wXgk\_iCiYGo"
    return Entry(key=e.key, title=html.unescape(e.title or ""), authors=authors, others=others, year=e.year,
                 venue=e.venue or "", doi=e.doi, arxiv=e.arxiv, url=url, raw=e.raw, source=e.source,
                 structured=structured, volume=volume, kind=e.kind, notes=list(e.notes), fields=dict(e.fields))


#: a block head as bibtexparser finds them (@string, @comment and @preamble are not counted as entries)
_BIB_HEAD = re.compile(r"@(\w*)[ \t]*[{(]")
_BBL_HEAD = re.compile(r"\\(?:bibitem\b|entry\{)")


def check_entry_count(text: str, name: str | Path, bbl: bool = False) -> None:
    """Raise a MustciteError naming ``name`` and the line of the first entry over
    :data:`MAX_ENTRIES` when the text holds more (entry heads counted in one pass: linear)."""
    n = 0
    for m in (_BBL_HEAD if bbl else _BIB_HEAD).finditer(text):
        if not bbl and m.group(1).lower().startswith(("string", "comment", "preamble")):
            continue
        n += 1
        if n > MAX_ENTRIES:
            raise MustciteError(f"more than {MAX_ENTRIES:,} entries (the cap of one file); this is entry "
                                f"{n:,}: split the bibliography", path=name, line=text.count("\n", 0, m.start()) + 1)


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_BIB_BYTES:
            raise MustciteError(f"too large: {size / 2**20:.1f} MB > {MAX_BIB_BYTES / 2**20:.0f} MB cap", path=path)
        data = path.read_bytes()
    except OSError as exc:
        raise MustciteError(f"cannot read: {exc.strerror or exc}", path=path) from None
    try:
        return decode_text(data, path)
    except BinaryContentError as exc:
        raise MustciteError(f"not a text file (binary content): {exc.message}", path=path, line=exc.line) from None
    except MustciteError as exc:
        raise MustciteError("not UTF-8 text", path=path, line=exc.line) from None


def read_entries(path: str | Path) -> tuple[list[Entry], list[str]]:
    """The entries of ``path`` in input order and the reader's messages; a MustciteError naming
    the file (and line where known) when it cannot be read or holds no entry at all."""
    path = Path(path)
    name = path.name.lower()
    if name.endswith((".bib", ".bbl")):
        if not path.is_file():
            raise MustciteError("file not found", path=path)
        text = _read_text(path)
        if not text.strip():
            raise MustciteError("the file is empty", path=path)
        check_entry_count(text, path, bbl=name.endswith(".bbl"))
        if name.endswith(".bib"):
            entries, messages = entries_from_bib(text, path.name)
            default = "no BibTeX entry (@type{key, ...}) found"
        else:
            got, messages = parse_bbl(text, path.name, keep_unreadable=True)
            structured = "\\entry{" in text
            entries = [_from_bib(e, structured) for e in got]
            default = "no \\bibitem or biblatex \\entry found"
        if not entries:
            raise MustciteError(_no_entries(messages, default), path=path, line=_first_line(messages))
        return entries, messages
    return _draft_entries(path)


def _no_entries(messages: list[str], default: str) -> str:
    return messages[0].split(": ", 2)[-1] if messages else default


def _first_line(messages: list[str]) -> int | None:
    for m in messages:
        got = re.match(r"[^:]*:(\d+):", m)
        if got:
            return int(got.group(1))
    return None


def volume_in_text(raw: str) -> int | None:
    """The NeurIPS volume number a reference string gives ("Advances in Neural Information Processing
    Systems, 36, 2024" -> 36), or None."""
    m = _VOLUME_TEXT.search(raw or "")
    return int(m.group(1)) if m else None


def _draft_entries(path: Path) -> tuple[list[Entry], list[str]]:
    """The reference list of a LaTeX project, archive or draft, read as ``audit`` reads it."""
    kind, paper = extract_draft(path)
    entries = []
    for r in sorted(paper.references, key=lambda r: r.target):
        structured = kind == "latex" and bool(r.bibkey) and not (r.raw or "").startswith("\\")
        raw = r.raw or ""
        others = bool(re.search(r"\bet al\b\.?", raw.split(r.title)[0] if r.title and r.title in raw else raw[:200]))
        entries.append(Entry(key=r.bibkey or r.cite or str(r.target), title=r.title or "", authors=list(r.authors),
                             others=others, year=r.year, venue=r.venue or "", doi=r.doi, arxiv=r.arxiv, url=r.url,
                             raw=raw, source=f"{path.name}:ref {r.target}", structured=structured and bool(r.venue),
                             volume=volume_in_text(raw)))
    if not entries:
        raise MustciteError("found no reference list", path=path,
                            hint="give a .bib or .bbl file, or a draft with a References section")
    return entries, list(paper.messages)


def entries_from_bib(text: str, name: str, strings: dict[str, str] | None = None,
                     expanded: list[int] | None = None) -> tuple[list[Entry], list[str]]:
    """The entries of BibTeX ``text`` (an editor's buffer; ``name`` for each entry's ``source``)
    in input order, the blocks that could not be read among them (marked ``unreadable``), and the
    parser's messages; ``strings``, ``expanded``: the ``@string`` definitions in force before the
    text and the expansion so far of the file it is part of
    (:func:`~mustcite.extract.bibtex.parse_bib`). Raises a MustciteError for a text of more than
    :data:`MAX_ENTRIES` entries."""
    check_entry_count(text, name)
    got, messages = parse_bib(text, name, keep_unreadable=True, strings=strings, expanded=expanded)
    return _with_pages([_from_bib(e, True) for e in got], text), messages
