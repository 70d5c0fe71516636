"""LaTeX project -> :class:`ExtractedPaper` (``method="latex"``): references, contexts, sections
and mention counts from the LaTeX structure, not from rendered PDF text.

Input (:func:`extract_latex`): a ``.tex`` file, a project folder, or a source archive (``.zip``,
``.tar.gz``/``.tgz``/``.tar``, arXiv's gzipped single ``.tex``; unpacked by :mod:`.archive` into a
temporary folder that is always removed). Steps:

1. the main file: the one with ``\\documentclass`` and ``\\begin{document}`` (``main``/``ms``/
   ``paper`` preferred when several); ``\\input``, ``\\include``, ``\\subfile``, ``\\import`` and
   ``\\subimport`` are followed relative to the main file's folder, never outside the project
   folder; comments (``%``, not ``\\%``), ``comment`` environments and ``\\iffalse`` blocks are
   dropped; circular and missing includes give a message;
2. every citation command (``\\cite``, natbib's ``\\citet``/``\\citep``/... and their capitalised
   forms, biblatex's ``\\autocite``/``\\parencite``/``\\textcite``/``\\footcite``/``\\smartcite``
   and the multi-cite ``\\cites`` family, with optional arguments) is replaced by a marker; ``\\nocite``
   keys are references without a mention;
3. title, abstract and sections (``\\section``... ``\\paragraph``, starred or not; ``\\appendix``)
   give each paragraph its label (the same labels as the Markdown path: "2 Related Work",
   "Abstract", "Appendix", "Back matter"); paragraphs go to plain text with pylatexenc, keeping the
   markers; the shared sentence splitter and three-sentence window rule give the contexts;
4. the bibliography (:mod:`.bibtex`): the ``.bib`` files named by ``\\bibliography``/
   ``\\addbibresource`` (else every ``.bib`` in the project), then a ``.bbl`` or an inline
   ``thebibliography`` for keys the ``.bib`` files lack. A key defined nowhere is still a
   reference (its key as text) with a message.

Reference ``target`` is the order of first citation; ``cite`` is the label as the text shows it
(numeric "3" or author-year "Vaswani et al., 2017"); ``bibkey``/``doi``/``arxiv``/``url``/``venue``
come from the bibliography. A reference needs a year for the reference-file schema: without one in
the entry (``year``/``date``) or in its key ("vaswani2017attention"), it is left out with a message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..errors import MustciteError
from .archive import ArchiveLimits, is_archive, unpacked
from .bibtex import BibEntry, decode_latex, parse_bbl, parse_bib
from .contexts import add_context, context_windows
from .model import ExtractedPaper
from .records import Context, Reference
from .sections import ABSTRACT, APPENDIX, Heading, classify
from .sentences import split_sentences

TEX_SUFFIXES = (".tex", ".ltx", ".latex")
LATEX_SUFFIXES = TEX_SUFFIXES + (".zip", ".tar.gz", ".tgz", ".tar")
MAIN_NAMES = ("main", "ms", "paper", "manuscript", "article", "arxiv")
MAX_FILES = 5000                 # .tex/.bib/.bbl files looked at in a folder
MAX_FILE_BYTES = 16 * 2**20      # one source file
MAX_CHARS = 8_000_000            # the expanded document
MAX_DEPTH = 24                   # nesting of \input

_M0, _M1 = "\ue000", "\ue001"    # a citation marker: _M0 + occurrence number + _M1
_MARK = re.compile(f"{_M0}(\\d+){_M1}")

# ---- reading files -------------------------------------------------------------------------------


def read_text(path: Path, root: Path, messages: list[str]) -> str | None:
    """A source file's text: UTF-8, else Latin-1 with a message; None (with a message) when it
    cannot be read, is binary or too large."""
    rel = _rel(path, root)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            messages.append(f"{rel}: {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte cap per file; not read")
            return None
        data = path.read_bytes()
    except OSError as exc:
        messages.append(f"{rel}: cannot read ({exc.strerror or exc}); skipped")
        return None
    if b"\x00" in data[:65536]:
        messages.append(f"{rel}: binary content (NUL bytes), not LaTeX text; skipped")
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        messages.append(f"{rel}:{line}: not UTF-8; read as Latin-1 (check accented characters)")
        return data.decode("latin-1")


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return path.name


_COMMENT_ENV = re.compile(r"\\begin\{comment\}.*?\\end\{comment\}", re.S)
_IFFALSE = re.compile(r"\\iffalse\b.*?\\fi\b", re.S)


def strip_comments(text: str) -> str:
    """Drop ``%`` comments (a ``%`` after an even number of backslashes), the line end they eat,
    ``comment`` environments and ``\\iffalse ... \\fi`` blocks."""
    out = []
    lines = text.split("\n")
    last = len(lines) - 1
    for li, line in enumerate(lines):
        i = line.find("%")
        while i >= 0:
            j = i - 1
            while j >= 0 and line[j] == "\\":
                j -= 1
            if (i - j - 1) % 2 == 0:
                break
            i = line.find("%", i + 1)
        if i >= 0:
            out.append(line[:i])          # TeX also eats the line end after a comment
        else:
            out.append(line if li == last else line + "\n")
    text = "".join(out)
    text = _COMMENT_ENV.sub("", text)
    return _IFFALSE.sub("", text)


def braced(text: str, start: int) -> tuple[str, int] | None:
    """``(content, index after)`` of the brace group opening at ``text[start]`` (skipping white
    space); None when there is none or it never closes."""
    i = start
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text) or text[i] != "{":
        return None
    depth = 0
    j = i
    n = len(text)
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
                return text[i + 1:j], j + 1
        j += 1
    return None


def bracketed(text: str, start: int) -> tuple[str, int] | None:
    """``(content, index after)`` of an optional ``[...]`` argument at ``text[start]`` (white space
    skipped, nested braces allowed); None when there is none."""
    i = start
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text) or text[i] != "[":
        return None
    depth = 0
    for j in range(i + 1, min(len(text), i + 2000)):
        c = text[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "]" and depth <= 0:
            return text[i + 1:j], j + 1
    return None


# ---- the project: main file and includes -----------------------------------------------------------

@dataclass
class Project:
    root: Path
    main: Path
    text: str                                  # expanded, comments stripped
    files: list[str] = field(default_factory=list)   # the .tex files read (relative)
    messages: list[str] = field(default_factory=list)


def _is_main(text: str) -> bool:
    return bool(re.search(r"\\documentclass", text) and re.search(r"\\begin\s*\{document\}", text)
                and not re.search(r"\\documentclass\s*(?:\[[^\]]*\])?\s*\{(?:subfiles|standalone)\}", text))


def project_files(root: Path, messages: list[str], *, recursive: bool = True) -> list[Path]:
    """The .tex/.bib/.bbl files under ``root`` (sorted, hidden and ``__MACOSX`` folders skipped;
    only the folder itself when not ``recursive``)."""
    out = []
    for p in sorted(root.rglob("*") if recursive else root.glob("*")):
        rel = p.relative_to(root).parts
        if any(x.startswith(".") or x == "__MACOSX" for x in rel):
            continue
        if p.is_symlink() or not p.is_file():
            continue
        if p.name.lower().endswith(TEX_SUFFIXES + (".bib", ".bbl")):
            out.append(p)
            if len(out) > MAX_FILES:
                raise MustciteError(f"more than {MAX_FILES:,} .tex/.bib/.bbl files in the project folder",
                                    path=root)
    return out


def find_main(root: Path, files: list[Path], messages: list[str]) -> Path:
    """The main ``.tex`` file of a project folder (MustciteError when there is no ``.tex`` file)."""
    tex = [p for p in files if p.name.lower().endswith(TEX_SUFFIXES)]
    if not tex:
        raise MustciteError("no .tex file in the LaTeX project", path=root,
                            hint="give a .tex file, a folder or an archive holding the LaTeX sources")
    mains = []
    for p in tex:
        try:
            head = p.read_bytes()[:MAX_FILE_BYTES].decode("utf-8", "replace")
        except OSError:
            continue
        if _is_main(strip_comments(head)):
            mains.append(p)
    if not mains:
        if len(tex) == 1:
            return tex[0]
        raise MustciteError("no main .tex file (one with \\documentclass and \\begin{document}) in the project",
                            path=root, hint="give the main .tex file itself")
    if len(mains) == 1:
        return mains[0]
    pref = [p for p in mains if p.stem.lower() in MAIN_NAMES]
    pick = min(pref or mains, key=lambda p: (len(p.relative_to(root).parts),
                                             MAIN_NAMES.index(p.stem.lower()) if p.stem.lower() in MAIN_NAMES else 99,
                                             -p.stat().st_size, str(p)))
    messages.append(f"{len(mains)} files could be the main file ({', '.join(_rel(p, root) for p in mains[:5])}); "
                    f"read {_rel(pick, root)}")
    return pick


_INCLUDE = re.compile(r"\\(input|include|subfile|import|subimport|subinputfrom|inputfrom)\*?(?![a-zA-Z])")


def _resolve_include(name: str, base: Path, root: Path, always_tex: bool) -> Path | None:
    name = name.strip().strip('"')
    if not name:
        return None
    cands = [base / name] if (always_tex and name.endswith(".tex")) else \
        ([base / (name + ".tex")] if always_tex else [base / name, base / (name + ".tex")])
    for c in cands:
        if c.is_file():
            return c
    return None


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def expand(path: Path, root: Path, messages: list[str], *, main_dir: Path | None = None,
           stack: tuple[Path, ...] = (), files: list[str] | None = None, budget: list[int] | None = None) -> str:
    """The text of ``path`` with its includes spliced in (comments stripped), recursively."""
    main_dir = main_dir or path.parent
    files = files if files is not None else []
    budget = budget if budget is not None else [MAX_CHARS]
    text = read_text(path, root, messages)
    if text is None:
        return ""
    files.append(_rel(path, root))
    text = strip_comments(text)
    if stack and re.search(r"\\documentclass", text):     # a subfile: only its document body
        m = re.search(r"\\begin\s*\{document\}(.*?)(?:\\end\s*\{document\}|$)", text, re.S)
        if m:
            text = m.group(1)
    stack = stack + (path.resolve(),)
    out, pos = [], 0
    for m in _INCLUDE.finditer(text):
        if m.start() < pos:
            continue
        cmd = m.group(1)
        j = m.end()
        if cmd in ("import", "subimport", "inputfrom", "subinputfrom"):
            a = braced(text, j)
            b = braced(text, a[1]) if a else None
            if not b:
                continue
            base = (main_dir if cmd in ("import", "inputfrom") else path.parent) / a[0].strip()
            name, end = b[0], b[1]
        else:
            a = braced(text, j)
            if a:
                name, end = a
            elif cmd == "input":
                mm = re.match(r"\s+([^\s{}\\%]+)", text[j:])
                if not mm:
                    continue
                name, end = mm.group(1), j + mm.end()
            else:
                continue
            base = main_dir
        out.append(text[pos:m.start()])
        pos = end
        rel_name = name.strip()
        target = _resolve_include(rel_name, base, root, always_tex=(cmd == "include"))
        if target is None and cmd in ("input", "include", "subfile"):
            target = _resolve_include(rel_name, path.parent, root, always_tex=(cmd == "include"))
        where = _rel(path, root)
        if target is None:
            if not rel_name.lower().endswith((".bbl", ".sty", ".cls", ".tikz", ".pgf", ".pdf_tex")):
                messages.append(f"{where}: \\{cmd}{{{rel_name}}}: file not found; skipped")
            continue
        if target.name.lower().endswith((".bbl",)):
            out.append(f"\n\\mustcitebbl{{{_rel(target, root)}}}\n")
            continue
        if not _inside(target, root):
            messages.append(f"{where}: \\{cmd}{{{rel_name}}} points outside the project folder; not read")
            continue
        if target.resolve() in stack:
            messages.append(f"{where}: \\{cmd}{{{rel_name}}} includes a file already being read "
                            "(circular \\input); skipped")
            continue
        if len(stack) >= MAX_DEPTH:
            messages.append(f"{where}: \\{cmd}{{{rel_name}}}: includes nested deeper than {MAX_DEPTH}; skipped")
            continue
        sub = expand(target, root, messages, main_dir=main_dir, stack=stack, files=files, budget=budget)
        out.append(("\n\\clearpage\n" if cmd == "include" else " ") + sub + ("\n" if cmd == "include" else " "))
    out.append(text[pos:])
    result = "".join(out)
    budget[0] -= len(text)
    if budget[0] < 0:
        raise MustciteError(f"the LaTeX project expands to more than {MAX_CHARS:,} characters: not a paper",
                            path=path)
    return result


# ---- citations -------------------------------------------------------------------------------------

_CITE = re.compile(
    r"\\((?:[Cc]ite(?:t|p|alt|alp|author|year|yearpar|num|title|date|url|s)?\*?)"
    r"|(?:[Aa]uto|[Pp]aren|[Tt]ext|[Ff]oot|[Ss]mart|[Ss]uper|[Ff]ull)cites?\*?"
    r"|footcitetext|nocite|[Cc]itep?s|[Cc]iteyear|[Cc]iteauthor)(?![a-zA-Z])")
_TEXTUAL = {"citet", "textcite", "citeauthor", "citealt"}
_NOMARK = {"nocite"}


@dataclass
class Citation:
    command: str
    keys: list[str]
    pre: str = ""
    post: str = ""


def _cite_args(text: str, j: int, multi: bool) -> tuple[list[tuple[str, str, list[str]]], int] | None:
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
        br = braced(text, k)
        if not br:
            break
        keys = [x.strip() for x in br[0].split(",") if x.strip()]
        pre, post = ("", opts[0]) if len(opts) == 1 else (opts[0], opts[1]) if opts else ("", "")
        groups.append((pre, post, keys))
        j = br[1]
        if not multi:
            break
    return (groups, j) if groups else None


def mark_citations(text: str) -> tuple[str, list[Citation], list[str]]:
    """``text`` with every citation command replaced by a marker, the citations (one per marker,
    in order) and the ``\\nocite`` keys."""
    out, cites, nocite = [], [], []
    pos = 0
    for m in _CITE.finditer(text):
        if m.start() < pos:
            continue
        cmd = m.group(1).rstrip("*")
        multi = cmd.endswith("cites") or cmd in ("cites", "Cites")
        got = _cite_args(text, m.end(), multi)
        if got is None:
            continue
        groups, end = got
        out.append(text[pos:m.start()])
        pos = end
        keys = [k for g in groups for k in g[2]]
        if cmd == "nocite":
            nocite.extend(keys)
            continue
        cites.append(Citation(cmd, keys, groups[0][0], groups[-1][1]))
        out.append(f"{_M0}{len(cites) - 1}{_M1}")
    out.append(text[pos:])
    return "".join(out), cites, nocite


def citation_style(preamble: str, cites: list[Citation]) -> str:
    """"numeric" or "author-year", from the packages and bibliography style (else the commands)."""
    p = preamble
    if re.search(r"\\usepackage\s*\[[^\]]*\bnumbers\b[^\]]*\]\s*\{natbib\}", p) \
            or re.search(r"\\usepackage\s*(?:\[[^\]]*\])?\s*\{cite\}", p):
        return "numeric"
    m = re.search(r"\\usepackage\s*\[([^\]]*)\]\s*\{biblatex\}", p)
    if m:
        style = re.search(r"\b(?:citestyle|style)\s*=\s*([\w-]+)", m.group(1))
        if style:
            return "author-year" if re.search(r"author|apa|chicago|mla|harvard", style.group(1)) else "numeric"
    m = re.search(r"\\bibliographystyle\s*\{([^}]*)\}", p)
    if m:
        s = m.group(1).lower()
        if s in ("plain", "unsrt", "abbrv", "ieeetr", "ieeetran", "splncs04", "splncs", "alpha", "acm",
                 "siam", "unsrtnat", "abbrvnat", "plainnat", "naturemag", "vancouver") and not re.search(r"natbib", p):
            return "numeric"
        if re.search(r"nat$|apa|named|chicago|harvard|acl|iclr|icml|neurips|aaai", s):
            return "author-year" if not re.search(r"numbers", p) else "numeric"
    if re.search(r"\\usepackage\s*(?:\[[^\]]*\])?\s*\{natbib\}", p) or any(c.command.lower() not in ("cite",)
                                                                             for c in cites):
        return "author-year"
    return "numeric"


# ---- sections ----------------------------------------------------------------------------------

_HEAD = re.compile(r"\\(part|chapter|section|subsection|subsubsection|paragraph|subparagraph)(\*?)(?![a-zA-Z])"
                   r"|\\(appendix|backmatter)(?![a-zA-Z])|\\(bibliography|printbibliography|mustcitebbl)(?![a-zA-Z])"
                   r"|\\begin\s*\{(thebibliography|abstract)\}")
_LEVEL = {"part": 0, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4, "paragraph": 5,
          "subparagraph": 6}


@dataclass
class Segment:
    label: str
    latex: str


def split_segments(body: str, messages: list[str]) -> tuple[list[Segment], str]:
    """The document body split into labelled segments; also the abstract's LaTeX ("" if none)."""
    main_level = 1 if re.search(r"\\chapter\*?\s*(?:\[[^\]]*\])?\s*\{", body) else 2
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
                b = braced(body, m.end())
                pos = b[1] if b else pos
            else:
                b = bracketed(body, m.end())
                pos = b[1] if b else pos
                b = braced(body, pos)
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
        br = braced(body, pos)
        if not br:
            continue
        pos = br[1]
        title = re.sub(r"\s+", " ", _to_text(br[0])).strip()
        level = _LEVEL[cmd]
        if level > main_level:
            if cmd.startswith("sub") or cmd == "section":
                segs.append(Segment(label, "\n\n"))
            else:                                  # \paragraph{Run-in head.}: a paragraph break
                segs.append(Segment(label, "\n\n"))
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

_FLOAT = re.compile(r"\\begin\s*\{(figure|table|wrapfigure|wraptable|algorithm|lstlisting|verbatim|tikzpicture|"
                    r"minted)(\*?)\}(.*?)\\end\s*\{\1\2\}", re.S)
_DISPLAY = re.compile(r"\\begin\s*\{(equation|align|gather|multline|eqnarray|displaymath|flalign|alignat)(\*?)\}.*?"
                      r"\\end\s*\{\1\2\}|\\\[.*?\\\]|\$\$.*?\$\$", re.S)
_DROP_CMDS = re.compile(r"\\(?:label|ref|eqref|cref|Cref|autoref|pageref|vspace|hspace|includegraphics|"
                        r"bibliographystyle|usepackage|newcommand|renewcommand|def|maketitle|tableofcontents|"
                        r"clearpage|newpage|centering|noindent|thanks|footnotemark)\*?(?![a-zA-Z])")


@lru_cache(maxsize=1)
def _l2t():
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text")


def _to_text(latex: str) -> str:
    try:
        return _l2t().latex_to_text(latex)
    except Exception:  # pylatexenc is tolerant; a crash here must not stop the reading
        return re.sub(r"\\[a-zA-Z]+\*?|[{}]", " ", latex)


def _captions(m: re.Match) -> str:
    out = []
    body = m.group(3)
    for c in re.finditer(r"\\caption\*?(?![a-zA-Z])", body):
        j = c.end()
        b = bracketed(body, j)
        br = braced(body, b[1] if b else j)
        if br:
            out.append(br[0])
    return "\n\n" + "\n\n".join(out) + "\n\n" if out else "\n\n"


def _drop_refs(text: str) -> str:
    """``\\ref{...}`` and friends: their argument is a label, not prose."""
    out, pos = [], 0
    for m in _DROP_CMDS.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.start()])
        j = m.end()
        name = m.group(0)
        if any(name.startswith("\\" + x) for x in ("ref", "eqref", "cref", "Cref", "autoref", "pageref")):
            br = braced(text, j)
            out.append("?" if br else "")
            pos = br[1] if br else j
            continue
        b = bracketed(text, j)
        j = b[1] if b else j
        br = braced(text, j)
        if name.startswith(("\\label", "\\vspace", "\\hspace", "\\includegraphics", "\\bibliographystyle",
                            "\\usepackage", "\\thanks")) and br:
            j = br[1]
        pos = j
    out.append(text[pos:])
    return "".join(out)


def paragraphs(latex: str) -> list[str]:
    """Plain-text paragraphs of a LaTeX segment (markers kept; floats reduced to their captions,
    display math dropped)."""
    latex = _FLOAT.sub(_captions, latex)
    latex = _DISPLAY.sub(" ", latex)
    latex = _drop_refs(latex)
    latex = re.sub(r"\\(?:item)(?![a-zA-Z])(?:\s*\[[^\]]*\])?", "\n\n", latex)
    out = []
    for chunk in re.split(r"\n[ \t]*\n", latex):
        if not chunk.strip():
            continue
        text = re.sub(r"\s+", " ", _to_text(chunk)).strip()
        if text:
            out.append(text)
    return out


# ---- the extraction --------------------------------------------------------------------------------

@dataclass
class _Ref:
    key: str
    entry: BibEntry | None
    mentions: int = 0
    contexts: list[Context] = field(default_factory=list)
    seen: set = field(default_factory=set)


def _bib_names(text: str) -> list[str]:
    names = []
    for m in re.finditer(r"\\(bibliography|addbibresource|addglobalbib|addsectionbib)(?![a-zA-Z])", text):
        j = m.end()
        b = bracketed(text, j)
        opt = b[0] if b else ""
        br = braced(text, b[1] if b else j)
        if not br or "remote" in opt:
            continue
        for n in br[0].split(","):
            n = n.strip()
            if n:
                names.append(n if n.lower().endswith(".bib") else n + ".bib")
    return names


def _bibliography(project: Project, body: str, all_files: list[Path]) -> tuple[dict[str, BibEntry], list[str]]:
    """Bib entries by key: named .bib files (else every .bib), then .bbl / thebibliography entries
    for keys the .bib files lack."""
    root, msgs = project.root, project.messages
    named = _bib_names(project.text)
    bibs: list[Path] = []
    for n in named:
        p = project.main.parent / n
        if not p.is_file():
            p = root / n
        if p.is_file() and _inside(p, root):
            bibs.append(p)
        else:
            msgs.append(f"bibliography file {n} not found in the project")
    if not bibs:
        bibs = [p for p in all_files if p.name.lower().endswith(".bib")]
        if named and bibs:
            msgs.append(f"read every .bib file in the project instead ({len(bibs)})")
    entries: dict[str, BibEntry] = {}
    for p in dict.fromkeys(bibs):
        text = read_text(p, root, msgs)
        if text is None:
            continue
        got, m = parse_bib(text, _rel(p, root))
        msgs.extend(m)
        for e in got:
            entries.setdefault(e.key, e)
    extra: list[tuple[str, str]] = []
    inline = re.search(r"\\begin\s*\{thebibliography\}.*?(?:\\end\s*\{thebibliography\}|$)", body, re.S)
    if inline:
        extra.append((inline.group(0), _rel(project.main, root)))
    bbls = [p for p in all_files if p.name.lower().endswith(".bbl")]
    bbls.sort(key=lambda p: (p.stem != project.main.stem, str(p)))
    for p in bbls[:1]:
        t = read_text(p, root, msgs)
        if t is not None:
            extra.append((t, _rel(p, root)))
    for text, name in extra:
        got, m = parse_bbl(text, name)
        msgs.extend(m)
        for e in got:
            entries.setdefault(e.key, e)
    return entries, [p.name for p in bibs]


def _render(c: Citation, refs: dict[str, _Ref], number: dict[str, int], style: str) -> str:
    def lab(k: str) -> tuple[str, str, str]:          # (names, year, label)
        e = refs[k].entry if k in refs else None
        if e is None or not e.authors:
            return k, "", k
        label = e.label()
        names, _, year = label.rpartition(", ")
        return (names, year, label) if names else (label, "", label)

    keys = [k for k in c.keys if k != "*"]
    cmd = c.command.lower()
    pre = (decode_latex(c.pre) + " ") if c.pre.strip() else ""
    post = (", " + decode_latex(c.post)) if c.post.strip() else ""
    if cmd in ("citeyear", "citeyearpar"):
        return ", ".join(lab(k)[1] or lab(k)[0] for k in keys)
    if cmd == "citeauthor":
        return ", ".join(lab(k)[0] for k in keys)
    if style == "numeric":
        nums = ", ".join(str(number.get(k, "?")) for k in keys)
        if cmd in _TEXTUAL:
            return "; ".join(f"{lab(k)[0]} [{number.get(k, '?')}]" for k in keys)
        return f"[{pre}{nums}{post}]"
    if cmd in _TEXTUAL or cmd.startswith("textcite"):
        return "; ".join(f"{n} ({pre if i == 0 else ''}{y}{post if i == len(keys) - 1 else ''})"
                         if y else n for i, (n, y, _) in enumerate(map(lab, keys)))
    return f"({pre}{'; '.join(lab(k)[2] for k in keys)}{post})"


def _year_from_key(key: str) -> int | None:
    m = re.search(r"(?<!\d)(19[5-9]\d|20[0-4]\d)(?!\d)", key)
    return int(m.group(1)) if m else None


def extract_project(project: Project, all_files: list[Path], source_path: str) -> ExtractedPaper:
    """The :class:`ExtractedPaper` of an expanded project."""
    paper = ExtractedPaper(source_path=source_path, method="latex")
    paper.messages = project.messages
    marked, cites, nocite = mark_citations(project.text)
    m = re.search(r"\\begin\s*\{document\}", marked)
    preamble, body = (marked[:m.start()], marked[m.end():]) if m else ("", marked)
    body = re.split(r"\\end\s*\{document\}", body)[0]
    style = citation_style(preamble + "\n" + project.text[:2000], cites)
    entries, bib_files = _bibliography(project, body, all_files)

    # references in order of first citation (\nocite in its place), \nocite{*}: every entry
    refs: dict[str, _Ref] = {}
    for c in cites:
        for k in c.keys:
            refs.setdefault(k, _Ref(k, entries.get(k))).mentions += 1
    for k in nocite:
        if k == "*":
            for key, e in entries.items():
                refs.setdefault(key, _Ref(key, e))
        else:
            refs.setdefault(k, _Ref(k, entries.get(k)))
    order = list(refs)
    years = {k: (refs[k].entry.year if refs[k].entry else None) or _year_from_key(k) for k in order}
    number = {k: i + 1 for i, k in enumerate(k for k in order if years[k] is not None)}

    # title and abstract (rendered with their citations)
    def render_marks(text: str) -> str:
        return _MARK.sub(lambda mm: _render(cites[int(mm.group(1))], refs, number, style), text)

    tm = re.search(r"\\title\s*(?:\[[^\]]*\])?\s*(?=\{)", marked)
    if tm:
        got = braced(marked, tm.end())
        if got:
            t = re.sub(r"\\\\|\\newline", " ", got[0])
            paper.title = render_marks(re.sub(r"\s+", " ", _to_text(_drop_refs(t))).strip())
    segs, abstract_latex = split_segments(body, paper.messages)
    if not abstract_latex:
        am = re.search(r"\\abstract\s*(?=\{)", marked)
        got = braced(marked, am.end()) if am else None
        abstract_latex = got[0] if got else ""
    if abstract_latex:
        segs.insert(0, Segment(ABSTRACT, abstract_latex))
        paper.abstract = render_marks(" ".join(paragraphs(abstract_latex)))

    # contexts: each paragraph's sentences, with the markers rendered
    n_contexts = 0
    for seg in segs:
        for para in paragraphs(seg.latex):
            if _M0 not in para:
                continue
            text, spans = _render_paragraph(para, cites, refs, number, style)
            sents = split_sentences(text)
            starts, at = [], 0
            for s in sents:
                i = text.find(s, at)
                starts.append(i if i >= 0 else at)
                at = (i if i >= 0 else at) + len(s)
            for ci, start in spans:
                si = max(0, sum(1 for s in starts if s <= start) - 1)
                window = context_windows(sents, si)
                for k in cites[ci].keys:
                    r = refs.get(k)
                    if r is not None and add_context(r.contexts, r.seen, seg.label, window, Context):
                        n_contexts += 1

    # reference records
    out: list[Reference] = []
    undefined, undated = [], []
    for k in order:
        r = refs[k]
        e = r.entry
        if e is None:
            undefined.append(k)
        year = years[k]
        if year is None:
            undated.append(k)
            continue
        if style == "numeric":
            cite = str(number[k])
        else:
            cite = e.label() if e and e.authors else k
            if e and e.authors and not e.year:
                cite = f"{cite}, {year}"
        out.append(Reference(target=len(out) + 1, title=e.title if e else "", year=year, cite=cite,
                             contexts=r.contexts, raw=(e.raw if e else k), authors=list(e.authors) if e else [],
                             mentions=r.mentions, bibkey=k, doi=e.doi if e else None,
                             arxiv=e.arxiv if e else None, url=e.url if e else None,
                             venue=(e.venue or None) if e else None))
    paper.references = out
    if undefined:
        paper.messages.append(f"{len(undefined)} cited key(s) defined in no .bib/.bbl file: "
                              f"{', '.join(undefined[:10])}{' ...' if len(undefined) > 10 else ''}")
    if undated:
        paper.messages.append(f"{len(undated)} reference(s) without a year left out of the reference file: "
                              f"{', '.join(undated[:10])}{' ...' if len(undated) > 10 else ''}")
    if not cites and not nocite:
        paper.status = "flagged"
        paper.failure_modes.append("no_references")
        paper.messages.append("no \\cite command in the LaTeX project: the draft has no references, so the "
                              "audit ranks from its title and abstract alone")
    elif not out:
        paper.status = "flagged"
        paper.failure_modes.append("no_references")
    if undefined and len(undefined) > len(order) / 2:
        paper.status = "flagged"
        if "undefined_keys" not in paper.failure_modes:
            paper.failure_modes.append("undefined_keys")
    paper.stats = {"main_file": _rel(project.main, project.root), "files": list(project.files),
                   "bib_files": bib_files, "bib_entries": len(entries), "citation_style": style,
                   "mentions_total": sum(len(c.keys) for c in cites), "citations": len(cites),
                   "nocite": len(nocite), "cited_keys": len(order), "undefined_keys": undefined,
                   "undated_keys": undated, "n_references": len(out), "n_contexts": n_contexts}
    return paper


def _render_paragraph(para: str, cites: list[Citation], refs: dict[str, _Ref], number: dict[str, int],
                      style: str) -> tuple[str, list[tuple[int, int]]]:
    """The paragraph with markers rendered, and ``(citation index, offset)`` of each marker."""
    out, spans, pos, n = [], [], 0, 0
    for m in _MARK.finditer(para):
        out.append(para[pos:m.start()])
        n += m.start() - pos
        ci = int(m.group(1))
        r = _render(cites[ci], refs, number, style) if ci < len(cites) else ""
        spans.append((ci, n))
        out.append(r)
        n += len(r)
        pos = m.end()
    out.append(para[pos:])
    return "".join(out), spans


def load_project(root: Path, main: Path, messages: list[str]) -> Project:
    files: list[str] = []
    text = expand(main, root, messages, main_dir=main.parent, files=files)
    return Project(root=root, main=main, text=text, files=files, messages=messages)


def _extract_folder(root: Path, main: Path | None, source_path: str, messages: list[str]) -> ExtractedPaper:
    # a .tex file given alone: its folder is the project, but only that folder is listed (it may
    # be a Downloads folder); includes and named .bib files are found wherever they are inside it
    files = project_files(root, messages, recursive=main is None)
    if main is None:
        main = find_main(root, files, messages)
    project = load_project(root, main, messages)
    if not project.text.strip():
        raise MustciteError("the main .tex file is empty or unreadable"
                            + (f" ({'; '.join(messages)})" if messages else ""), path=source_path)
    return extract_project(project, files, source_path)


def extract_latex(path: str | Path, *, limits: ArchiveLimits | None = None) -> ExtractedPaper:
    """Read a LaTeX draft: a ``.tex`` file (its folder is the project), a project folder or a source
    archive. Raises MustciteError (naming the file) when there is nothing to read; every softer
    problem is a message in the returned paper."""
    path = Path(path)
    if path.is_dir():
        return _extract_folder(path, None, str(path), [])
    if not path.is_file():
        raise MustciteError("LaTeX draft not found", path=path)
    if is_archive(path):
        with unpacked(path, limits) as up:
            messages = list(up.messages)
            try:
                paper = _extract_folder(up.root, None, str(path), messages)
            except MustciteError as exc:
                raise MustciteError(exc.message.replace(str(up.root), path.name), path=path, hint=exc.hint) from None
            paper.stats["archive_members"] = up.members
            return paper
    return _extract_folder(path.parent, path, str(path), [])
