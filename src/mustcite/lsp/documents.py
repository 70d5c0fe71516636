"""Positions in the files an editor holds open: where a citation key, a bibliography command, a BibTeX
entry and one of its fields are, as LSP ranges (lines from 0, columns in UTF-16 code units).

Everything here is a function of a document's text (:class:`Pieces` keeps the blocks of a text's
pieces for the next text). A ``.bib`` text is cut into its blocks as bibtexparser's splitter cuts
it (:func:`bib_blocks`, linear), and an entry's fields are read from its own ``@`` at brace depth
1 (:func:`entry_fields`), never by a pattern searched from the start of a line.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from operator import add
from typing import NamedTuple

from lsprotocol import types

from ..extract.bibtex import braced_whole
from ..extract.latex.bibliography import bibliography_commands
from ..extract.latex.citations import citation_keys
from ..extract.latex.includes import blank_comments


class Lines:
    """Offsets of ``text`` turned into LSP positions, in time logarithmic in the text's length:
    the line starts and the offsets of the characters that take two UTF-16 units (those beyond
    U+FFFF) are found once, and each position is two binary searches (a range on a line of
    megabytes costs no more than one on a short line). :func:`lines_of` keeps the latest few."""

    def __init__(self, text: str):
        self.text = text
        parts = text.split("\n")
        self.starts = [0, *map(add, accumulate(map(len, parts[:-1])), range(1, len(parts)))]
        self.astral = [m.start() for m in _ASTRAL.finditer(text)] if not text.isascii() else []

    def line_column(self, offset: int) -> tuple[int, int]:
        """(line, UTF-16 column) of ``offset``, both from 0."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        wide = bisect_left(self.astral, offset) - bisect_left(self.astral, start) if self.astral else 0
        return line, offset - start + wide

    def position(self, offset: int) -> types.Position:
        line, column = self.line_column(offset)
        return types.Position(line=line, character=column)

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))

    def line_range(self, line: int) -> types.Range:
        """The whole of line ``line`` (from 0), without its line end."""
        line = max(0, min(line, len(self.starts) - 1))
        start = self.starts[line]
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.text)
        return self.range(start, end)

    def end(self) -> types.Position:
        return self.position(len(self.text))


_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


class LineCursor:
    """(line, UTF-16 column) of offsets of ``text`` asked for in increasing order, each found from
    the one before: newlines are counted once over the whole text, in C (no list of line starts).
    The characters that take two UTF-16 units are looked for only in a text that has some."""

    def __init__(self, text: str):
        self.text = text
        self.offset = self.line = self.line_start = 0
        wide = not text.isascii() and len(text.encode("utf-16-le")) != 2 * len(text)
        self.astral = [m.start() for m in _ASTRAL.finditer(text)] if wide else []

    def line_column(self, offset: int) -> tuple[int, int]:
        text = self.text
        if offset < self.offset:
            self.offset = self.line = self.line_start = 0
        n = text.count("\n", self.offset, offset)
        if n:
            self.line += n
            self.line_start = text.rfind("\n", self.offset, offset) + 1
        self.offset = offset
        wide = bisect_left(self.astral, offset) - bisect_left(self.astral, self.line_start) if self.astral else 0
        return self.line, offset - self.line_start + wide


@lru_cache(maxsize=4)
def lines_of(text: str) -> Lines:
    """The :class:`Lines` of ``text``, kept for the few latest texts: every diagnostic of one
    document shares them (a string's hash is computed once, so a hit costs no pass over it)."""
    return Lines(text)


@dataclass(frozen=True)
class Cite:
    key: str
    range: types.Range


@dataclass(frozen=True)
class Bibliography:
    names: list[str]          # the .bib files it names ("refs.bib")
    range: types.Range


def cites(text: str) -> list[Cite]:
    """Every citation key of a LaTeX source outside comments, with its range."""
    lines = lines_of(text)
    return [Cite(k.key, lines.range(k.start, k.end)) for k in citation_keys(blank_comments(text))]


def bibliographies(text: str) -> list[Bibliography]:
    """The ``\\bibliography``/``\\addbibresource`` commands of a LaTeX source outside comments."""
    lines = lines_of(text)
    return [Bibliography(c.names, lines.range(c.start, c.end)) for c in bibliography_commands(blank_comments(text))]


#: a block's head as bibtexparser's splitter finds it: ``@type`` before ``{`` or ``(``
_BLOCK_START = re.compile(r"@\w*[ \t]*(?=[{(])")
_BRACE = re.compile(r"(?<!\\)[{}]")
_PAREN_MARKS = re.compile(r"(?<!\\)[{})]")
_KEY = re.compile(r"[ \t\r\n]*([^,\s{}()=\"#%]*)")
#: block types that are no entry
NOT_ENTRIES = ("string", "comment", "preamble")


class BibBlock(NamedTuple):
    """One ``@type{...}`` block of a ``.bib`` text: from its ``@`` to just after its closing
    delimiter (an unclosed one ends where the next block starts)."""

    start: int
    end: int
    kind: str            # the type, lower case ("article"; "string", "comment", "preamble" are no entries)
    key: str             # the key its head writes ("" when none)
    closed: bool

    @property
    def entry(self) -> bool:
        return not self.kind.startswith(NOT_ENTRIES)


def _chunk_blocks(chunk: str) -> list[BibBlock]:
    """The blocks of ``chunk``, a text that starts at a block head on its line (or is the text
    before the first one), offsets relative to it. A head inside a closed block is its text (an
    ``@`` in a value); one inside a block still open when the next head comes ends that block."""
    out: list[BibBlock] = []
    heads = list(_BLOCK_START.finditer(chunk))
    i, n = 0, len(heads)
    while i < n:
        m = heads[i]
        start, open_at = m.start(), m.end()
        kind = m.group().strip()[1:].lower()
        key = _KEY.match(chunk, open_at + 1).group(1) if not kind.startswith(NOT_ENTRIES) else ""
        end = _close(chunk, open_at)
        closed = end is not None
        if end is None:                              # unclosed: up to the next head (the parser's recovery)
            end = heads[i + 1].start() if i + 1 < n else len(chunk)
        out.append(BibBlock(start, end, kind, key, closed))
        i += 1
        while i < n and heads[i].start() < end:
            i += 1
    return out


def _close(text: str, open_at: int) -> int | None:
    """The offset just after the delimiter closing the block opened at ``open_at`` (``{`` or
    ``(``), braces nested; None when the text ends first."""
    depth = 0
    if text[open_at] == "(":
        for m in _PAREN_MARKS.finditer(text, open_at + 1):
            c = m.group()
            if c == "{":
                depth += 1
            elif c == "}":
                depth = max(0, depth - 1)
            elif depth == 0:
                return m.end()
        return None
    for m in _BRACE.finditer(text, open_at):
        depth += 1 if m.group() == "{" else -1
        if depth == 0:
            return m.end()
    return None


#: a block head that starts a line after the first (white space before it only): a block always
#: starts there, even inside an entry left unclosed (the parser gives that one up)
_LINE_HEAD = re.compile(r"\n[^\S\n]*@\w*[ \t]*(?=[{(])")


def bib_blocks(text: str, cache: dict[str, list[BibBlock]] | None = None,
               keep: dict[str, list[BibBlock]] | None = None) -> list[BibBlock]:
    """Every block of a ``.bib`` text in order, found as bibtexparser's splitter finds them. The
    text is cut at each head that starts a line (one regular-expression pass) and each piece is
    read alone; with ``cache`` (piece text -> its blocks, offsets in the piece), a piece read
    before is not read again, so an edit costs the pieces it touches plus a pass over the text.
    ``keep`` receives every piece of this text (the cache for the next one)."""
    out: list[BibBlock] = []
    cuts = [0, *(m.start() + 1 for m in _LINE_HEAD.finditer(text)), len(text)]
    cache = {} if cache is None else cache
    keep = {} if keep is None else keep
    for lo, hi in zip(cuts, cuts[1:]):
        piece = text[lo:hi]
        got = cache.get(piece) or keep.get(piece)
        if got is None:
            got = _chunk_blocks(piece)
        keep[piece] = got
        if lo:
            out.extend([BibBlock(lo + b.start, lo + b.end, b.kind, b.key, b.closed) for b in got])
        else:
            out.extend(got)
    return out


class Pieces:
    """The blocks of the pieces of one document's latest text (:func:`bib_blocks`): a piece read
    for the text before is not read again, and the pieces the text no longer holds are dropped."""

    def __init__(self):
        self.now: dict[str, list[BibBlock]] = {}

    def blocks(self, text: str) -> list[BibBlock]:
        before, self.now = self.now, {}
        return bib_blocks(text, before, self.now)

    def find(self, text: str, key: str) -> BibBlock | None:
        """:func:`find_entry` through these pieces."""
        return next((b for b in self.blocks(text) if b.entry and b.key == key), None)


@dataclass(frozen=True)
class BibField:
    """A field of an entry as written: its name and where its value is (offsets in the text)."""

    name: str            # lower case
    start: int           # the value's first character inside its braces or quotes, or of the bare word
    end: int
    composed: bool       # a ``@string`` name or ``#`` concatenation: the text is not the value read


_FIELD_MARKS = re.compile(r'(?<!\\)[{}",=#]')


def entry_fields(text: str, block: BibBlock) -> list[BibField]:
    """The fields of the entry ``block`` of ``text``, read from its own ``@`` as the parser reads
    them: each ``name = value`` at brace depth 1 (inside the entry's delimiters, outside every
    value), in order. A ``year = ...`` written inside another field's value is that value's
    text, never a field. One pass over the entry."""
    out: list[BibField] = []
    lo = block.start + len(_BLOCK_START.match(text, block.start).group())
    hi = block.end - 1 if block.closed else block.end
    name_at = None               # after the key's ",": where the next field's name starts
    value_at = None              # after a field's "=": where its value starts
    name = ""
    depth, quoted, joined = 0, False, False

    def value(end: int) -> None:
        raw = text[value_at:end]
        s = value_at + len(raw) - len(raw.lstrip())
        e = value_at + len(raw.rstrip())
        v = text[s:e]
        if not joined and len(v) >= 2 and ((v[0] == "{" and v[-1] == "}" and braced_whole(v))
                                           or (v[0] == '"' and v[-1] == '"')):
            out.append(BibField(name, s + 1, e - 1, False))
        else:
            out.append(BibField(name, s, e, joined or not v.isdigit()))

    for m in _FIELD_MARKS.finditer(text, lo + 1, hi):
        c = m.group()
        if value_at is None:                       # the key, or a field's name
            if c == ",":
                name_at = m.end()
            elif c == "=" and name_at is not None:
                name, value_at = text[name_at:m.start()].strip().lower(), m.end()
                depth, quoted, joined = 0, False, False
            continue
        if c == "{" and not quoted:
            depth += 1
        elif c == "}" and not quoted:
            depth -= 1
            if depth < 0:                          # the entry's own end (an unclosed entry's text)
                value(m.start())
                return out
        elif c == '"' and depth == 0:
            quoted = not quoted
        elif c == "#" and depth == 0 and not quoted:
            joined = True
        elif c == "," and depth == 0 and not quoted:
            value(m.start())
            value_at, name_at = None, m.end()
    if value_at is not None:
        value(hi)
    return out


def field_of(text: str, block: BibBlock, name: str) -> BibField | None:
    """The first field ``name`` (any case) of the entry ``block``: BibTeX keeps the first of a
    repeated field; None when the entry lacks it."""
    name = name.lower()
    return next((f for f in entry_fields(text, block) if f.name == name), None)


def find_entry(text: str, key: str) -> BibBlock | None:
    """The first entry of the key ``key`` in a ``.bib`` text (the one BibTeX uses)."""
    return next((b for b in bib_blocks(text) if b.entry and b.key == key), None)


def block_at_line(text: str, line: int) -> BibBlock | None:
    """The first block whose ``@`` is on ``line`` (from 1)."""
    lines = lines_of(text)
    lo = lines.starts[min(max(line - 1, 0), len(lines.starts) - 1)]
    hi = lines.starts[line] if line < len(lines.starts) else len(text)
    return next((b for b in bib_blocks(text) if lo <= b.start < hi), None)


def head_span(text: str, block: BibBlock) -> tuple[int, int]:
    """(start, end) of the head of ``block``: from its ``@`` to the end of that line, within the block."""
    nl = text.find("\n", block.start, block.end)
    end = nl if nl >= 0 else block.end
    return block.start, (end - 1 if end > block.start and text[end - 1] == "\r" else end)


def field_value(text: str, line: int, field: str) -> tuple[int, int] | None:
    """(start, end) offsets of the value of ``field`` (``year``, ``author``, ...) of the entry whose
    head is on ``line`` (from 1): inside its braces or quotes, or the bare word; None when the
    entry lacks it."""
    block = block_at_line(text, line)
    f = field_of(text, block, field) if block is not None else None
    return (f.start, f.end) if f is not None else None


def appended_entry(text: str, bibtex: str) -> types.TextEdit:
    """The edit that adds ``bibtex`` at the end of a ``.bib`` file's text, after a blank line."""
    if not text or text.endswith("\n\n"):
        sep = ""
    else:
        sep = "\n" if text.endswith("\n") else "\n\n"
    end = lines_of(text).end()
    return types.TextEdit(range=types.Range(start=end, end=end), new_text=sep + bibtex.strip() + "\n")
