"""The bibliography of a LaTeX project as entries by citation key.

The ``.bib`` files named by ``\\bibliography``/``\\addbibresource`` (else every ``.bib`` in the
project) are read first (:func:`mustcite.extract.bibtex.parse_bib`), then a ``.bbl`` or an inline
``thebibliography`` (:func:`mustcite.extract.bibtex.parse_bbl`) for keys the ``.bib`` files lack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..bibtex import BibEntry, parse_bbl, parse_bib, skipped_message
from .arguments import BraceIndex, braced, bracketed
from .includes import Project, find_inside, read_text, rel_path


@dataclass(frozen=True)
class BibliographyCommand:
    """A ``\\bibliography``-like command: its ``.bib`` names and the offsets of the whole command."""

    names: list[str]
    start: int
    end: int


def bibliography_commands(text: str) -> list[BibliographyCommand]:
    """The ``\\bibliography``/``\\addbibresource`` (and biblatex's ``\\addglobalbib``/
    ``\\addsectionbib``) commands of ``text`` in order, ``.bib`` added to names where missing;
    remote resources are skipped."""
    out = []
    index = BraceIndex(text)
    pos = 0
    for m in re.finditer(r"\\(bibliography|addbibresource|addglobalbib|addsectionbib)(?![a-zA-Z])", text):
        if m.start() < pos:          # inside the argument just read: not a command of its own
            continue
        j = m.end()
        b = bracketed(text, j)
        opt = b[0] if b else ""
        br = braced(text, b[1] if b else j, index)
        if not br or "remote" in opt:
            continue
        pos = br[1]
        names = [n.strip() for n in br[0].split(",") if n.strip()]
        out.append(BibliographyCommand([n if n.lower().endswith(".bib") else n + ".bib" for n in names],
                                       m.start(), br[1]))
    return out


def bib_names(text: str) -> list[str]:
    """The ``.bib`` file names of :func:`bibliography_commands`, in order."""
    return [n for c in bibliography_commands(text) for n in c.names]


def read_bibliography(project: Project, body: str, all_files: list[Path],
                      ) -> tuple[dict[str, BibEntry], list[str], dict[str, str]]:
    """Bib entries by key: named .bib files (else every .bib), then .bbl / thebibliography entries
    for keys the .bib files lack; also the names of the .bib files read, and the keys of the .bib
    entries that could not be read (key -> "file:line", each also a message)."""
    root, msgs = project.root, project.messages
    named = bib_names(project.text)
    bibs: list[Path] = []
    looked: dict[str, Path | None] = {}
    for n in dict.fromkeys(named):
        if len(looked) >= 100:               # \bibliography{a,b,...} repeated: a bounded number of look-ups
            msgs.append(f"more than {len(looked)} bibliography files named; the rest are not read")
            break
        # inside the project only, decided on the name first; missing and outside read the same
        p = find_inside(root, project.main.parent, n) or find_inside(root, root, n)
        looked[n] = p
        if p is not None:
            bibs.append(p)
        else:
            msgs.append(f"bibliography file {n} not found in the project")   # also when outside it
    if not bibs:
        bibs = [p for p in all_files if p.name.lower().endswith(".bib")]
        if named and bibs:
            msgs.append(f"read every .bib file in the project instead ({len(bibs)})")
    entries: dict[str, BibEntry] = {}
    unreadable: dict[str, str] = {}
    for p in dict.fromkeys(bibs):
        text = read_text(p, root, msgs)
        if text is None:
            continue
        got, m = parse_bib(text, rel_path(p, root), keep_unreadable=True)
        msgs.extend(m)
        for e in got:
            if e.unreadable:
                msgs.append(skipped_message(e))
                unreadable.setdefault(e.key, e.source)
            else:
                entries.setdefault(e.key, e)
    extra: list[tuple[str, str]] = []
    inline = re.search(r"\\begin\s*\{thebibliography\}.*?(?:\\end\s*\{thebibliography\}|$)", body, re.S)
    if inline:
        extra.append((inline.group(0), rel_path(project.main, root)))
    bbls = [p for p in all_files if p.name.lower().endswith(".bbl")]
    bbls.sort(key=lambda p: (p.stem != project.main.stem, str(p)))
    for p in bbls[:1]:
        t = read_text(p, root, msgs)
        if t is not None:
            extra.append((t, rel_path(p, root)))
    for text, name in extra:
        got, m = parse_bbl(text, name)
        msgs.extend(m)
        for e in got:
            entries.setdefault(e.key, e)
    return entries, [p.name for p in bibs], unreadable
