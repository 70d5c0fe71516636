"""Reference checks and audit results as editor diagnostics, and the fixes they offer.

* a ``.bib`` entry: ``mismatch`` is a warning on each field that disagrees (its fix: the record's
  value, unless the field is written with ``#`` or a ``@string`` name), ``not_found`` and
  ``unreadable`` (a block that could not be read) errors on the entry's head line, ``outdated`` (an
  earlier version cited where a published one exists) and ``unverifiable`` ("cannot verify
  offline") hints there; a verified entry says nothing;
* a ``\\cite`` key: an error when no bibliography of the project defines it, a warning when its
  entry is a mismatch, not found or unreadable;
* the audit: one information diagnostic per missing must-cite paper at the bibliography command,
  with its reasons; its fix adds the paper's BibTeX to the ``.bib`` file the command names.

A fix travels in the diagnostic's ``data`` (:func:`code_actions` reads it back): the entry's key,
the field and the value flagged, never a position. Its edit is computed from the document's text
when the fix is asked for (or resolved), in the entry of that key and the field found in it, and
sent with the document's version, so an editor refuses it once the text has changed; a fix whose
field no longer holds the flagged value is not offered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from ..bibwrite import latex_text
from ..recommend.formats import bibtex, booktitle
from ..shown import shown_line
from .documents import (
    BibBlock,
    Bibliography,
    Cite,
    Lines,
    appended_entry,
    block_at_line,
    entry_fields,
    field_of,
    find_entry,
    head_span,
    lines_of,
)

SOURCE = "mustcite"

#: the BibTeX field each checked field is written in
BIB_FIELDS = {"title": ("title",), "authors": ("author",), "year": ("year",), "venue": ("booktitle", "journal")}


def _line(source: str) -> int:
    """The line (from 1) of a check's ``source`` ("refs.bib:12")."""
    tail = source.rpartition(":")[2]
    return int(tail) if tail.isdigit() else 1


def record_value(field: str, record: dict[str, Any]) -> str | None:
    """The value a fix writes for ``field`` (a checked field), from the record the check found."""
    # written between the field's braces: LaTeX's special characters escaped, braces kept paired
    if field == "title":
        return latex_text(record["title"]) if record.get("title") else None
    if field == "authors":
        return latex_text(" and ".join(record.get("authors") or ())) or None
    if field == "year":
        return str(record["year"]) if record.get("year") else None
    if field == "venue":
        return latex_text(booktitle(record["venue"])) if record.get("venue") else None
    return None


@dataclass(frozen=True)
class Spec:
    """A diagnostic of one entry with offsets relative to the entry's ``@``: what an entry's check
    says wherever the entry now is (:func:`placed` puts it in the document)."""

    start: int
    end: int
    severity: types.DiagnosticSeverity
    code: str
    message: str
    data: dict | None = None


def entry_specs(text: str, block: BibBlock, check) -> list[Spec]:
    """The diagnostics of the checked entry ``block`` of ``text`` (a
    :class:`~mustcite.refcheck.results.RefCheck`), relative to the entry's ``@``: a status on the
    entry's head, a mismatch on the value of the field found in the entry itself (its head, when
    the entry lacks the field)."""
    lo, hi = head_span(text, block)
    head = (0, hi - lo)
    one = {"not_found": (types.DiagnosticSeverity.Error, f"{check.key}: not found. {check.why}"),
           "unreadable": (types.DiagnosticSeverity.Error, f"{check.key}: cannot be read. {check.why}"),
           "unverifiable": (types.DiagnosticSeverity.Hint, f"{check.key}: cannot verify offline. {check.why}"),
           "outdated": (types.DiagnosticSeverity.Hint, f"{check.key}: {check.why}")}
    if check.status in one:
        severity, message = one[check.status]
        return [Spec(*head, severity, check.status, message.strip())]
    if check.status != "mismatch":
        return []
    fields = entry_fields(text, block) if block.entry else []
    out = []
    for issue in check.issues:
        where, data = head, None
        for name in BIB_FIELDS.get(issue.field, ()):
            f = next((f for f in fields if f.name == name), None)
            if f is None:
                continue
            where = (f.start - block.start, f.end - block.start)
            value = record_value(issue.field, check.record or {})
            old = text[f.start:f.end]
            if value is not None and not f.composed and value != old:
                data = {"fix": "set-field", "field": name, "value": value, "key": block.key, "old": old}
            break
        out.append(Spec(*where, types.DiagnosticSeverity.Warning, f"mismatch-{issue.field}",
                        f"{check.key}: {issue.why}", data))
    return out


def placed(specs: list[Spec], start: int, lines: Lines) -> list[types.Diagnostic]:
    """The diagnostics ``specs`` of the entry whose ``@`` is at ``start`` of the text of ``lines``."""
    return [types.Diagnostic(range=lines.range(start + s.start, start + s.end), severity=s.severity,
                             source=SOURCE, code=s.code, message=s.message, data=s.data) for s in specs]


def relative(specs: list[Spec], raw: str) -> list[tuple[Spec, int, int, int, int]]:
    """``specs`` of the entry whose text is ``raw``, each with its start's and end's line and
    UTF-16 column in ``raw`` (:func:`placed_at` puts them where the entry is)."""
    lines = Lines(raw)
    out = []
    for s in specs:
        a, b = lines.position(s.start), lines.position(s.end)
        out.append((s, a.line, a.character, b.line, b.character))
    return out


def placed_at(specs: list[tuple[Spec, int, int, int, int]], line: int, column: int) -> list[types.Diagnostic]:
    """The diagnostics :func:`relative` gives, for the entry whose ``@`` is at ``line`` and
    ``column`` (UTF-16) of its document: a position on the entry's first line moves with its
    column, the others only with its line."""
    def at(dl: int, dc: int) -> types.Position:
        return types.Position(line=line + dl, character=column + dc if dl == 0 else dc)
    return [types.Diagnostic(range=types.Range(start=at(sl, sc), end=at(el, ec)), severity=s.severity,
                             source=SOURCE, code=s.code, message=s.message, data=s.data)
            for s, sl, sc, el, ec in specs]


def entry_diagnostics(text: str, check, block: BibBlock | None = None) -> list[types.Diagnostic]:
    """The diagnostics of one checked entry of a ``.bib`` file whose text is ``text``: the entry
    ``block``, else the one whose head is on the line of ``check.source``."""
    block = block or block_at_line(text, _line(check.source))
    if block is None:
        return []
    return placed(entry_specs(text, block, check), block.start, lines_of(text))


def cite_diagnostics(cites: list[Cite], checks: dict[str, Any], bib_names: list[str], *,
                     complete: bool = True) -> list[types.Diagnostic]:
    """The diagnostics of a LaTeX source's citation keys, given the checks of every entry of the
    project's bibliographies by key (``bib_names``: the files they came from, for the message).
    ``complete`` False: some bibliography could not be read, so no key is called undefined."""
    out = []
    where = ", ".join(bib_names) or "no .bib file"
    for c in cites:
        check = checks.get(c.key)
        if check is None and not complete:
            continue
        if check is None:
            out.append(types.Diagnostic(range=c.range, severity=types.DiagnosticSeverity.Error, source=SOURCE,
                                        code="undefined", message=f"{c.key}: no entry of this key in {where}"))
        elif check.status in ("mismatch", "not_found", "unreadable"):
            what = "; ".join(i.why for i in check.issues) if check.status == "mismatch" else \
                f"{'not found' if check.status == 'not_found' else 'the entry cannot be read'}. {check.why}".strip()
            out.append(types.Diagnostic(range=c.range, severity=types.DiagnosticSeverity.Warning, source=SOURCE,
                                        code=check.status, message=f"{c.key}: {what}"))
    return out


def missing_diagnostics(bib: Bibliography, missing: list, bib_uri: str | None) -> list[types.Diagnostic]:
    """One information diagnostic per missing must-cite paper (audit results, best first) at the
    bibliography command ``bib``; its fix adds the paper's BibTeX to ``bib_uri``."""
    out = []
    for r in missing:
        if r.finding == "undefined_key":
            continue                   # the reference check marks the key itself
        if not r.paper_id:             # a placeholder: what the finding says
            out.append(types.Diagnostic(range=bib.range, severity=types.DiagnosticSeverity.Information,
                                        source=SOURCE, code="missing", message=r.message or r.title))
            continue
        why = r.message or (" ".join(r.reasons[:2]) if r.reasons else "")
        venue = " ".join(str(x) for x in (r.venue, r.year) if x)
        data = {"fix": "add-entry", "uri": bib_uri, "bibtex": bibtex(r), "title": r.title} if bib_uri else None
        out.append(types.Diagnostic(
            range=bib.range, severity=types.DiagnosticSeverity.Information, source=SOURCE, code="missing",
            message=f"Not cited: {r.title}" + (f" ({venue})" if venue else "") + f", {r.tier_name} "
                    + (f"(confidence {r.confidence:.2f})." if r.confidence is not None
                       else f"(audit score {r.score:.2f}).")
                    + (f" {why}" if why else ""),
            data=data))
    return out


#: a document's current text and version (None: not open in the editor, read from disk), or
#: None when the server may not read it
Document = Callable[[str], "tuple[str, int | None] | None"]


def set_field_span(text: str, data: dict, find: Callable[[str, str], BibBlock | None] = find_entry
                   ) -> tuple[int, int] | None:
    """Where a set-field fix (``data``: key, field, the value flagged ``old``) writes in ``text``,
    the document as it is now: the value of the field found in the entry of that key (the first of
    the key and of the field, as BibTeX reads them); None when the entry or the field is gone, is
    written with ``#`` or a ``@string`` name, or no longer holds the flagged value."""
    block = find(text, data["key"])
    f = field_of(text, block, data["field"]) if block is not None else None
    if f is None or f.composed or text[f.start:f.end] != data["old"]:
        return None
    return f.start, f.end


def _edit(uri: str, version: int | None, edit: types.TextEdit) -> types.WorkspaceEdit:
    """``edit`` of the document ``uri`` as it is at ``version`` (the editor refuses it once the
    document has changed; None: the file on disk)."""
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=[edit])])


def _valid(data: Any) -> dict | None:
    if not isinstance(data, dict):
        return None
    if data.get("fix") == "set-field" and all(isinstance(data.get(k), str) for k in ("field", "key", "value", "old")):
        return data
    if data.get("fix") == "add-entry" and isinstance(data.get("uri"), str) and isinstance(data.get("bibtex"), str):
        return data
    return None


def fix_edit(uri: str, data: dict, document: Document, find=find_entry) -> types.WorkspaceEdit | None:
    """The edit of the fix ``data`` (of a diagnostic of ``uri``), computed from the current text of
    the document it changes and sent with that text's version; None when the fix no longer
    applies or its target may not be read."""
    if data["fix"] == "set-field":
        got = document(uri)
        if got is None:
            return None
        text, version = got
        span = set_field_span(text, data, find)
        if span is None:
            return None
        return _edit(uri, version, types.TextEdit(range=lines_of(text).range(*span), new_text=data["value"]))
    target = data["uri"]
    got = document(target) if target.endswith(".bib") else None
    if got is None:
        return None
    text, version = got
    return _edit(target, version, appended_entry(text, data["bibtex"]))


def _title(data: dict) -> str:
    # keys, values and titles as read: terminal and bidirectional controls escaped
    if data["fix"] == "set-field":
        return shown_line(f"Set {data['field']} of {data['key']} to the corpus record's: {data['value']}")
    return shown_line(f"Add the BibTeX of \"{data.get('title') or 'the paper'}\" to {data['uri'].rpartition('/')[2]}")


def code_actions(uri: str, document: Document, diagnostics: list[types.Diagnostic], *, lazy: bool = False,
                 find=find_entry) -> list[types.CodeAction]:
    """The quick fixes of ``diagnostics`` of the document ``uri``; ``document(uri)`` gives a
    document's current text and version (:data:`Document`): a fix's target comes from the client,
    so one outside the workspace gets no fix. Each edit is computed from the current text, never
    from the diagnostic's range: a fix whose target no longer holds the flagged value is not
    offered. ``lazy`` (a client that resolves a code action's edit): no edit yet, the client asks
    for it when the fix is chosen (:func:`resolve_action`)."""
    out = []
    for d in diagnostics:
        data = _valid(d.data) if d.source == SOURCE else None
        if data is None:
            continue
        edit = fix_edit(uri, data, document, find)
        if edit is None:
            continue
        action = types.CodeAction(title=_title(data), kind=types.CodeActionKind.QuickFix, diagnostics=[d])
        if lazy:
            action.data = {**data, "document": uri}
        else:
            action.edit = edit
        out.append(action)
    return out


def resolve_action(action: types.CodeAction, document: Document, find=find_entry) -> types.CodeAction:
    """``action`` (from :func:`code_actions` with ``lazy``) with its edit, computed from the text of
    the document now; without one (nothing is changed) when the fix no longer applies."""
    data = _valid(action.data)
    uri = action.data.get("document") if isinstance(action.data, dict) else None
    action.edit = fix_edit(uri, data, document, find) if data is not None and isinstance(uri, str) else None
    return action
