"""A LaTeX project folder read as one document: its files, its main file, and the main file's text
with every ``\\input``, ``\\include``, ``\\subfile``, ``\\import`` and ``\\subimport`` spliced in.

Includes are followed relative to the main file's folder (``\\subimport`` relative to the including
file) and never outside the project folder; comments (``%``, not ``\\%``), ``comment`` environments
and ``\\iffalse`` blocks are dropped; circular, missing and too deeply nested includes are skipped
with a message. Caps: :data:`MAX_FILES` files listed, :data:`MAX_FILE_BYTES` per file,
:data:`MAX_CHARS` for the expanded text, :data:`MAX_DEPTH` levels of nesting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import MustciteError
from .arguments import braced

TEX_SUFFIXES = (".tex", ".ltx", ".latex")
LATEX_SUFFIXES = TEX_SUFFIXES + (".zip", ".tar.gz", ".tgz", ".tar")
MAIN_NAMES = ("main", "ms", "paper", "manuscript", "article", "arxiv")
MAX_FILES = 5000                 # .tex/.bib/.bbl files looked at in a folder
MAX_FILE_BYTES = 16 * 2**20      # one source file
MAX_CHARS = 8_000_000            # the expanded document
MAX_DEPTH = 24                   # nesting of \input

# ---- reading files -------------------------------------------------------------------------------


def read_text(path: Path, root: Path, messages: list[str]) -> str | None:
    """A source file's text: UTF-8, else Latin-1 with a message; None (with a message) when it
    cannot be read, is binary or too large."""
    rel = rel_path(path, root)
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


def rel_path(path: Path, root: Path) -> str:
    """``path`` relative to the project folder ``root`` (its file name when outside it)."""
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


# ---- the project: main file and includes -----------------------------------------------------------

@dataclass
class Project:
    """A project folder read as one document: ``text`` is the main file with its includes expanded."""

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
    messages.append(f"{len(mains)} files could be the main file ({', '.join(rel_path(p, root) for p in mains[:5])}); "
                    f"read {rel_path(pick, root)}")
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


def is_inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (links resolved) lies inside the project folder ``root``."""
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
    files.append(rel_path(path, root))
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
        where = rel_path(path, root)
        if target is None:
            if not rel_name.lower().endswith((".bbl", ".sty", ".cls", ".tikz", ".pgf", ".pdf_tex")):
                messages.append(f"{where}: \\{cmd}{{{rel_name}}}: file not found; skipped")
            continue
        if target.name.lower().endswith((".bbl",)):
            out.append(f"\n\\mustcitebbl{{{rel_path(target, root)}}}\n")
            continue
        if not is_inside(target, root):
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


def load_project(root: Path, main: Path, messages: list[str]) -> Project:
    """The :class:`Project` of ``main`` in the folder ``root``: its includes expanded (:func:`expand`)."""
    files: list[str] = []
    text = expand(main, root, messages, main_dir=main.parent, files=files)
    return Project(root=root, main=main, text=text, files=files, messages=messages)
