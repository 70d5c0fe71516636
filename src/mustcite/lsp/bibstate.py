"""One ``.bib`` document's entries kept across edits: an edit re-reads and re-checks only the
entries whose text it changed.

The text is cut into blocks (:func:`.documents.bib_blocks`, pieces read before are not read again).
Each entry is read alone (:func:`mustcite.refcheck.entries.entries_from_bib` on its own text, after
the ``@string`` definitions before it and its ``crossref`` parents, so it reads as in the whole
file) and kept under that text: an entry whose text, strings and parents are unchanged keeps what
it was read as, its check and its diagnostics (relative to its ``@``); only their places in the
document are computed again, in one pass (:class:`.documents.Lines` is built once per text).
What a text no longer holds is dropped at each update, so the memory kept is that of the
document's current entries.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from ..errors import MustciteError
from . import diagnostics as diag
from .documents import NOT_ENTRIES, BibBlock, LineCursor, Pieces, field_of, lines_of

#: a crossref field anywhere in an entry's text (then its parents are read with it)
_CROSSREF = re.compile(r"crossref\s*=", re.I)
#: crossref parents followed at most (as the reader does)
MAX_PARENTS = 4
#: entries read by one parse
BATCH = 500


@dataclass
class _Read:
    entry: Any                    # the Entry read (None: the text holds none)
    check: Any = None             # its RefCheck, once checked
    specs: list | None = None     # its diagnostics relative to its "@", once checked (diagnostics.relative)
    at: tuple[int, int] | None = None        # the line and column its diagnostics were last placed at
    diagnostics: list | None = None          # those diagnostics (the same objects while it stays there)


@dataclass
class BibState:
    """What is known of one ``.bib`` document. :meth:`update` gives the diagnostics of a text."""

    name: str                                         # the file's name, for each entry's source
    max_entry_chars: int
    pieces: Pieces = field(default_factory=lambda: Pieces())
    reads: dict[tuple[str, int, str], _Read] = field(default_factory=dict)
    string_defs: dict[str, tuple[str, str] | None] = field(default_factory=dict)
    xrefs: dict[str, bool] = field(default_factory=dict)       # entry text -> whether it has a crossref
    #: the checks by key, in file order (the first entry of a key, as BibTeX uses it)
    by_key: dict[str, Any] = field(default_factory=dict)
    #: entries read and checked at the last update (for tests and benchmarks)
    last_read: int = 0
    last_checked: int = 0
    #: characters @string expansion added to the entries read at the last update (one cap for them all)
    expanded: list[int] = field(default_factory=lambda: [0])

    def update(self, text: str, check_entries: Callable[[list], list]) -> list[types.Diagnostic]:
        """The diagnostics of ``text`` (the document now); ``check_entries(entries)`` checks the
        entries not checked before."""
        from ..refcheck.check import unreadable_check
        from ..refcheck.entries import MAX_ENTRIES
        from ..refcheck.results import RefCheck

        blocks = self.pieces.blocks(text)
        if len(blocks) > MAX_ENTRIES and sum(b.entry for b in blocks) > MAX_ENTRIES:
            over = [b for b in blocks if b.entry][MAX_ENTRIES]
            lines = lines_of(text)
            self.reads, self.by_key = {}, {}
            return [types.Diagnostic(
                range=lines.range(over.start, over.start + 1), severity=types.DiagnosticSeverity.Error,
                source=diag.SOURCE, code="unreadable",
                message=f"more than {MAX_ENTRIES:,} entries (the cap of one file): not checked; "
                        "split the bibliography")]
        context, defs = 0, {}                    # the strings before an entry: a digest of their texts, their values
        string_defs: dict[str, tuple[str, str] | None] = {}
        by_lower: dict[str, BibBlock] = {}                # entries by key, any case (for crossref parents)
        reads: dict[tuple[str, int, str], _Read] = {}
        xrefs: dict[str, bool] = {}
        placed: list[tuple[BibBlock, _Read]] = []
        registered: set[str] = set()
        fresh: list = []                  # (read, text, block, parents' text, parents, strings) to read
        seq: list[tuple[BibBlock, _Read]] = []
        for b in blocks:
            raw = text[b.start:b.end]
            if b.kind.startswith(NOT_ENTRIES):
                if not b.kind.startswith("string"):
                    continue
                got = string_defs[raw] = string_defs.get(raw) or self.string_defs.get(raw) or _string(raw)
                context = hash((context, raw))
                if got is not None:
                    defs = {**defs, got[0]: got[1]}   # a name defined again holds its new value after it
                continue
            xref = self.xrefs.get(raw)
            if xref is None:
                xref = _CROSSREF.search(raw) is not None
            xrefs[raw] = xref
            parents = []
            if xref:
                if not by_lower:
                    for e in blocks:
                        if e.entry:
                            by_lower.setdefault(e.key.lower(), e)
                parents = self._parents(text, b, by_lower)
            key = (raw, context, "\n".join(parents)) if parents else (raw, context, "")
            got = reads.get(key) or self.reads.get(key)
            if got is None:
                got = _Read(None)
                fresh.append((got, raw, b, key[2], len(parents), defs))
            reads[key] = got
            seq.append((b, got))
        self._read_all(fresh)
        for got, raw, b, *_ in fresh:
            if got.entry is None and len(raw) > self.max_entry_chars:
                got.check = RefCheck(b.key, "unverifiable", why=f"the entry is {len(raw):,} characters long, "
                                     f"over the {self.max_entry_chars:,} the editor checks; run mustcite check-refs")
        for b, got in seq:
            e = got.entry
            # a later entry of a key already read is not used (bibtexparser keeps the first)
            if e is not None and not e.unreadable.startswith("malformed"):
                if e.key in registered:
                    continue
                registered.add(e.key)
            placed.append((b, got))
        fresh = [f[0] for f in fresh]
        todo = [r for r in fresh if r.check is None and r.entry is not None and not r.entry.unreadable]
        if todo:
            for r, c in zip(todo, check_entries([r.entry for r in todo])):
                r.check = c
        out: list[types.Diagnostic] = []
        by_key: dict[str, Any] = {}
        lines = LineCursor(text)                 # the entries in order: one pass over the text
        for b, r in placed:
            if r.check is None:
                if r.entry is None:
                    continue
                r.check = unreadable_check(r.entry)
            if r.specs is None:
                rel = BibBlock(0, b.end - b.start, b.kind, b.key, b.closed)
                raw = text[b.start:b.end]
                r.specs = diag.relative(diag.entry_specs(raw, rel, r.check), raw)
            at = lines.line_column(b.start)
            if r.at != at:                                       # the entry moved (or is new)
                r.at, r.diagnostics = at, diag.placed_at(r.specs, *at)
                r.check.source = f"{self.name}:{at[0] + 1}"
                if r.entry is not None:
                    r.entry.source = r.check.source
            by_key.setdefault(r.check.key, r.check)
            out.extend(r.diagnostics)
        self.reads, self.by_key, self.string_defs, self.xrefs = reads, by_key, string_defs, xrefs
        self.last_read, self.last_checked = len(fresh), len(todo)
        return out

    def _read_all(self, fresh: list) -> None:
        """Read the entries ``fresh`` (:meth:`update`): those without crossref parents in batches
        of one parse each (an entry per block, told apart by the line it starts on), the others
        one by one."""
        from ..refcheck.entries import entries_from_bib

        self.expanded = [0]                   # @string expansion: one cap for the entries read now
        batches: dict[int, list] = {}
        for f in fresh:
            got, raw, _, context, parents, strings = f
            if parents or len(raw) > self.max_entry_chars:
                got.entry = self._read(raw, context, parents, strings)
            else:
                batches.setdefault(id(strings), []).append(f)
        for group in batches.values():
            for i in range(0, len(group), BATCH):
                part = group[i:i + BATCH]
                starts, line = {}, 1
                for j, f in enumerate(part):
                    starts[f"{self.name}:{line}"] = j
                    line += f[1].count("\n") + 1
                try:
                    entries, _ = entries_from_bib("\n".join(f[1] for f in part), self.name, part[0][5],
                                                  self.expanded)
                except MustciteError:
                    entries = []
                for e in entries:
                    j = starts.pop(e.source, None)
                    if j is not None:
                        part[j][0].entry = e
                for j in starts.values():              # no entry read at its line: read it alone
                    got, raw, _, context, parents, strings = part[j]
                    got.entry = self._read(raw, context, parents, strings)

    def _read(self, raw: str, context: str, parents: int, strings: dict[str, str]) -> Any:
        """The entry the block text ``raw`` reads as, after ``context`` (the texts of its
        ``parents`` crossref parents) and with the ``@string`` values ``strings``; None for a
        text over the editor's cap (not read) or holding no entry."""
        from ..refcheck.entries import entries_from_bib

        if len(raw) > self.max_entry_chars:
            return None
        try:
            got, _ = entries_from_bib(context + "\n" + raw if context else raw, self.name, strings,
                                      self.expanded)
        except MustciteError:
            return None
        return got[-1] if len(got) > parents else None

    def _parents(self, text: str, block: BibBlock, by_lower: dict[str, BibBlock]) -> list[str]:
        """The texts of the ``crossref`` parents of ``block``, :data:`MAX_PARENTS` up, nearest last."""
        out: list[str] = []
        seen = {block.key.lower()}
        b = block
        for _ in range(MAX_PARENTS):
            f = field_of(text, b, "crossref")
            ref = text[f.start:f.end].strip().lower() if f is not None else ""
            if not ref or ref in seen or ref not in by_lower:
                break
            seen.add(ref)
            b = by_lower[ref]
            out.insert(0, text[b.start:b.end])
        return out


def _string(raw: str) -> tuple[str, str] | None:
    """(lower-case name, value as written) of the ``@string`` block ``raw``; None when it holds none."""
    import bibtexparser
    from bibtexparser.model import String

    try:
        lib = bibtexparser.parse_string(raw, parse_stack=[])
    except Exception:  # the parser should not raise; a bad block defines nothing
        return None
    got = next((b for b in lib.blocks if isinstance(b, String)), None)
    return (got.key.lower(), got.value) if got is not None else None
