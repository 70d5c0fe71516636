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

A fix travels in the diagnostic's ``data`` (:func:`code_actions` reads it back).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ..recommend.formats import bibtex, booktitle
from .documents import Bibliography, Cite, appended_entry, entry_head_range, field_value, lines_of

SOURCE = "mustcite"

#: the BibTeX field each checked field is written in
BIB_FIELDS = {"title": ("title",), "authors": ("author",), "year": ("year",), "venue": ("booktitle", "journal")}


def _line(source: str) -> int:
    """The line (from 1) of a check's ``source`` ("refs.bib:12")."""
    tail = source.rpartition(":")[2]
    return int(tail) if tail.isdigit() else 1


def record_value(field: str, record: dict[str, Any]) -> str | None:
    """The value a fix writes for ``field`` (a checked field), from the record the check found."""
    if field == "title":
        return record.get("title") or None
    if field == "authors":
        return " and ".join(record.get("authors") or ()) or None
    if field == "year":
        return str(record["year"]) if record.get("year") else None
    if field == "venue":
        return booktitle(record["venue"]) if record.get("venue") else None
    return None


def _composed(text: str, span: tuple[int, int]) -> bool:
    """Whether the field value at ``span`` (:func:`field_value`) is a ``@string`` name or one part
    of a ``#`` concatenation: its text is not the value read, so no fix rewrites it."""
    lo, hi = span
    enclosed = lo > 0 and text[lo - 1] in "{\""
    if not enclosed and not text[lo:hi].strip().isdigit():
        return True
    before = text[max(0, lo - 201):lo - enclosed].rstrip()
    after = text[hi + enclosed:hi + 201].lstrip()
    return before.endswith("#") or after.startswith("#")


def entry_diagnostics(text: str, check) -> list[types.Diagnostic]:
    """The diagnostics of one checked entry (a :class:`~mustcite.refcheck.results.RefCheck`) of a
    ``.bib`` file whose text is ``text``."""
    line = _line(check.source)
    head = entry_head_range(text, line)
    lines = lines_of(text)
    if check.status == "not_found":
        return [types.Diagnostic(range=head, severity=types.DiagnosticSeverity.Error, source=SOURCE,
                                 code="not_found", message=f"{check.key}: not found. {check.why}".strip())]
    if check.status == "unreadable":
        return [types.Diagnostic(range=head, severity=types.DiagnosticSeverity.Error, source=SOURCE,
                                 code="unreadable", message=f"{check.key}: cannot be read. {check.why}".strip())]
    if check.status == "unverifiable":
        return [types.Diagnostic(range=head, severity=types.DiagnosticSeverity.Hint, source=SOURCE,
                                 code="unverifiable",
                                 message=f"{check.key}: cannot verify offline. {check.why}".strip())]
    if check.status == "outdated":
        return [types.Diagnostic(range=head, severity=types.DiagnosticSeverity.Hint, source=SOURCE,
                                 code="outdated", message=f"{check.key}: {check.why}".strip())]
    if check.status != "mismatch":
        return []
    out = []
    for issue in check.issues:
        where, data = head, None
        for name in BIB_FIELDS.get(issue.field, ()):
            span = field_value(text, line, name)
            if span is None:
                continue
            where = lines.range(*span)
            value = record_value(issue.field, check.record or {})
            if value is not None and not _composed(text, span):
                data = {"fix": "set-field", "field": name, "value": value, "key": check.key}
            break
        out.append(types.Diagnostic(range=where, severity=types.DiagnosticSeverity.Warning, source=SOURCE,
                                    code=f"mismatch-{issue.field}", message=f"{check.key}: {issue.why}", data=data))
    return out


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


def code_actions(uri: str, text_of, diagnostics: list[types.Diagnostic]) -> list[types.CodeAction]:
    """The quick fixes of ``diagnostics`` of the document ``uri``; ``text_of(uri)`` gives a
    document's current text (open in the editor, else on disk), None for one the server may not
    read: a fix's target comes from the client, so one outside the workspace gets no fix."""
    out = []
    for d in diagnostics:
        data = d.data if isinstance(d.data, dict) else None
        if not data or d.source != SOURCE:
            continue
        if data.get("fix") == "set-field":
            if not all(isinstance(data.get(k), str) for k in ("field", "key", "value")):
                continue
            edit = types.TextEdit(range=d.range, new_text=data["value"])
            title = f"Set {data['field']} of {data['key']} to the corpus record's: {data['value']}"
            out.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[d],
                                        edit=types.WorkspaceEdit(changes={uri: [edit]})))
        elif data.get("fix") == "add-entry":
            target = data.get("uri")
            text = text_of(target) if isinstance(target, str) and target.endswith(".bib") else None
            if text is None or not isinstance(data.get("bibtex"), str):
                continue
            edit = appended_entry(text, data["bibtex"])
            title = f"Add the BibTeX of \"{data.get('title') or 'the paper'}\" to {target.rpartition('/')[2]}"
            out.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[d],
                                        edit=types.WorkspaceEdit(changes={target: [edit]})))
    return out
