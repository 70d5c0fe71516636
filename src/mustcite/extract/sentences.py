"""Sentence splitting for scientific prose.

Splits after ``.``, ``!`` or ``?`` followed by white space and a sentence-opening character, but
not after abbreviations (``et al.``, ``e.g.``, ``i.e.``, ``Fig.``, ``Eq.``, ``Sec.``, ...), single
initials (``J. Smith``), or inside inline math (``\\( ... \\)``) and brackets. Decimals never split
(no white space after the point). Linear time: one regex scan plus a check per candidate.
"""

from __future__ import annotations

import re

from .mathspans import math_spans

ABBREVIATIONS = frozenset("""
al e.g i.e eg ie cf vs etc fig figs eq eqs eqn eqns sec secs sect tab tabs ref refs
no nos resp approx appx app alg algo thm lem def prop cor ch chap pp p vol ed eds
dr mr mrs ms prof st jr sr inc ltd co corp dept univ jan feb mar apr jun jul aug sep sept oct
nov dec viz ca esp w.r.t wrt i.i.d iid a.k.a aka c.f
""".split())

# candidate boundary: terminal punctuation, optional closing quotes/brackets, white space
_BOUNDARY = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+")
_NEXT_OK = re.compile(r"[A-Z0-9\[(\"'\u201c\u2018\\*_$]")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")
def split_sentences(text: str) -> list[str]:
    """Split ``text`` (one paragraph) into sentences; white space inside is kept as is."""
    text = text.strip()
    if not text:
        return []
    spans = math_spans(text)
    si = 0
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end_punct = m.start() + 1        # just after the terminal punctuation
        nxt = m.end()
        if nxt >= len(text):
            break
        while si < len(spans) and spans[si][1] <= m.start():
            si += 1
        if si < len(spans) and spans[si][0] <= m.start() < spans[si][1]:
            continue                       # inside inline math
        if not _NEXT_OK.match(text, nxt):
            continue                       # next word starts lower case: not a new sentence
        if text[m.start()] == ".":
            wm = _WORD_BEFORE.search(text, max(0, m.start() - 12), end_punct)
            if wm:
                word = wm.group(1)
                low = word.lower().rstrip(".")
                if low in ABBREVIATIONS:
                    continue
                if len(word) == 1 and word.isupper():
                    continue               # an initial: "J. Smith"
                if re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word):
                    continue               # "e.g", "U.S", "i.i.d"
        if m.start() - start < 600 and _unbalanced(text, start, m.start()):
            continue
        out.append(text[start:m.end()].strip())
        start = nxt
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return [s for s in out if s]


def _unbalanced(text: str, a: int, b: int) -> bool:
    """True when a bracket or parenthesis opened in text[a:b] is still open (e.g. '(see Fig. 2. Then')."""
    seg = text[a:b]
    return seg.count("(") > seg.count(")") or seg.count("[") > seg.count("]")
