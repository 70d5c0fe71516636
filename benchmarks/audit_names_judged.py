"""The name rules and the learned names judged blind on the real LaTeX drafts.

Each mode of ``mustcite audit`` (``--named rules``, the default, and ``--named learned``) audits every
project of ``<data>/drafts/manifest.json`` as of its year; the findings each shows by default are
pooled per project (one line per project, kind, name and proposed work), shuffled, and judged by
someone who wrote neither mode, without knowing which mode showed each: ``genuine`` (the draft
should cite this work here and cites no version of it), ``optional``, ``wrong`` or
``already_cited``. One JSON line per judged finding, with the confidence each mode gave it (null:
not shown by that mode): ``benchmarks/results/audit_names_judgements.jsonl``.

This counts, per mode and per split of ``benchmarks/splits/drafts_split.json`` (the dev projects,
and the test projects set aside before the learned names were built), findings shown per draft and
the share of each verdict, overall and by kind::

    python benchmarks/audit_names_judged.py [--judgements FILE]

Writes ``benchmarks/results/audit_names_judged.json``.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERDICTS = ("genuine", "optional", "wrong", "already_cited")
MODES = {"rules": "before", "learned": "after"}


def _verdict(v: str) -> str:
    return v.replace(" ", "_")


def tally(rows: list[dict], projects: set[str]) -> dict:
    """Per mode: findings shown on ``projects``, per draft, and each verdict's count and share."""
    out = {}
    for mode, side in MODES.items():
        shown = [r for r in rows if r["project"] in projects and r["confidence"].get(side) is not None]
        c = Counter(_verdict(r["verdict"]) for r in shown)
        n = len(shown)
        out[mode] = {"drafts": len(projects), "shown": n, "per_draft": n / len(projects) if projects else 0.0,
                     **{v: c[v] for v in VERDICTS}, **{f"{v}_share": c[v] / n if n else 0.0 for v in VERDICTS},
                     "by_kind": {k: {v: sum(1 for r in shown if r["kind"] == k and _verdict(r["verdict"]) == v)
                                     for v in VERDICTS} for k in sorted({r["kind"] for r in shown})}}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judgements", type=Path, default=HERE / "results" / "audit_names_judgements.jsonl")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "audit_names_judged.json")
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.judgements.read_text(encoding="utf-8").splitlines() if line.strip()]
    split = json.loads((HERE / "splits" / "drafts_split.json").read_text())
    result = {"what": "findings shown by default on the real LaTeX drafts, judged blind, per mode of the audit",
              "judged": len(rows),
              "splits": {name: tally(rows, set(split[name])) for name in ("dev", "test")},
              "all": tally(rows, set(split["dev"]) | set(split["test"]))}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for name in ("dev", "test"):
        for mode, t in result["splits"][name].items():
            print(f"{name:4s} {mode:7s} shown {t['shown']:3d} per draft {t['per_draft']:.2f} "
                  + " ".join(f"{v} {t[v]} ({t[v + '_share']:.0%})" for v in VERDICTS))


if __name__ == "__main__":
    main()
