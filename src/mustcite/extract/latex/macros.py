"""The draft's own macros, expanded before the text is read.

Authors name their method, their datasets and even their title through macros
(``\\newcommand{\\method}{\\textsc{DataComp}\\xspace}``, ``\\title{\\papertitle}``) and acronyms
(``\\acro{ood}{out-of-distribution}`` then ``\\ac*{ood}``). Left as they are, the title comes out
empty and names drop out of sentences. :func:`expand_macros` reads the definitions anywhere in the
project text and replaces each use by its body:

* ``\\newcommand``, ``\\renewcommand``, ``\\providecommand``, ``\\DeclareRobustCommand`` (starred
  or not) with up to nine arguments and an optional first argument's default, and ``\\def``
  without parameters; the last definition wins, as in TeX (``\\providecommand`` only defines a
  name not yet defined);
* acronyms of the ``acronym`` and ``acro`` packages and of ``glossaries``: ``\\acro{id}[short]{long}``,
  ``\\newacronym{id}{short}{long}``, ``\\DeclareAcronym{id}{short=..., long=...}``; ``\\ac``,
  ``\\acs``, ``\\gls`` and their capitalised and starred forms give the short form, ``\\acl``
  the long one, ``\\acf`` "long (short)", and the plural forms (``\\acp``, ``\\glspl``) add "s".

Commands the reader itself interprets (citations, sectioning, title, abstract, includes,
environments, bibliography) are never redefined, nor internal ``@`` names. Expansion is bounded
and linear: at most :data:`MAX_PASSES` passes over the text (a macro whose body uses another is
expanded on the next pass), each one a single scan with a brace index, at most
:data:`MAX_DEFINITIONS` definitions; the text may grow to at most :data:`MAX_GROWTH` times its
length plus :data:`MAX_EXTRA` characters, and all the passes together write at most
:data:`MAX_PASSES` times that. Where a cap stops the expansion (the text would grow past it, or a
macro still expands to macros after the last pass), the rest is left as it is and a :class:`Stop`
names the macro (the reading turns it into a message with the file and line of its first use).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .arguments import BraceIndex, braced, bracketed
from .includes import _comment_start

MAX_PASSES = 4
MAX_DEFINITIONS = 5000
MAX_GROWTH = 2
MAX_EXTRA = 16 * 1024      # characters the text may grow by beyond MAX_GROWTH times its length
MAX_BODY = 5000            # a longer macro body is a program, not a name: not expanded

_NAME = r"[A-Za-z]+"
_DEFINE = re.compile(r"\\(newcommand|renewcommand|providecommand|DeclareRobustCommand)\*?\s*"
                     r"(?:\{\s*\\(" + _NAME + r")\s*\}|\\(" + _NAME + r"))")
_DEF = re.compile(r"\\[egx]?def\s*\\(" + _NAME + r")\s*(?=\{)")
_ACRO = re.compile(r"\\(acro|newacronym|DeclareAcronym|newabbreviation)\s*(?=[\[{])")
_USE = re.compile(r"\\(" + _NAME + r")(\*?)")
_DEFINED_HERE = re.compile(r"(?:(?:newcommand|renewcommand|providecommand|DeclareRobustCommand)\*?\s*\{?|def)\s*$")
_KEYVAL = re.compile(r"\b(short|long)\s*=\s*(\{[^{}]*\}|[^,]*)")

#: commands this reader interprets itself: never replaced by a draft's definition
PROTECTED = frozenset("""
title icmltitle author abstract maketitle begin end input include subfile import subimport includeonly
section subsection subsubsection paragraph subparagraph chapter part appendix caption label ref eqref
autoref cref Cref item bibliography addbibresource bibliographystyle printbibliography nocite bibitem
documentclass usepackage newcommand renewcommand providecommand def edef gdef xdef let iffalse fi else
thebibliography emph textbf textit texttt textsc mathrm url href footnote
""".split())

#: acronym commands: (form, capitalised, plural)
_ACRONYM_USES = {
    "ac": ("short", False, False), "Ac": ("short", True, False), "acs": ("short", False, False),
    "acl": ("long", False, False), "Acl": ("long", True, False), "acf": ("full", False, False),
    "Acf": ("full", True, False), "acp": ("short", False, True), "Acp": ("short", True, True),
    "acsp": ("short", False, True), "aclp": ("long", False, True), "acfp": ("full", False, True),
    "gls": ("short", False, False), "Gls": ("short", True, False), "glspl": ("short", False, True),
    "Glspl": ("short", True, True), "acrshort": ("short", False, False), "acrlong": ("long", False, False),
    "acrfull": ("full", False, False), "glsentryshort": ("short", False, False),
    "glsentrylong": ("long", False, False),
}


@dataclass(frozen=True)
class Macro:
    body: str
    nargs: int = 0
    default: str | None = None       # the optional first argument's default


def _protected(name: str) -> bool:
    return name in PROTECTED or "cite" in name.lower() or name in _ACRONYM_USES


def read_definitions(text: str) -> tuple[dict[str, Macro], dict[str, tuple[str, str]]]:
    """``(macros, acronyms)`` defined in ``text``: name -> :class:`Macro`, id -> (short, long)."""
    index = BraceIndex(text)
    macros: dict[str, Macro] = {}
    found: list[tuple[int, str, str, Macro]] = []
    for m in _DEFINE.finditer(text):
        name = m.group(2) or m.group(3)
        pos, nargs, default = m.end(), 0, None
        got = bracketed(text, pos)
        if got and got[0].strip().isdigit():
            nargs, pos = min(9, int(got[0].strip())), got[1]
            got = bracketed(text, pos)
            if got:
                default, pos = got
        body = braced(text, pos, index)
        if body is not None:
            found.append((m.start(), m.group(1), name, Macro(body[0], nargs, default)))
    for m in _DEF.finditer(text):
        body = braced(text, m.end(), index)
        if body is not None:
            found.append((m.start(), "def", m.group(1), Macro(body[0])))
    for _, kind, name, macro in sorted(found, key=lambda f: f[0])[:MAX_DEFINITIONS]:
        if _protected(name) or len(macro.body) > MAX_BODY or "@" in macro.body:
            continue
        if kind == "providecommand" and name in macros:
            continue
        macros[name] = macro
    return macros, _read_acronyms(text, index)


def _read_acronyms(text: str, index: BraceIndex) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for m in _ACRO.finditer(text):
        kind, pos = m.group(1), m.end()
        if kind in ("newacronym", "newabbreviation"):
            opt = bracketed(text, pos)
            pos = opt[1] if opt else pos
        first = braced(text, pos, index)
        if first is None:
            continue
        key, pos = first[0].strip(), first[1]
        if kind == "DeclareAcronym":
            short = long = ""
            keyvals = braced(text, pos, index)
            for k, v in _KEYVAL.findall(keyvals[0] if keyvals else ""):
                v = v.strip().strip("{}").strip()
                short, long = (v, long) if k == "short" else (short, v)
            if short or long:
                out.setdefault(key, (short or key, long or short))
            continue
        if kind == "acro":
            opt = bracketed(text, pos)
            short = opt[0] if opt else key
            pos = opt[1] if opt else pos
            long = braced(text, pos, index)
            if long is not None:
                out.setdefault(key, (short, long[0]))
            continue
        short = braced(text, pos, index)
        long = braced(text, short[1], index) if short else None
        if short and long:
            out.setdefault(key, (short[0], long[0]))
    return out


def _acronym_text(entry: tuple[str, str], form: str, capital: bool, plural: bool) -> str:
    short, long = entry
    s = "s" if plural else ""
    text = {"short": short + s, "long": long + s, "full": f"{long}{s} ({short}{s})"}[form]
    return text[:1].upper() + text[1:] if capital and text else text


def _argument(text: str, pos: int, index: BraceIndex) -> tuple[str, int] | None:
    """A command's argument at ``pos``: a brace group, else the next non-space character or command."""
    got = braced(text, pos, index)
    if got is not None:
        return got
    m = re.compile(r"\s*(\\[A-Za-z]+|[^\s{}\\])").match(text, pos)
    return (m.group(1), m.end()) if m else None


def _fill(body: str, args: list[str]) -> str:
    """A macro's body with its parameters #1..#9 replaced by ``args`` (an absent one by nothing)."""
    return re.sub(r"#([1-9])", lambda g: args[int(g.group(1)) - 1] if int(g.group(1)) <= len(args) else "", body)


def _expand_once(text: str, macros: dict[str, Macro], acronyms: dict[str, tuple[str, str]],
                 limit: int) -> tuple[str, bool, str | None]:
    """One pass: ``(text, whether anything was expanded, the macro whose use would have made the
    text longer than ``limit``)``; at that use the pass stops, the rest of the text left as it is."""
    index = BraceIndex(text)
    out, last, changed, size = [], 0, False, 0
    for m in _USE.finditer(text):
        if m.start() < last:
            continue                       # inside an argument already consumed
        name = m.group(1)
        if _DEFINED_HERE.search(text, max(0, m.start() - 40), m.start()):
            continue                       # the name in its own definition
        repl, end = None, m.end()
        if name in macros:
            mac = macros[name]
            args, pos, ok = [], m.end() if not m.group(2) else m.end(1), True
            if mac.default is not None:
                opt = bracketed(text, pos)
                args.append(opt[0] if opt else mac.default)
                pos = opt[1] if opt else pos
            while len(args) < mac.nargs:
                got = _argument(text, pos, index)
                if got is None:
                    ok = False
                    break
                args.append(got[0])
                pos = got[1]
            if not ok:
                continue
            if mac.nargs == 0 and text.startswith("{}", pos):
                pos += 2                   # \method{} : the empty group only keeps a space
            repl = _fill(mac.body, args) if mac.nargs else mac.body
            repl = repl.replace("\\xspace", "")
            end = pos
        elif name in _ACRONYM_USES and acronyms:
            got = braced(text, m.end(), index)
            if got is None or got[0].strip() not in acronyms:
                continue
            repl = _acronym_text(acronyms[got[0].strip()], *_ACRONYM_USES[name])
            end = got[1]
        if repl is None:
            continue
        size += m.start() - last + len(repl)
        if size > limit:
            if not changed:
                return text, False, name
            out.append(text[last:])
            return "".join(out), True, name
        out.append(text[last:m.start()])
        out.append(repl)
        last, changed = end, True
    if not changed:
        return text, False, None
    out.append(text[last:])
    return "".join(out), True, None


@dataclass(frozen=True)
class Stop:
    """Where the expansion stopped short: the macro, and why (``"size"``: the text would have grown
    past its cap; ``"rounds"``: it still expanded to macros after :data:`MAX_PASSES` passes)."""

    name: str
    why: str
    limit: int


def expand_macros(text: str, stops: list[Stop] | None = None) -> str:
    """``text`` with the macros and acronyms it defines expanded (see the module's description);
    where the expansion stops at a cap, a :class:`Stop` is added to ``stops``."""
    if "\\" not in text:
        return text
    macros, acronyms = read_definitions(text)
    if not macros and not acronyms:
        return text
    limit = MAX_GROWTH * len(text) + MAX_EXTRA
    work = MAX_PASSES * limit              # characters all the passes together may write
    for _ in range(MAX_PASSES):
        text, changed, capped = _expand_once(text, macros, acronyms, min(limit, work))
        work -= len(text)
        if capped is not None:
            if stops is not None:
                stops.append(Stop(capped, "size", limit))
            return text
        if not changed:
            return text
    if stops is not None:                  # still changing after the last pass: a macro that uses itself?
        left = _still_used(text, macros)
        if left:
            stops.append(Stop(left, "rounds", MAX_PASSES))
    return text


def _still_used(text: str, macros: dict[str, Macro]) -> str | None:
    """The first draft macro still used in ``text`` (outside its own definition), if any."""
    for m in _USE.finditer(text):
        if m.group(1) in macros and not _DEFINED_HERE.search(text, max(0, m.start() - 40), m.start()):
            return m.group(1)
    return None


_DEFINITION_LINE = re.compile(r"\\(?:newcommand|renewcommand|providecommand|DeclareRobustCommand|[egx]?def"
                              r"|acro|newacronym|DeclareAcronym|newabbreviation)(?![A-Za-z])")


_DEFINING = re.compile(r"\\(?:newcommand|renewcommand|providecommand|DeclareRobustCommand)\*?\s*"
                       r"(?:\{\s*\\(" + _NAME + r")\s*\}|\\(" + _NAME + r"))(?:\s*\[[^\]]{0,20}\]){0,2}\s*(?=\{)"
                       r"|\\[egx]?def\s*\\(" + _NAME + r")[^{]{0,40}(?=\{)")


def defining_macro(code: str, at: int, reach: int = 2000) -> str | None:
    """The macro whose definition's body holds the offset ``at`` of ``code`` (the definition within
    ``reach`` characters before it), else None."""
    name = None
    for m in _DEFINING.finditer(code, max(0, at - reach), at):
        window = code[m.end():m.end() + MAX_BODY + 64]          # a body is never longer
        body = braced(window, 0)
        if body is not None and at < m.end() + body[1]:
            name = m.group(1) or m.group(2) or m.group(3)
    return name


def first_use(sources: dict[str, str], name: str) -> tuple[str, int] | None:
    """``(file, line)`` of the first use of the macro ``\\name`` in the sources (in reading order),
    outside comments and outside the definitions of macros."""
    pattern = re.compile(r"\\" + re.escape(name) + r"(?![A-Za-z])")
    for rel, text in sources.items():
        if "\\" + name not in text:
            continue
        for n, line in enumerate(text.split("\n"), 1):
            if "\\" + name not in line:
                continue
            cut = _comment_start(line)
            code = line if cut < 0 else line[:cut]
            for m in pattern.finditer(code):
                if _DEFINITION_LINE.search(code, 0, m.start()) is None:
                    return rel, n
    return None

