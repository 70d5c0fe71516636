"""Positions in the files an editor holds open: where a citation key, a bibliography command, a BibTeX
entry and one of its fields are, as LSP ranges (lines from 0, columns in UTF-16 code units).

Everything here is a pure function of a document's text.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache

from lsprotocol import types

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
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.astral = [m.start() for m in _ASTRAL.finditer(text)] if not text.isascii() else []

    def position(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        wide = bisect_left(self.astral, offset) - bisect_left(self.astral, start) if self.astral else 0
        return types.Position(line=line, character=offset - start + wide)

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


_ENTRY_HEAD = re.compile(r"^[ \t]*@[A-Za-z]+[ \t]*[{(]", re.M)


def entry_span(text: str, line: int) -> tuple[int, int]:
    """(start, end) offsets of the BibTeX entry whose head ``@type{key,`` is on ``line`` (from 1),
    up to the next entry's head."""
    lines = lines_of(text)
    start = lines.starts[min(max(line - 1, 0), len(lines.starts) - 1)]
    nxt = _ENTRY_HEAD.search(text, start + 1)
    return start, (nxt.start() if nxt else len(text))


def entry_head_range(text: str, line: int) -> types.Range:
    """The head line ``@type{key,`` of the entry on ``line`` (from 1)."""
    return lines_of(text).line_range(line - 1)


def field_value(text: str, line: int, field: str) -> tuple[int, int] | None:
    """(start, end) offsets of the value of ``field`` (``year``, ``author``, ...) inside the entry on
    ``line`` (from 1): inside its braces or quotes, or the bare word; None when the entry lacks it."""
    lo, hi = entry_span(text, line)
    m = re.compile(rf"(?im)(^|[,\s]){re.escape(field)}\s*=\s*").search(text, lo, hi)
    if not m:
        return None
    i = m.end()
    if i < hi and text[i] in "{\"":
        close = "}" if text[i] == "{" else "\""
        depth, j = 0, (i if close == "}" else i + 1)
        while j < hi:
            ch = text[j]
            if ch == "\\":
                j += 2
                continue
            if close == "}" and ch == "{":
                depth += 1
            elif ch == close and (close == "\"" or depth == 1):
                return i + 1, j
            elif ch == "}":
                depth -= 1
            j += 1
        return None
    word = re.compile(r"[^,}\s]+").match(text, i, hi)
    return (word.start(), word.end()) if word else None


def appended_entry(text: str, bibtex: str) -> types.TextEdit:
    """The edit that adds ``bibtex`` at the end of a ``.bib`` file's text, after a blank line."""
    if not text or text.endswith("\n\n"):
        sep = ""
    else:
        sep = "\n" if text.endswith("\n") else "\n\n"
    end = lines_of(text).end()
    return types.TextEdit(range=types.Range(start=end, end=end), new_text=sep + bibtex.strip() + "\n")
