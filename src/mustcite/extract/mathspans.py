"""Math spans in extracted text, found in time linear in the text (up to a log factor)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

_OPEN = {True: re.compile(r"\\[(\[]|\$"), False: re.compile(r"\\[(\[]")}
_CLOSE = {"(": re.compile(r"\\\)"), "[": re.compile(r"\\\]"), "$": re.compile(r"\$")}


def math_spans(text: str, *, dollars: bool = True) -> list[tuple[int, int]]:
    """Math spans ``(start, end)``, left to right: ``\\( ... \\)`` and ``\\[ ... \\]`` up to the
    nearest closer and, with ``dollars``, ``$...$`` (not empty), as a leftmost, non-overlapping regex
    search would find them. An opener without its closer protects nothing. Each closer position is
    found once and each opener looks its closer up by bisection: an unclosed opener never costs a
    scan to the end of the text (a regex's ``.*?`` does, quadratic on a run of them)."""
    closers = {k: [m.start() for m in rx.finditer(text)] for k, rx in _CLOSE.items()}
    spans: list[tuple[int, int]] = []
    resume = 0
    for m in _OPEN[dollars].finditer(text):
        p = m.start()
        if p < resume:
            continue                       # inside the span just found
        kind = text[p + 1] if text[p] == "\\" else "$"
        at = closers[kind]
        if kind == "$":
            i = bisect_right(at, p)
            if i < len(at) and at[i] > p + 1:
                resume = at[i] + 1
                spans.append((p, resume))
        else:
            i = bisect_left(at, p + 2)
            if i < len(at):
                resume = at[i] + 2
                spans.append((p, resume))
    return spans
