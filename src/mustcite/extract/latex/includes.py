"""A LaTeX project folder read as one document: its files, its main file, and the main file's text
with every ``\\input``, ``\\include``, ``\\subfile``, ``\\import`` and ``\\subimport`` spliced in.

Includes are followed relative to the main file's folder (``\\subimport`` relative to the including
file) and never outside the project folder (:func:`find_inside`: a path leaving it is refused on its
normalised name, before anything is looked at, and a missing file and a path outside get the same
message, so an include cannot probe which paths exist on the host); comments (``%``, not ``\\%``),
``comment`` environments and ``\\iffalse`` blocks are dropped; circular, missing and too deeply
nested includes are skipped with a message. Caps: :data:`MAX_FILES` files listed,
:data:`MAX_FILE_BYTES` per file, :data:`MAX_CHARS` for the expanded text, :data:`MAX_INCLUDES`
includes followed (each counts 1, an empty file too), :data:`MAX_DEPTH` levels of nesting.
Every scan is linear in the text (no rescan to the end per unclosed ``{`` or ``\\begin{comment}``).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import MustciteError
from ...io import BinaryContentError, decode_text
from .arguments import BraceIndex, braced
from .verbatim import MAX_BRACE_DEPTH, blank_verbatim, bound_braces

TEX_SUFFIXES = (".tex", ".ltx", ".latex")
LATEX_SUFFIXES = TEX_SUFFIXES + (".zip", ".tar.gz", ".tgz", ".tar")
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
    try:
        return decode_text(data, rel)
    except BinaryContentError as exc:
        messages.append(f"{rel}: binary content (NUL bytes), not LaTeX text ({exc.message}); skipped")
        return None
    except MustciteError as exc:
        messages.append(f"{rel}:{exc.line}: not UTF-8; read as Latin-1 (check accented characters)")
        return data.decode("latin-1")


def rel_path(path: Path, root: Path) -> str:
    """``path`` relative to the project folder ``root`` (its file name when outside it)."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return path.name


_IFFALSE, _FI = re.compile(r"\\iffalse\b"), re.compile(r"\\fi\b")
_COMMENT_BEGIN, _COMMENT_END = re.compile(re.escape("\\begin{comment}")), re.compile(re.escape("\\end{comment}"))


def _drop_blocks(text: str, start: re.Pattern, end: re.Pattern) -> str:
    """``text`` without its ``start ... end`` blocks (as ``re.sub(start.*?end, "")`` with re.S), in
    one pass: once no end follows a start, no later start can have one either."""
    out, pos = [], 0
    while True:
        s = start.search(text, pos)
        e = end.search(text, s.end()) if s else None
        if e is None:
            break
        out.append(text[pos:s.start()])
        pos = e.end()
    out.append(text[pos:])
    return "".join(out)


def _comment_start(line: str) -> int:
    """Where the ``%`` comment of ``line`` starts (a ``%`` after an even number of backslashes), or -1."""
    i = line.find("%")
    while i >= 0:
        j = i - 1
        while j >= 0 and line[j] == "\\":
            j -= 1
        if (i - j - 1) % 2 == 0:
            return i
        i = line.find("%", i + 1)
    return -1


def blank_comments(text: str) -> str:
    """``text`` with each ``%`` comment replaced by spaces: every other character keeps its offset."""
    out = []
    for line in text.split("\n"):
        i = _comment_start(line)
        out.append(line if i < 0 else line[:i] + " " * (len(line) - i))
    return "\n".join(out)


def strip_comments(text: str) -> str:
    """Drop ``%`` comments (a ``%`` after an even number of backslashes), the line end they eat,
    ``comment`` environments and ``\\iffalse ... \\fi`` blocks."""
    out = []
    lines = text.split("\n")
    last = len(lines) - 1
    for li, line in enumerate(lines):
        i = _comment_start(line)
        if i >= 0:
            out.append(line[:i])          # TeX also eats the line end after a comment
        else:
            out.append(line if li == last else line + "\n")
    text = "".join(out)
    text = _drop_blocks(text, _COMMENT_BEGIN, _COMMENT_END)
    return _drop_blocks(text, _IFFALSE, _FI)


# ---- the project: main file and includes -----------------------------------------------------------

@dataclass
class Project:
    """A project folder read as one document: ``text`` is the main file with its includes expanded."""

    root: Path
    main: Path
    text: str                                  # expanded, comments stripped
    files: list[str] = field(default_factory=list)   # the .tex files read (relative)
    messages: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)   # other files with \documentclass (relative)


def _prose_only(text: str, where: str, messages: list[str]) -> str:
    """``text`` with verbatim blanked and braces nested too deep blanked, with a message naming
    the line of the first such group (offsets and lines kept)."""
    text, deep = bound_braces(blank_verbatim(text))
    if deep:
        line = text.count("\n", 0, deep[0]) + 1
        more = f" (and {len(deep) - 1} more groups)" if len(deep) > 1 else ""
        messages.append(f"{where}:{line}: braces nested deeper than {MAX_BRACE_DEPTH}{more}: "
                        "the text inside is not read")
    return text


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


_INCLUDE = re.compile(r"\\(input|include|subfile|import|subimport|subinputfrom|inputfrom)\*?(?![a-zA-Z])")
_BARE_NAME = re.compile(r"\s+([^\s{}\\%]+)")          # \input name (no braces)
_QUIET = (".bbl", ".sty", ".cls", ".tikz", ".pgf", ".pdf_tex")   # not read without a message
MAX_LINK_HOPS = 40               # symbolic links followed inside the project for one path


def find_inside(root: Path, base: Path, name: str) -> Path | None:
    """The regular file that ``name`` (relative to the folder ``base``, or absolute) names inside the
    project folder ``root``; None when it is missing *or* outside, without telling which.

    The decision is made on the normalised path string first (``..`` and absolute names leaving
    ``root`` stop here); only then are the path's parts looked at, one by one from ``root`` with
    ``lstat``, a symbolic link being followed only when its target (read, not opened) stays inside
    ``root``. Nothing outside the project folder is ever looked at, so the answer cannot tell which
    paths exist on the host."""
    root_abs = os.path.abspath(root)
    cand = os.path.normpath(os.path.join(os.path.abspath(base), name))
    if cand != root_abs and not cand.startswith(root_abs.rstrip(os.sep) + os.sep):
        return None
    real = _walk(os.path.realpath(root_abs), root_abs, os.path.relpath(cand, root_abs))
    return None if real is None else Path(root_abs, real)


def _walk(root_real: str, root_abs: str, rel: str) -> str | None:
    """``rel`` (inside the project) followed part by part from ``root_real``: its real path relative
    to the project folder when it is a regular file, else None (missing, a folder, a link leaving
    the project, too many links)."""
    parts = [x for x in rel.split(os.sep) if x not in ("", ".")]
    cur: list[str] = []
    hops, regular = 0, False
    while parts:
        part = parts.pop(0)
        if part == "..":
            if not cur:
                return None
            cur.pop()
            regular = False
            continue
        p = os.path.join(root_real, *cur, part)
        try:
            st = os.lstat(p)
        except (OSError, ValueError):
            return None
        if stat.S_ISLNK(st.st_mode):
            hops += 1
            if hops > MAX_LINK_HOPS:
                return None
            try:
                target = os.readlink(p)
            except (OSError, ValueError):
                return None
            if os.path.isabs(target):
                t = os.path.normpath(target)
                for r in (root_real, root_abs):
                    if t == r or t.startswith(r.rstrip(os.sep) + os.sep):
                        cur = [x for x in os.path.relpath(t, r).split(os.sep) if x not in ("", ".")]
                        break
                else:
                    return None
                parts = cur + parts
                cur = []
            else:
                parts = [x for x in target.split(os.sep) if x not in ("", ".")] + parts
            regular = False
            continue
        cur.append(part)
        regular = stat.S_ISREG(st.st_mode)
        if parts and not stat.S_ISDIR(st.st_mode):
            return None
    return os.path.join(*cur) if cur and regular else None


def _resolve_include(name: str, base: Path, root: Path, always_tex: bool) -> Path | None:
    name = name.strip().strip('"')
    if not name:
        return None
    cands = [name] if (always_tex and name.endswith(".tex")) else \
        ([name + ".tex"] if always_tex else [name, name + ".tex"])
    for c in cands:
        got = find_inside(root, base, c)
        if got is not None:
            return got
    return None


def is_inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (links resolved) lies inside the project folder ``root``."""
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


MAX_INCLUDES = 2000              # includes followed in all (each counts 1, an empty file too)
MAX_LOOKUPS = 5 * MAX_INCLUDES   # different include names looked up in the project folder
MAX_SKIP_MESSAGES = 50           # messages about includes not read; then one count


@dataclass
class _Budget:
    """What one expansion of a project may still spend, shared by every nested :func:`expand`."""

    chars: int = MAX_CHARS
    includes: int = MAX_INCLUDES
    exhausted: bool = False
    skipped: int = 0                               # includes not read, messages or not
    lookups: dict = field(default_factory=dict)    # (base, name, kind) -> found file or None

    def spend(self, messages: list[str]) -> bool:
        """Count one include followed; False (with the message, once) when the budget is spent."""
        if self.includes <= 0:
            if not self.exhausted:
                messages.append(f"include budget reached: {MAX_INCLUDES - self.includes:,} includes followed; "
                                "the rest are not read")
            self.exhausted = True
            return False
        self.includes -= 1
        return True

    def skip(self, messages: list[str], text: str) -> None:
        self.skipped += 1
        if self.skipped <= MAX_SKIP_MESSAGES:
            messages.append(text)
        elif self.skipped == MAX_SKIP_MESSAGES + 1:
            messages.append(f"more includes not read after {MAX_SKIP_MESSAGES} messages about them; "
                            "the rest are not listed")


class _OverBudget(Exception):
    pass


def _find(cmd: str, name: str, base: Path, here: Path, root: Path,
          budget: _Budget) -> tuple[Path, str, str] | None:
    """``(file, its real path, its path in the project)`` of an include, looked up once per project."""
    key = (str(base), str(here), name, cmd)
    if key not in budget.lookups:
        if len(budget.lookups) >= MAX_LOOKUPS:
            raise _OverBudget(f"include budget reached: {MAX_LOOKUPS:,} include names looked up; "
                              "the rest are not read")
        target = _resolve_include(name, base, root, always_tex=(cmd == "include"))
        if target is None and cmd in ("input", "include", "subfile"):
            target = _resolve_include(name, here, root, always_tex=(cmd == "include"))
        budget.lookups[key] = None if target is None else (target, os.path.realpath(target), rel_path(target, root))
    return budget.lookups[key]


def expand(path: Path, root: Path, messages: list[str], *, main_dir: Path | None = None,
           stack: tuple[str, ...] = (), files: list[str] | None = None, budget: _Budget | None = None) -> str:
    """The text of ``path`` with its includes spliced in (comments stripped), recursively.

    Caps (shared by the whole expansion through ``budget``): :data:`MAX_CHARS` characters read
    (MustciteError beyond), :data:`MAX_INCLUDES` includes followed (the rest are dropped with one
    message), :data:`MAX_DEPTH` levels. Every include that is not read gets the same message,
    whether its file is missing or outside the project folder."""
    main_dir = main_dir or path.parent
    files = files if files is not None else []
    budget = budget if budget is not None else _Budget()
    text = read_text(path, root, messages)
    if text is None:
        return ""
    files.append(rel_path(path, root))
    text = strip_comments(_prose_only(text, rel_path(path, root), messages))
    if stack and re.search(r"\\documentclass", text):     # a subfile: only its document body
        m = re.search(r"\\begin\s*\{document\}(.*?)(?:\\end\s*\{document\}|$)", text, re.S)
        if m:
            text = m.group(1)
    budget.chars -= len(text)
    if budget.chars < 0:
        raise MustciteError(f"the LaTeX project expands to more than {MAX_CHARS:,} characters: not a paper",
                            path=path)
    stack = stack + (os.path.realpath(path),)
    index = BraceIndex(text)
    where = rel_path(path, root)
    out, pos = [], 0
    for m in _INCLUDE.finditer(text):
        if m.start() < pos:
            continue
        cmd = m.group(1)
        j = m.end()
        if cmd in ("import", "subimport", "inputfrom", "subinputfrom"):
            a = braced(text, j, index)
            b = braced(text, a[1], index) if a else None
            if not b:
                continue
            base = (main_dir if cmd in ("import", "inputfrom") else path.parent) / a[0].strip()
            name, end = b[0], b[1]
        else:
            a = braced(text, j, index)
            if a:
                name, end = a
            elif cmd == "input":
                mm = _BARE_NAME.match(text, j)
                if not mm:
                    continue
                name, end = mm.group(1), mm.end()
            else:
                continue
            base = main_dir
        out.append(text[pos:m.start()])
        pos = end
        if budget.exhausted:                      # past the include budget: dropped unread, no look-up
            continue
        rel_name = name.strip()
        shown = rel_name if len(rel_name) <= 200 else rel_name[:200] + "..."
        try:
            found = _find(cmd, rel_name, base, path.parent, root, budget)
        except _OverBudget as exc:
            budget.exhausted = True
            messages.append(str(exc))
            continue
        if found is None:
            if not rel_name.lower().endswith(_QUIET):
                budget.skip(messages, f"{where}: \\{cmd}{{{shown}}}: not read (outside the project or missing)")
            continue
        target, real, rel = found
        if target.name.lower().endswith((".bbl",)):
            if budget.spend(messages):
                out.append(f"\n\\mustcitebbl{{{rel}}}\n")
            continue
        if real in stack:
            budget.skip(messages, f"{where}: \\{cmd}{{{shown}}} includes a file already being read "
                                  "(circular \\input); skipped")
            continue
        if len(stack) >= MAX_DEPTH:
            budget.skip(messages, f"{where}: \\{cmd}{{{shown}}}: includes nested deeper than {MAX_DEPTH}; skipped")
            continue
        if not budget.spend(messages):
            continue
        sub = expand(target, root, messages, main_dir=main_dir, stack=stack, files=files, budget=budget)
        out.append(("\n\\clearpage\n" if cmd == "include" else " ") + sub + ("\n" if cmd == "include" else " "))
    out.append(text[pos:])
    return "".join(out)


def load_project(root: Path, main: Path, messages: list[str]) -> Project:
    """The :class:`Project` of ``main`` in the folder ``root``: its includes expanded (:func:`expand`)."""
    files: list[str] = []
    text = expand(main, root, messages, main_dir=main.parent, files=files)
    return Project(root=root, main=main, text=text, files=files, messages=messages)
