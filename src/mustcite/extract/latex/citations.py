"""Citation commands of a LaTeX source turned into markers.

:func:`mark_citations` replaces every citation command (``\\cite``, natbib's ``\\citet``/
``\\citep``/... and their capitalised forms, biblatex's ``\\autocite``/``\\parencite``/
``\\textcite``/``\\footcite``/``\\smartcite`` and the multi-cite ``\\cites`` family, with optional
arguments) by a marker (:data:`MARK_START` + citation number + :data:`MARK_END`, found again with
:data:`MARKER`) and returns the :class:`Citation` of each marker; ``\\nocite`` keys are returned
apart (references without a mention). :func:`citation_style` tells numeric from author-year.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .arguments import BraceIndex, braced, bracketed

MARK_START, MARK_END = "\ue000", "\ue001"    # a citation marker: MARK_START + occurrence number + MARK_END
MARKER = re.compile(f"{MARK_START}(\\d+){MARK_END}")

_CITE = re.compile(
    r"\\((?:[Cc]ite(?:t|p|alt|alp|author|year|yearpar|num|title|date|url|s)?\*?)"
    r"|(?:[Aa]uto|[Pp]aren|[Tt]ext|[Ff]oot|[Ss]mart|[Ss]uper|[Ff]ull)cites?\*?"
    r"|footcitetext|nocite|[Cc]itep?s|[Cc]iteyear|[Cc]iteauthor)(?![a-zA-Z])")
TEXTUAL_COMMANDS = {"citet", "textcite", "citeauthor", "citealt"}


@dataclass
class Citation:
    command: str
    keys: list[str]
    pre: str = ""
    post: str = ""


def _cite_args(text: str, j: int, multi: bool,
               index: BraceIndex | None = None) -> tuple[list[tuple[str, str, list[str]]], int] | None:
    groups = []
    while True:
        opts = []
        k = j
        for _ in range(2):
            b = bracketed(text, k)
            if not b:
                break
            opts.append(b[0])
            k = b[1]
        br = braced(text, k, index)
        if not br:
            break
        keys = [x.strip() for x in br[0].split(",") if x.strip()]
        pre, post = ("", opts[0]) if len(opts) == 1 else (opts[0], opts[1]) if opts else ("", "")
        groups.append((pre, post, keys))
        j = br[1]
        if not multi:
            break
    return (groups, j) if groups else None


def _commands(text: str):
    """Each citation command of ``text``: (its match, its name, its argument groups, where it ends)."""
    pos = 0
    index = BraceIndex(text)          # one pass for every argument: an unclosed "{" costs no rescan
    for m in _CITE.finditer(text):
        if m.start() < pos:
            continue
        cmd = m.group(1).rstrip("*")
        multi = cmd.endswith("cites") or cmd in ("cites", "Cites")
        got = _cite_args(text, m.end(), multi, index)
        if got is None:
            continue
        groups, pos = got
        yield m, cmd, groups, pos


def mark_citations(text: str) -> tuple[str, list[Citation], list[str]]:
    """``text`` with every citation command replaced by a marker, the citations (one per marker,
    in order) and the ``\\nocite`` keys."""
    out, cites, nocite = [], [], []
    pos = 0
    for m, cmd, groups, end in _commands(text):
        out.append(text[pos:m.start()])
        pos = end
        keys = [k for g in groups for k in g[2]]
        if cmd == "nocite":
            nocite.extend(keys)
            continue
        cites.append(Citation(cmd, keys, groups[0][0], groups[-1][1]))
        out.append(f"{MARK_START}{len(cites) - 1}{MARK_END}")
    out.append(text[pos:])
    return "".join(out), cites, nocite


@dataclass(frozen=True)
class KeySpan:
    """One key of a citation command and where it is: ``start``/``end`` are offsets in the text."""

    key: str
    command: str
    start: int
    end: int


def citation_keys(text: str) -> list[KeySpan]:
    """Every key of every citation command of ``text`` (``\\nocite`` included), in order, with its
    offsets (for an editor to point at a key; :func:`mark_citations` reads the same commands)."""
    out: list[KeySpan] = []
    index = BraceIndex(text)
    for m, cmd, _, pos in _commands(text):
        j = m.end()
        while j < pos:
            for _ in range(2):          # the optional arguments, as _cite_args skips them
                opt = bracketed(text, j)
                if not opt:
                    break
                j = opt[1]
            opening = text.find("{", j, pos)
            if opening < 0:
                break
            arg = braced(text, opening, index)
            if arg is None:
                break
            inner, after = arg
            at = opening + 1
            for piece in inner.split(","):
                key = piece.strip()
                if key:
                    start = at + piece.index(key)
                    out.append(KeySpan(key, cmd, start, start + len(key)))
                at += len(piece) + 1
            j = after
    return out


def citation_style(preamble: str, cites: list[Citation]) -> str:
    """"numeric" or "author-year", from the packages and bibliography style (else the commands)."""
    p = preamble
    # option lists and names are bounded: an unclosed "[" or "{" must not make each match scan to the end
    if any(re.search(r"\bnumbers\b", m.group(1)) for m in _NATBIB_OPTS.finditer(p)) or _CITE_PKG.search(p):
        return "numeric"
    m = _BIBLATEX_OPTS.search(p)
    if m:
        style = re.search(r"\b(?:citestyle|style)\s*=\s*([\w-]+)", m.group(1))
        if style:
            return "author-year" if re.search(r"author|apa|chicago|mla|harvard", style.group(1)) else "numeric"
    m = _BIBSTYLE.search(p)
    if m:
        s = m.group(1).lower()
        if s in ("plain", "unsrt", "abbrv", "ieeetr", "ieeetran", "splncs04", "splncs", "alpha", "acm",
                 "siam", "unsrtnat", "abbrvnat", "plainnat", "naturemag", "vancouver") and not re.search(r"natbib", p):
            return "numeric"
        if re.search(r"nat$|apa|named|chicago|harvard|acl|iclr|icml|neurips|aaai", s):
            return "author-year" if not re.search(r"numbers", p) else "numeric"
    if _NATBIB.search(p) or any(c.command.lower() not in ("cite",) for c in cites):
        return "author-year"
    return "numeric"


_NATBIB_OPTS = re.compile(r"\\usepackage\s*\[([^\]]{0,2000})\]\s*\{natbib\}")
_CITE_PKG = re.compile(r"\\usepackage\s*(?:\[[^\]]{0,2000}\])?\s*\{cite\}")
_BIBLATEX_OPTS = re.compile(r"\\usepackage\s*\[([^\]]{0,2000})\]\s*\{biblatex\}")
_BIBSTYLE = re.compile(r"\\bibliographystyle\s*\{([^}]{0,500})\}")
_NATBIB = re.compile(r"\\usepackage\s*(?:\[[^\]]{0,2000}\])?\s*\{natbib\}")
