"""Which ``.tex`` file of a project folder is the paper: the one its build compiles.

A main file has ``\\documentclass`` and ``\\begin{document}`` outside comments and verbatim blocks
(not the ``subfiles`` or ``standalone`` class). Among several (:func:`choose_main`):

1. a file the project's build names: ``latexmkrc``/``.latexmkrc`` (``@default_files = ('paper.tex')``)
   or a ``Makefile`` running ``pdflatex``/``latexmk``/... on it (the file, its ``.pdf`` target or a
   variable naming it), in the project's top folder;
2. else no file that another main file includes (``\\input``/``\\include``/... followed as the
   reading does), and of the rest those in the shallowest folder (a ``sub/main.tex`` or a copied
   example never takes over the project's own file);
3. of those, the one whose include graph holds the most text (the file and everything it includes,
   comments and verbatim blocks aside); a tie goes to the usual names (``main``, ``paper`` ...), then
   the path.

A file that only wraps another main file (``\\documentclass ... \\input{paper}`` with hardly any
text of its own) is read through: the wrapped file is read. :class:`MainChoice` says which file was
read, why, and which others could have been.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import MustciteError
from .arguments import BraceIndex, braced
from .includes import (
    _BARE_NAME,
    _INCLUDE,
    MAX_FILE_BYTES,
    MAX_INCLUDES,
    TEX_SUFFIXES,
    _resolve_include,
    rel_path,
    strip_comments,
)
from .verbatim import blank_verbatim

MAIN_NAMES = ("main", "ms", "paper", "manuscript", "article", "arxiv")
#: main files whose include graphs are measured, the shallowest first
MAX_MEASURED = 64
#: a main file with fewer letters than this of its own that includes another main file wraps it
WRAPPER_LETTERS = 200
#: build files read, in the project's top folder
BUILD_FILES = ("latexmkrc", ".latexmkrc", "Makefile", "makefile", "GNUmakefile")
MAX_BUILD_BYTES = 256 * 1024

_DOCCLASS = re.compile(r"\\documentclass(?![A-Za-z])")
_BEGIN_DOC = re.compile(r"\\begin\s*\{document\}")
_SUB_CLASS = re.compile(r"\\documentclass\s*(?:\[[^\]]{0,2000}\])?\s*\{(?:subfiles|standalone)\}")
_LATEX_RUN = re.compile(r"\b(?:pdf|xe|lua)?latex(?:mk)?\b|\btectonic\b|\bbibtex\b|\bbiber\b")


@dataclass
class MainChoice:
    """The main file chosen, why, and the other files that have a ``\\documentclass``."""

    main: Path
    why: str = "the only file with \\documentclass"
    others: list[str] = field(default_factory=list)


def prose(text: str) -> str:
    """A source's text without comments and verbatim blocks (what TeX reads as the document)."""
    return strip_comments(blank_verbatim(text))


def is_main(text: str) -> bool:
    """Whether a source (comments and verbatim already dropped) is a main file."""
    return bool(_DOCCLASS.search(text) and _BEGIN_DOC.search(text) and not _SUB_CLASS.search(text))


def _read(path: Path, cache: dict[Path, str]) -> str:
    if path not in cache:
        try:
            cache[path] = prose(path.read_bytes()[:MAX_FILE_BYTES].decode("utf-8", "replace"))
        except OSError:
            cache[path] = ""
    return cache[path]


def _include_names(text: str):
    """``(command, name, import folder or None)`` of each include of ``text``, as the reading finds them."""
    index = BraceIndex(text)
    for m in _INCLUDE.finditer(text):
        cmd, j = m.group(1), m.end()
        if cmd in ("import", "subimport", "inputfrom", "subinputfrom"):
            a = braced(text, j, index)
            b = braced(text, a[1], index) if a else None
            if b:
                yield cmd, b[0], a[0].strip()
            continue
        a = braced(text, j, index)
        if a:
            yield cmd, a[0], None
        elif cmd == "input":
            mm = _BARE_NAME.match(text, j)
            if mm:
                yield cmd, mm.group(1), None


def _targets(path: Path, main_dir: Path, root: Path, cache: dict[Path, str]) -> list[Path]:
    out = []
    for cmd, name, folder in _include_names(_read(path, cache)):
        if folder is not None:
            base = (main_dir if cmd in ("import", "inputfrom") else path.parent) / folder
            got = _resolve_include(name, base, root, always_tex=False)
        else:
            got = (_resolve_include(name, main_dir, root, always_tex=cmd == "include")
                   or _resolve_include(name, path.parent, root, always_tex=cmd == "include"))
        if got is not None and got.name.lower().endswith(TEX_SUFFIXES):
            out.append(got)
    return out


def _graph(main: Path, root: Path, cache: dict[Path, str]) -> tuple[int, set[Path]]:
    """``(characters of text, files)`` of ``main`` and every file it includes (at most
    :data:`~.includes.MAX_INCLUDES` files)."""
    seen, todo = {main.resolve()}, [main]
    size = 0
    while todo and len(seen) <= MAX_INCLUDES:
        p = todo.pop()
        size += len(_read(p, cache))
        for t in _targets(p, main.parent, root, cache):
            r = t.resolve()
            if r not in seen:
                seen.add(r)
                todo.append(t)
    return size, seen


def _own_letters(text: str) -> int:
    """Letters of a main file's document body outside its include commands."""
    m = _BEGIN_DOC.search(text)
    body = text[m.end():] if m else text
    body = _INCLUDE.sub(" ", body)
    body = re.sub(r"\\[A-Za-z]+\*?|\{[^{}]{0,300}\}", " ", body)
    return sum(ch.isalpha() for ch in body)


def build_named(root: Path, stems: dict[str, Path]) -> list[Path]:
    """The main files the project's build files name (``stems``: name without ``.tex`` -> file)."""
    out: list[Path] = []
    for name in BUILD_FILES:
        p = root / name
        try:
            if not p.is_file() or p.is_symlink() or p.stat().st_size > MAX_BUILD_BYTES:
                continue
            text = p.read_text("utf-8", "replace")
        except OSError:
            continue
        lines = [ln.split("#", 1)[0] for ln in text.split("\n")]
        if "latexmkrc" in name:
            wanted = [w for ln in lines if "default_files" in ln for w in re.findall(r"['\"]([^'\"]+)['\"]", ln)]
        else:
            wanted = []
            variables = {}
            for ln in lines:
                a = re.match(r"\s*([A-Za-z_][\w]*)\s*[:?+]?=\s*(.*)", ln)
                if a:
                    variables[a.group(1)] = a.group(2).split()
            for ln in lines:
                if not (_LATEX_RUN.search(ln) or re.match(r"\s*[\w./-]+\.pdf\s*:", ln)):
                    continue
                words = re.findall(r"[\w./-]+", ln)
                for v in re.findall(r"\$[({]([A-Za-z_]\w*)[)}]", ln):
                    words += variables.get(v, [])
                wanted += words
        for w in wanted:
            w = w.strip().removeprefix("./")
            stem = w[:-4] if w.lower().endswith((".tex", ".pdf")) else w
            got = stems.get(stem)
            if got is not None and got not in out:
                out.append(got)
    return out


def choose_main(root: Path, files: list[Path], messages: list[str]) -> MainChoice:
    """The main ``.tex`` file of a project folder (MustciteError when there is no ``.tex`` file);
    see the module's description."""
    tex = [p for p in files if p.name.lower().endswith(TEX_SUFFIXES)]
    if not tex:
        raise MustciteError("no .tex file in the LaTeX project", path=root,
                            hint="give a .tex file, a folder or an archive holding the LaTeX sources")
    cache: dict[Path, str] = {}
    mains = [p for p in tex if is_main(_read(p, cache))]
    if not mains:
        if len(tex) == 1:
            return MainChoice(tex[0], "the only .tex file")
        raise MustciteError("no main .tex file (one with \\documentclass and \\begin{document}) in the project",
                            path=root, hint="give the main .tex file itself")
    rel = {p: rel_path(p, root) for p in mains}
    depth = {p: len(p.relative_to(root).parts) for p in mains}
    if len(mains) == 1:
        return _read_through(MainChoice(mains[0]), mains, root, cache, messages)
    stems = {rel[p][:-len(p.suffix)] if p.suffix else rel[p]: p for p in mains}
    named = build_named(root, stems)
    measured = sorted(mains, key=lambda p: (depth[p], rel[p]))[:MAX_MEASURED]
    graphs = {p: _graph(p, root, cache) for p in measured}
    if named:
        pick = max(named, key=lambda p: graphs.get(p, (0, set()))[0])
        why = "the file the project's build (latexmkrc/Makefile) compiles"
    else:
        included = {p for p in measured if any(p.resolve() in g[1] for q, g in graphs.items() if q != p)}
        pool = [p for p in measured if p not in included] or measured
        top = min(depth[p] for p in pool)
        pool = [p for p in pool if depth[p] == top]
        pick = max(pool, key=lambda p: (graphs[p][0], p.stem.lower() in MAIN_NAMES, [-ord(c) for c in rel[p]]))
        why = ("the file whose include graph holds the most text" if len(pool) > 1
               else "the top-level file no other includes")
    others = [rel[p] for p in sorted(mains, key=lambda p: (depth[p], rel[p])) if p != pick]
    choice = MainChoice(pick, why, others)
    return _read_through(choice, mains, root, cache, messages)


def _read_through(choice: MainChoice, mains: list[Path] | None, root: Path, cache: dict[Path, str],
                  messages: list[str]) -> MainChoice:
    """The file a main file only wraps, read in its place (a chain of wrappers followed, each once);
    ``mains``: the project's main files (None: any included file with ``\\documentclass``)."""
    resolved = {p.resolve(): p for p in mains} if mains is not None else None
    seen = {choice.main.resolve()}
    while True:
        text = _read(choice.main, cache)
        if _own_letters(text) >= WRAPPER_LETTERS:
            return choice
        inner = []
        for t in _targets(choice.main, choice.main.parent, root, cache):
            r = t.resolve()
            if r in seen:
                continue
            if resolved is not None and r in resolved:
                inner.append(resolved[r])
            elif resolved is None and is_main(_read(t, cache)):
                inner.append(t)
        if len(inner) != 1:
            return choice
        wrapper, wrapped = rel_path(choice.main, root), rel_path(inner[0], root)
        messages.append(f"{wrapper} only wraps {wrapped}: read {wrapped}")
        choice = MainChoice(inner[0], f"the file {wrapper} wraps",
                            [wrapper] + [o for o in choice.others if o not in (wrapper, wrapped)])
        seen.add(inner[0].resolve())


def read_through(main: Path, root: Path, messages: list[str]) -> Path:
    """The file to read for the main file ``main`` given by name: the file it wraps, if it only wraps one."""
    return _read_through(MainChoice(main, "the file given"), None, root, {}, messages).main


def find_main(root: Path, files: list[Path], messages: list[str]) -> Path:
    """The main ``.tex`` file of a project folder (see :func:`choose_main`)."""
    choice = choose_main(root, files, messages)
    if choice.others:
        messages.append(main_file_line(choice.main.relative_to(root) if choice.main.is_relative_to(root)
                                       else choice.main.name, choice.others))
    return choice.main


def main_file_line(main, others: list[str]) -> str:
    """``main file: paper.tex (also a \\documentclass: old.tex, ...)``."""
    also = f" (also a \\documentclass: {', '.join(others[:5])}{' ...' if len(others) > 5 else ''})" if others else ""
    return f"main file: {main}{also}"
