"""Arguments of LaTeX commands: the ``{...}`` group or optional ``[...]`` argument at a position
of the source, read without a full TeX parser (backslash escapes and nested braces respected).

Scanners that read many arguments of one text pass a :class:`BraceIndex` of it: every ``{`` of the
text is matched with its ``}`` in one pass (built on first use), so each argument costs a look-up
instead of a scan to its end. Without one, an unclosed ``{`` scans to the end of the text, and a
text with many unclosed arguments (``\\cite{`` repeated) would cost time quadratic in its length.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left

_WS = re.compile(r"[ \t\n]*")
_TOKEN = re.compile(r"\\.|[{}]", re.S)       # an escape (backslash + any character) or a brace
MAX_BRACKET = 2000                           # how far an optional [...] argument may run


class BraceIndex:
    """Where each ``{`` of ``text`` closes: one pass over the text (at the first look-up), with the
    same rules as :func:`braced` (a backslash escapes the next character, braces nest)."""

    __slots__ = ("text", "_opens", "_closes")

    def __init__(self, text: str):
        self.text = text
        self._opens: array | None = None
        self._closes: array | None = None

    def _build(self) -> None:
        opens, closes, stack = array("q"), array("q"), []
        for m in _TOKEN.finditer(self.text):
            c = m.group()
            if c == "{":
                stack.append(len(opens))
                opens.append(m.start())
                closes.append(-1)
            elif c == "}" and stack:
                closes[stack.pop()] = m.start()
        self._opens, self._closes = opens, closes

    def close(self, i: int) -> int | None:
        """The index of the ``}`` closing the ``{`` at ``text[i]``; None when it never closes."""
        if self._opens is None:
            self._build()
        k = bisect_left(self._opens, i)
        if k < len(self._opens) and self._opens[k] == i:
            j = self._closes[k]
            return j if j >= 0 else None
        return _scan_close(self.text, i)      # a "{" escaped when read from the start: scan it alone


def _scan_close(text: str, i: int) -> int | None:
    depth, j, n = 0, i, len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return None


def braced(text: str, start: int, index: BraceIndex | None = None) -> tuple[str, int] | None:
    """``(content, index after)`` of the brace group opening at ``text[start]`` (skipping white
    space); None when there is none or it never closes. ``index`` (a :class:`BraceIndex` of
    ``text``) makes it a look-up; give one when reading many arguments of the same text."""
    i = _WS.match(text, start).end() if start < len(text) else start
    if i >= len(text) or text[i] != "{":
        return None
    j = index.close(i) if index is not None and index.text is text else _scan_close(text, i)
    return None if j is None else (text[i + 1:j], j + 1)


def bracketed(text: str, start: int) -> tuple[str, int] | None:
    """``(content, index after)`` of an optional ``[...]`` argument at ``text[start]`` (white space
    skipped, nested braces allowed, at most :data:`MAX_BRACKET` characters); None when there is none."""
    i = _WS.match(text, start).end() if start < len(text) else start
    if i >= len(text) or text[i] != "[":
        return None
    end = min(len(text), i + MAX_BRACKET)
    a, depth = i + 1, 0
    while True:                               # each "]" in turn, with the brace depth before it
        k = text.find("]", a, end)
        if k < 0:
            return None
        depth += text.count("{", a, k) - text.count("}", a, k)
        if depth <= 0:
            return text[i + 1:k], k + 1
        a = k + 1
