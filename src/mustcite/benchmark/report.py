"""Result tables in the layout of the paper's Tables 3-6: one row per method, one column per metric.

Significance markers compare each run with the first (``*`` p < 0.05, ``**`` p < 0.01, paired test
over per-query values) and, when a second reference run is named (``versus``), with that one too
(``†`` p < 0.05, ``††`` p < 0.01); the best value of each column is bold (markdown/latex).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

from ..errors import UsageError
from .evaluate import METRICS, mean
from .significance import pvalue

FORMATS = ("markdown", "csv", "latex", "json")


@dataclass
class Row:
    method: str
    values: dict[str, float]
    pvalues: dict[str, float | None] = field(default_factory=dict)
    queries: int = 0
    pvalues_vs: dict[str, float | None] = field(default_factory=dict)   # vs the ``versus`` run


def compare_with(rows: list[Row], per_query_by_run: list[tuple[str, dict[str, dict[str, float]]]], versus: str,
                 metrics: tuple[str, ...] = METRICS, test: str = "ttest") -> None:
    """Fill each row's ``pvalues_vs``: its paired test against the run named ``versus``."""
    ref = dict(per_query_by_run).get(versus)
    if ref is None:
        raise UsageError(f"no run named {versus!r} to compare with")
    for r, (name, pq) in zip(rows, per_query_by_run):
        r.pvalues_vs = {m: (None if name == versus else pvalue(pq[m], ref[m], test)) for m in metrics}


def build_rows(per_query_by_run: list[tuple[str, dict[str, dict[str, float]]]],
               metrics: tuple[str, ...] = METRICS, test: str = "ttest") -> list[Row]:
    """Average each run's per-query values and test each run against the first one."""
    rows = []
    base = per_query_by_run[0][1] if per_query_by_run else {}
    for i, (name, pq) in enumerate(per_query_by_run):
        values = {m: mean(pq[m]) for m in metrics}
        pv = {m: (None if i == 0 else pvalue(pq[m], base[m], test)) for m in metrics}
        rows.append(Row(name, values, pv, len(next(iter(pq.values()), {}))))
    return rows


def _marker(p: float | None) -> str:
    if p is None:
        return ""
    return "**" if p < 0.01 else "*" if p < 0.05 else ""


def _best(rows: list[Row], metrics) -> dict[str, float]:
    return {m: max(r.values[m] for r in rows) for m in metrics} if rows else {}


def _dagger(p: float | None) -> str:
    return "" if p is None else "††" if p < 0.01 else "†" if p < 0.05 else ""


def render(rows: list[Row], fmt: str = "markdown", metrics: tuple[str, ...] = METRICS,
           title: str = "", versus: str | None = None) -> str:
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")
    if fmt == "json":
        return json.dumps({"title": title, "metrics": list(metrics),
                           "rows": [{"method": r.method, "queries": r.queries, "values": r.values,
                                     "pvalues_vs_first": r.pvalues} for r in rows]}, indent=1)
    best = _best(rows, metrics)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["Method", *metrics, *[f"p({m})" for m in metrics]])
        for r in rows:
            w.writerow([r.method, *[f"{r.values[m]:.4f}" for m in metrics],
                        *["" if r.pvalues.get(m) is None else f"{r.pvalues[m]:.4g}" for m in metrics]])
        return buf.getvalue()
    header = [m.replace("nDCG@", "nD@") for m in metrics]
    if fmt == "markdown":
        lines = ([f"**{title}**", ""] if title else []) + [
            "| Method | " + " | ".join(header) + " |", "|---|" + "---:|" * len(metrics)]
        for r in rows:
            cells = []
            for m in metrics:
                s = f"{r.values[m]:.4f}{_marker(r.pvalues.get(m))}{_dagger(r.pvalues_vs.get(m))}"
                cells.append(f"**{s}**" if len(rows) > 1 and r.values[m] == best[m] else s)
            lines.append(f"| {r.method} | " + " | ".join(cells) + " |")
        lines.append("")
        lines.append("`*` p < 0.05, `**` p < 0.01 vs the first row" + (f"; `†` p < 0.05, `††` p < 0.01 vs {versus}"
                                                                         if versus else "")
                     + " (paired test over queries).")
        return "\n".join(lines) + "\n"
    # latex
    esc = lambda s: s.replace("_", r"\_").replace("&", r"\&").replace("%", r"\%")  # noqa: E731
    lines = [r"\begin{table}[t]", r"\centering"]
    if title:
        lines.append(r"\caption{" + esc(title) + "}")
    lines += [r"\begin{tabular}{l" + "r" * len(metrics) + "}", r"\toprule",
              "Method & " + " & ".join(esc(h) for h in header) + r" \\", r"\midrule"]
    for r in rows:
        cells = []
        for m in metrics:
            s = f"{r.values[m]:.4f}" + ("$^{" + _marker(r.pvalues.get(m)) + "}$" if _marker(r.pvalues.get(m)) else "")
            cells.append(r"\textbf{" + s + "}" if len(rows) > 1 and r.values[m] == best[m] else s)
        lines.append(esc(r.method) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"
