"""BibTeX entries written so that BibTeX reads them and LaTeX typesets them.

A record's title, names and venue come from a paper list or a proceedings page, as plain text that
may hold LaTeX of its own (``$\\ell_1$``, ``\\textit{...}``). :func:`latex_text` writes such a
value for a BibTeX field:

* a ``$...$`` or ``\\(...\\)`` span is math and kept as it is (a ``$`` with no partner is ``\\$``);
* a LaTeX command (``\\textit``, ``\\ell``, an escaped character such as ``\\&``) is kept;
* outside math, ``%`` ``&`` ``#`` ``_`` are escaped with a backslash, ``^`` and ``~`` are written
  ``\\textasciicircum{}`` and ``\\textasciitilde{}``; inside math ``%`` ``&`` ``#`` are escaped
  (``%`` would start a comment, ``&`` and ``#`` stop LaTeX), ``_`` ``^`` ``~`` are math;
* braces are kept where they pair; a brace without a partner (BibTeX counts ``\\{`` as a brace
  too) is written ``\\textbraceleft{}`` / ``\\textbraceright{}`` (``\\lbrace`` / ``\\rbrace`` in
  math), so every value is balanced and the entry's braces end where BibTeX expects;
* a control character (C0, C1, DEL) or a bidirectional control is written as its escape after
  ``\\textbackslash{}`` (``\\textbackslash{}x1b``): seen in the output, never emitted raw;
* a backslash that ends the value is ``\\textbackslash{}`` (it would escape the closing brace);
* a line break, tab or carriage return is a space (a title is one line).

:func:`braced_value` keeps a value as the user wrote it (their own LaTeX) but balanced and
without raw controls; :func:`entry` writes the entry.
"""

from __future__ import annotations

import re

from .shown import UNSAFE

#: outside math: the character as LaTeX text
_TEXT_SPECIAL = {"%": r"\%", "&": r"\&", "#": r"\#", "_": r"\_", "^": r"\textasciicircum{}",
                 "~": r"\textasciitilde{}", "$": r"\$"}
#: inside math: what still stops LaTeX there
_MATH_SPECIAL = {"%": r"\%", "&": r"\&", "#": r"\#"}
_COMMAND = re.compile(r"\\(?:[A-Za-z]+|.)", re.S)
#: white space a one-line value holds as a space (a record's title with a line break or a carriage return)
_BREAKS = re.compile(r"[\t\n\r\v\f\x85\u2028\u2029]+")


def _controls(text: str) -> str:
    """Each character of :data:`~mustcite.shown.UNSAFE` as ``\\textbackslash{}x1b``."""
    def esc(m: re.Match) -> str:
        o = ord(m.group())
        return "\\textbackslash{}" + (f"x{o:02x}" if o < 0x100 else f"u{o:04x}")
    return UNSAFE.sub(esc, text)


def _unpaired_braces(text: str) -> set[int]:
    """Positions of the braces of ``text`` without a partner, counted as BibTeX counts them
    (every ``{`` and ``}``, escaped or not)."""
    stack, bad = [], set()
    for i, c in enumerate(text):
        if c == "{":
            stack.append(i)
        elif c == "}":
            if stack:
                stack.pop()
            else:
                bad.add(i)
    return bad | set(stack)


def _math_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each ``$...$`` and ``\\(...\\)`` span (delimiters included); a ``$``
    escaped (``\\$``) or with no partner opens none."""
    spans, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            if text.startswith("\\(", i):
                j = text.find("\\)", i + 2)
                if j >= 0:
                    spans.append((i, j + 2))
                    i = j + 2
                    continue
            i += 2
            continue
        if c == "$":
            j = i + 1
            while j < n and (text[j] != "$" or text[j - 1] == "\\"):
                j += 1
            if j < n and j > i + 1:
                spans.append((i, j + 1))
                i = j + 1
                continue
        i += 1
    return spans


def latex_text(value: object) -> str:
    """A record's plain text (that may hold LaTeX) as a BibTeX field value LaTeX typesets as
    written (see the module doc)."""
    text = _controls(_BREAKS.sub(" ", str(value if value is not None else "")))
    bad = _unpaired_braces(text)
    spans = _math_spans(text)
    out, i, n, k = [], 0, len(text), 0
    while i < n:
        while k < len(spans) and spans[k][1] <= i:
            k += 1
        math = k < len(spans) and spans[k][0] <= i < spans[k][1]
        c = text[i]
        if c == "\\":
            m = _COMMAND.match(text, i)
            if m is None:                                   # the value's last character
                out.append("\\textbackslash{}")
                i += 1
                continue
            if m.group() in ("\\{", "\\}") and i + 1 in bad:
                out.append(_lone_brace(m.group()[1], math))
            else:
                out.append(m.group())
            i = m.end()
            continue
        if c in "{}" and i in bad:
            out.append(_lone_brace(c, math))
        elif c == "$" and (math and (i == spans[k][0] or i == spans[k][1] - 1)):
            out.append(c)
        else:
            out.append((_MATH_SPECIAL if math else _TEXT_SPECIAL).get(c, c))
        i += 1
    return "".join(out)


def _lone_brace(c: str, math: bool) -> str:
    if math:
        return "\\lbrace{}" if c == "{" else "\\rbrace{}"
    return "\\textbraceleft{}" if c == "{" else "\\textbraceright{}"


def braced_value(value: object) -> str:
    """A value as the user wrote it in their own ``.bib`` (their LaTeX, kept), with controls
    escaped as :func:`latex_text` escapes them and any brace without a partner written as a
    command, so that the field still ends where BibTeX expects."""
    text = _controls(str(value if value is not None else ""))
    bad = _unpaired_braces(text)
    if bad:
        out: list[str] = []
        for i, c in enumerate(text):
            if i in bad:
                if out and out[-1] == "\\":            # "\{": the command is the brace
                    out.pop()
                out.append(_lone_brace(c, False))
            else:
                out.append(c)
        text = "".join(out)
    if re.search(r"(?<!\\)(?:\\\\)*\\$", text):
        text = text[:-1] + "\\textbackslash{}"
    return text


def entry(kind: str, key: str, fields: list[tuple[str, str]]) -> str:
    """``@kind{key,`` then one ``name = {value}`` a line; each value as given (already written
    by :func:`latex_text` or :func:`braced_value`)."""
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{kind}{{{key},\n{body}\n}}\n"
