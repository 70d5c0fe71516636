"""A LaTeX document body as labelled sections and plain-text paragraphs.

:func:`split_segments` cuts the body at its headings (``\\section``... ``\\paragraph``, starred or
not; ``\\appendix``; the bibliography) and labels each segment as the Markdown path does ("2 Related
Work", "Abstract", "Appendix", "Back matter"); :func:`paragraphs` turns a segment into plain-text
paragraphs with pylatexenc (citation markers kept, floats reduced to their captions, display math
and label/reference commands dropped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..bibtex import latex_pieces
from ..latex2text import to_text as latex_to_plain
from ..sections import APPENDIX, Heading, classify
from .arguments import MAX_BRACKET, BraceIndex, braced, bracketed

_HEAD = re.compile(r"\\(part|chapter|section|subsection|subsubsection|paragraph|subparagraph)(\*?)(?![a-zA-Z])"
                   r"|\\(appendix|backmatter)(?![a-zA-Z])|\\(bibliography|printbibliography|mustcitebbl)(?![a-zA-Z])"
                   r"|\\begin\s*\{(thebibliography|abstract)\}")
_CHAPTER = re.compile(r"\\chapter\*?\s*(?:\[[^\]]{0," + str(MAX_BRACKET) + r"}\])?\s*\{")
_LEVEL = {"part": 0, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4, "paragraph": 5,
          "subparagraph": 6}


#: starts the paragraph of a heading below the main level (see :func:`split_segments`)
HEADING_MARK = "\ue020"


@dataclass
class Segment:
    label: str
    latex: str


def split_segments(body: str, messages: list[str]) -> tuple[list[Segment], str]:
    """The document body split into labelled segments; also the abstract's LaTeX ("" if none)."""
    main_level = 1 if _CHAPTER.search(body) else 2
    index = BraceIndex(body)
    segs: list[Segment] = []
    label, counter, appendix, after_refs = "", 0, False, False
    abstract = ""
    pos = 0
    for m in _HEAD.finditer(body):
        if m.start() < pos:
            continue
        segs.append(Segment(label, body[pos:m.start()]))
        pos = m.end()
        if m.group(3):
            appendix = appendix or m.group(3) == "appendix"
            label = APPENDIX if appendix else label
            continue
        if m.group(4):
            if m.group(4) == "mustcitebbl":
                b = braced(body, m.end(), index)
                pos = b[1] if b else pos
            else:
                b = bracketed(body, m.end())
                pos = b[1] if b else pos
                b = braced(body, pos, index)
                if m.group(4) == "bibliography" and b:
                    pos = b[1]
            after_refs = True
            continue
        if m.group(5) == "thebibliography":
            end = body.find("\\end{thebibliography}", pos)
            pos = len(body) if end < 0 else end + len("\\end{thebibliography}")
            after_refs = True
            continue
        if m.group(5) == "abstract":
            end = body.find("\\end{abstract}", pos)
            end = len(body) if end < 0 else end
            abstract = abstract or body[pos:end]
            pos = min(len(body), end + len("\\end{abstract}"))
            continue
        cmd, star = m.group(1), m.group(2)
        b = bracketed(body, pos)
        if b:
            pos = b[1]
        br = braced(body, pos, index)
        if not br:
            continue
        pos = br[1]
        title = re.sub(r"\s+", " ", to_text(br[0])).strip()
        level = _LEVEL[cmd]
        if level > main_level:
            # a lower heading ("\subsection{UMAP}", "\paragraph{METEOR \citep{...}.}") is a paragraph of
            # its own, marked as a heading: it names what the part is about, and may cite it
            segs.append(Segment(label, f"\n\n{HEADING_MARK}{br[0]}\n\n"))
            continue
        if appendix:
            label = APPENDIX
            continue
        if not star:
            counter += 1
        text = f"{counter} {title}" if not star else title
        label = classify(Heading(1, text), after_references=after_refs, current=label)
    segs.append(Segment(label, body[pos:]))
    return [s for s in segs if s.latex.strip()], abstract


# ---- LaTeX to text -------------------------------------------------------------------------------

# where a float or display starts; its end is searched for apart (see _pairs)
_FLOAT = re.compile(r"\\begin\s*\{(figure|table|wrapfigure|wraptable|algorithm|lstlisting|verbatim|tikzpicture|"
                    r"minted)(\*?)\}")
_DISPLAY = re.compile(r"\\begin\s*\{(equation|align|gather|multline|eqnarray|displaymath|flalign|alignat)(\*?)\}"
                      r"|\\\[|\$\$")
_DROP_CMDS = re.compile(r"\\(?:label|ref|eqref|cref|Cref|autoref|pageref|vspace|hspace|includegraphics|"
                        r"bibliographystyle|usepackage|newcommand|renewcommand|def|maketitle|tableofcontents|"
                        r"clearpage|newpage|centering|noindent|thanks|footnotemark)\*?(?![a-zA-Z])")


_ITEM = re.compile(r"\\(?:item)(?![a-zA-Z])(?:\s*\[[^\]]{0," + str(MAX_BRACKET) + r"}\])?")


def to_text(latex: str) -> str:
    """Plain text of a LaTeX fragment (pylatexenc; commands and braces dropped if it fails)."""
    latex = _SPACES.sub(" ", latex)           # pylatexenc reads a run of blanks a character at a time
    try:
        pieces = latex_pieces(latex)          # long text in pieces: pylatexenc is quadratic in one
        if len(pieces) == 1:
            text = latex_to_plain(latex)
        else:
            text = " ".join(latex_to_plain(p) for p in pieces)
    except Exception:  # pylatexenc is tolerant; a crash here must not stop the reading
        text = re.sub(r"\\[a-zA-Z]+\*?|[{}]", " ", latex)
    # math delimiters pylatexenc left as they were (unclosed, too deeply nested) are no text; left in,
    # the sentence splitter's math search would run from each one to the end of the paragraph
    return _LEFT_DELIMS.sub(" ", text) if "\\" in text else text


_LEFT_DELIMS = re.compile(r"\\[()\[\]]")
_SPACES = re.compile(r"[ \t]{2,}")


@lru_cache(maxsize=64)
def _end_of(start: str) -> re.Pattern:
    """The end of a block whose start is ``start``: its ``\\end{...}``, ``\\]`` or ``$$``."""
    if start == "\\[":
        return re.compile(r"\\\]")
    if start == "$$":
        return re.compile(r"\$\$")
    name = start[len("\\begin{"):-1]
    return re.compile(r"\\end\s*\{" + re.escape(name) + r"\}")


def _pairs(text: str, start: re.Pattern, repl) -> str:
    """``text`` with each block (a ``start`` match up to the first end of its kind, as ``start.*?end``
    with re.S) replaced by ``repl(body)``, in linear time: a kind whose end was not found after
    some start is not searched for again (no later start of it can find one either)."""
    out, pos, at, missing = [], 0, 0, set()
    while True:
        m = start.search(text, at)
        if m is None:
            break
        kind = re.sub(r"\s+", "", m.group(0))
        e = None if kind in missing else _end_of(kind).search(text, m.end())
        if e is None:
            missing.add(kind)
            at = m.start() + 1
            continue
        out.append(text[pos:m.start()])
        out.append(repl(text[m.end():e.start()]))
        pos = at = e.end()
    out.append(text[pos:])
    return "".join(out)


def _captions(body: str) -> str:
    out, pos = [], 0
    index = BraceIndex(body)
    for c in re.finditer(r"\\caption\*?(?![a-zA-Z])", body):
        if c.start() < pos:          # inside the caption just read
            continue
        j = c.end()
        b = bracketed(body, j)
        br = braced(body, b[1] if b else j, index)
        if br:
            out.append(br[0])
            pos = br[1]
    return "\n\n" + "\n\n".join(out) + "\n\n" if out else "\n\n"


def drop_refs(text: str) -> str:
    """``\\ref{...}`` and friends: their argument is a label, not prose."""
    out, pos = [], 0
    index = BraceIndex(text)
    for m in _DROP_CMDS.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.start()])
        j = m.end()
        name = m.group(0)
        if any(name.startswith("\\" + x) for x in ("ref", "eqref", "cref", "Cref", "autoref", "pageref")):
            br = braced(text, j, index)
            out.append("?" if br else "")
            pos = br[1] if br else j
            continue
        b = bracketed(text, j)
        j = b[1] if b else j
        br = braced(text, j, index)
        if name.startswith(("\\label", "\\vspace", "\\hspace", "\\includegraphics", "\\bibliographystyle",
                            "\\usepackage", "\\thanks")) and br:
            j = br[1]
        pos = j
    out.append(text[pos:])
    return "".join(out)


def paragraphs(latex: str) -> list[str]:
    """Plain-text paragraphs of a LaTeX segment (markers kept; floats reduced to their captions,
    display math dropped)."""
    latex = _pairs(latex, _FLOAT, _captions)
    latex = _pairs(latex, _DISPLAY, lambda _: " ")
    latex = drop_refs(latex)
    latex = _ITEM.sub("\n\n", latex)
    out = []
    for chunk in re.split(r"\n[ \t]*\n", latex):
        if not chunk.strip():
            continue
        text = re.sub(r"\s+", " ", to_text(chunk)).strip()
        if text:
            out.append(text)
    return out
