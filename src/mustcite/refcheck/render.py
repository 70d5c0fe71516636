"""The check report as JSON Lines, a plain-text table or Markdown."""

from __future__ import annotations

import json
from collections import Counter

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
    return "".join(json.dumps(c.to_json(), ensure_ascii=False) + "\n" for c in checks)


def render_table(checks: list[RefCheck], width: int = 110) -> str:
    kw = min(30, max([3] + [len(c.key) for c in checks]))
    lines = [f"{'key':<{kw}}  {'status':<12}  details", f"{'-' * kw}  {'-' * 12}  {'-' * 40}"]
    for c in checks:
        detail = _detail(c)
        if len(detail) > width:
            detail = detail[: width - 3] + "..."
        key = c.key if len(c.key) <= kw else c.key[: kw - 1] + "~"
        lines.append(f"{key:<{kw}}  {c.status:<12}  {detail}")
    lines.append("")
    lines.append(summary(checks))
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(checks: list[RefCheck]) -> str:
    out = ["| key | status | details | record |", "|---|---|---|---|"]
    for c in checks:
        rec = ""
        if c.record:
            rec = f"{c.record.get('title', '')} ({c.record.get('venue', '')} {c.record.get('year', '')})"
        out.append(f"| `{_md(c.key)}` | **{c.status}** | {_md(_detail(c))} | {_md(rec)} |")
    out.append("")
    out.append(summary(checks))
    return "\n".join(out) + "\n"


def render(checks: list[RefCheck], fmt: str) -> str:
    return {"json": render_json, "table": render_table, "markdown": render_markdown}[fmt](checks)
