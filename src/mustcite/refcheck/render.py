"""The check report as JSON Lines, a plain-text table or Markdown. Every value read from an entry,
a file or a record is shown through :mod:`mustcite.shown`: terminal and bidirectional controls
escaped (``\\x1b``, ``\\u202e``), Markdown escaped in the Markdown report. The BibTeX entry of the
published version an ``outdated`` entry should cite instead is written by :mod:`.published`."""

from __future__ import annotations

import json
import re
from collections import Counter

from ..shown import json_shown, markdown_key, markdown_shown, shown, shown_line
from .published import record_bibtex as record_bibtex
from .results import STATUSES, RefCheck

FORMATS = ("table", "json", "markdown")

def summary(checks: list[RefCheck]) -> str:
    n = Counter(c.status for c in checks)
    return f"{len(checks)} entries: " + ", ".join(f"{n.get(s, 0)} {s}" for s in STATUSES)


def _detail(c: RefCheck) -> str:
    if c.issues:
        return "; ".join(f"{i.field}: {i.why}" for i in c.issues)
    return c.why


def render_json(checks: list[RefCheck]) -> str:
    return json_shown("".join(json.dumps(c.to_json(), ensure_ascii=False) + "\n" for c in checks))


def render_table(checks: list[RefCheck], width: int = 110) -> str:
    kw = min(30, max([3] + [len(shown_line(c.key)) for c in checks]))
    lines = [f"{'key':<{kw}}  {'status':<12}  details", f"{'-' * kw}  {'-' * 12}  {'-' * 40}"]
    for c in checks:
        detail = shown_line(_detail(c))
        if len(detail) > width:
            detail = detail[: width - 3] + "..."
        key = shown_line(c.key)
        key = key if len(key) <= kw else key[: kw - 1] + "~"
        lines.append(f"{key:<{kw}}  {c.status:<12}  {detail}")
    lines.append("")
    lines.append(summary(checks))
    return "\n".join(lines) + "\n"


def render_markdown(checks: list[RefCheck]) -> str:
    """The table, the summary, then the published version of each outdated entry as BibTeX. Every
    value from an entry or a record is escaped (:func:`~mustcite.shown.markdown_shown`; the BibTeX
    block through :func:`~mustcite.shown.shown`): nothing in a .bib file becomes an image, a link,
    HTML or a terminal control in the page a CI job shows."""
    out = ["| key | status | details | record |", "|---|---|---|---|"]
    for c in checks:
        rec = ""
        if c.record:
            rec = f"{c.record.get('title', '')} ({c.record.get('venue', '')} {c.record.get('year', '')})"
        out.append(f"| {markdown_key(c.key)} | **{c.status}** | {markdown_shown(_detail(c))} "
                   f"| {markdown_shown(rec)} |")
    out.append("")
    out.append(summary(checks))
    newer = [c for c in checks if c.bibtex]
    if newer:
        body = "".join(shown(c.bibtex) for c in newer)
        # a fence longer than any backtick run of the entries: no value can close the block
        fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", body)), default=0) + 1)
        out += ["", "Published versions of the outdated entries, to cite instead:", "", f"{fence}bibtex"]
        out += [shown(c.bibtex) for c in newer]
        out.append(fence)
    return "\n".join(out) + "\n"


def render(checks: list[RefCheck], fmt: str) -> str:
    return {"json": render_json, "table": render_table, "markdown": render_markdown}[fmt](checks)
