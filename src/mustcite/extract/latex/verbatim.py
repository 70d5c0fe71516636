"""Source text that is not prose, blanked in place: every character kept at its offset, every line
break kept, so that positions in the blanked text are positions in the file.

* :func:`blank_verbatim`: the content of ``verbatim``-like environments (``verbatim``, fancyvrb's
  ``Verbatim``/``BVerbatim``/``LVerbatim``, ``lstlisting``, ``minted``, ``comment``) and of the inline
  forms ``\\verb|...|`` and ``\\verb*|...|`` (any delimiter), ``\\lstinline|...|`` /
  ``\\lstinline[opts]{...}`` and ``\\mintinline{lang}{...}``: code shown as typed, never a name, a
  citation or a ``\\documentclass``;
* :func:`bound_braces`: the text inside braces nested deeper than :data:`MAX_BRACE_DEPTH`, which is
  no prose either (a generated or hostile file) and would make the LaTeX-to-text step recurse that
  deep.

Both read ``%`` comments as TeX does (a ``%`` after an even number of backslashes runs to the line
end) and leave them as they are, and both are one pass over the text.
"""

from __future__ import annotations

import re

#: braces nested deeper than this: the text inside is not read
MAX_BRACE_DEPTH = 40

VERBATIM_ENVIRONMENTS = ("verbatim", "verbatim*", "Verbatim", "Verbatim*", "BVerbatim", "BVerbatim*", "LVerbatim",
                         "LVerbatim*", "lstlisting", "minted", "comment")

_ENV_NAMES = "|".join(re.escape(e) for e in sorted(VERBATIM_ENVIRONMENTS, key=len, reverse=True))
_TOKENS = re.compile(r"\\(verb\*?|lstinline|mintinline)(?![A-Za-z])"
                     r"|\\begin[ \t]*\{(" + _ENV_NAMES + r")\}"
                     r"|\\.|%", re.S)
_NOT_NEWLINE = re.compile(r"[^\n]")
_END_CACHE: dict[str, re.Pattern] = {}


def _blank(s: str) -> str:
    return _NOT_NEWLINE.sub(" ", s)


def _end_of(env: str) -> re.Pattern:
    if env not in _END_CACHE:
        _END_CACHE[env] = re.compile(r"\\end[ \t]*\{" + re.escape(env) + r"\}")
    return _END_CACHE[env]


def _inline_end(text: str, i: int, braces: bool) -> tuple[int, int] | None:
    """``(start, end)`` of an inline verbatim argument at ``text[i]`` on its own line: a delimited
    one (``|code|``, any character but a letter, a space or ``*``) or, where ``braces``, ``{code}``."""
    line_end = text.find("\n", i)
    line_end = len(text) if line_end < 0 else line_end
    if i >= line_end:
        return None
    d = text[i]
    if braces and d == "{":
        depth, j = 0, i
        while j < line_end:
            c = text[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return i + 1, j
            j += 1
        return None
    if d.isalpha() or d in " \t*{}\\":
        return None
    j = text.find(d, i + 1, line_end)
    return None if j < 0 else (i + 1, j)


def blank_verbatim(text: str) -> str:
    """``text`` with the content of verbatim environments and inline verbatim commands blanked
    (their commands and delimiters kept)."""
    if "\\verb" not in text and "\\begin" not in text and "inline" not in text:
        return text
    out, pos, at = [], 0, 0
    unclosed: set[str] = set()      # environments with no \end after some point: none after any later one
    while True:
        m = _TOKENS.search(text, at)
        if m is None:
            break
        tok = m.group(0)
        if tok == "%":
            nl = text.find("\n", m.end())
            at = len(text) if nl < 0 else nl
            continue
        if m.group(2):                                  # \begin{verbatim} ... \end{verbatim}
            e = None if m.group(2) in unclosed else _end_of(m.group(2)).search(text, m.end())
            if e is None:                               # searched to the end once, never again
                unclosed.add(m.group(2))
                at = m.end()
                continue
            out += [text[pos:m.end()], _blank(text[m.end():e.start()])]
            pos = at = e.start()
            continue
        if not m.group(1):                              # any other escape
            at = m.end()
            continue
        cmd, i = m.group(1), m.end()
        if cmd == "mintinline":                         # \mintinline{language}{code}
            if i < len(text) and text[i] == "{":
                close = text.find("}", i, i + 200)
                i = close + 1 if close >= 0 else i
        elif cmd == "lstinline" and i < len(text) and text[i] == "[":   # \lstinline[options]
            close = text.find("]", i, i + 2000)
            i = close + 1 if close >= 0 else i
        span = _inline_end(text, i, braces=not cmd.startswith("verb"))
        if span is None:
            at = m.end()
            continue
        a, b = span
        out += [text[pos:a], _blank(text[a:b])]
        pos = at = b + 1 if b < len(text) else b
        out.append(text[b:pos])
    out.append(text[pos:])
    return "".join(out)


_BRACE_TOKENS = re.compile(r"\\.|[{}%]", re.S)


def bound_braces(text: str, limit: int = MAX_BRACE_DEPTH) -> tuple[str, list[int]]:
    """``text`` with everything inside braces nested deeper than ``limit`` blanked (the braces of
    that group too, so the rest stays balanced), and the offset of each group blanked."""
    if text.count("{") <= limit:
        return text, []
    out, pos, depth, cut, where = [], 0, 0, -1, []
    at = 0
    while True:
        m = _BRACE_TOKENS.search(text, at)
        if m is None:
            break
        tok, at = m.group(0), m.end()
        if tok == "%":
            nl = text.find("\n", at)
            at = len(text) if nl < 0 else nl
        elif tok == "{":
            depth += 1
            if depth == limit + 1:
                cut = m.start()
                where.append(cut)
        elif tok == "}" and depth > 0:
            depth -= 1
            if depth == limit and cut >= 0:
                out += [text[pos:cut], _blank(text[cut:m.end()])]
                pos, cut = m.end(), -1
    if cut >= 0:                                        # never closed: blanked to the end
        out += [text[pos:cut], _blank(text[cut:])]
        pos = len(text)
    out.append(text[pos:])
    return "".join(out), where
