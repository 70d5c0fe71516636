"""The name rules and the learned names judged blind on the real LaTeX drafts.

Each mode of ``mustcite audit`` (``--named rules``, the default, and ``--named learned``) audits every
project of ``<data>/drafts/manifest.json`` as of its year; the findings each shows by default are
pooled per project (one line per project, kind, name and proposed work), shuffled, and judged by
someone who wrote neither mode, without knowing which mode showed each: ``genuine`` (the draft
should cite this work here and cites no version of it), ``optional``, ``wrong`` or
``already_cited``. One JSON line per judged finding, with the confidence each mode gave it (null:
not shown by that mode): ``benchmarks/results/audit_names_judgements.jsonl``.

The findings come from ``benchmarks/audit_drafts.py --split dev|test --compare rules=src
learned=src:learned`` (each split's ``audit_drafts_compare_<split>.json``). ``pool`` writes them as one
blind list (``"before"`` = rules, ``"after"`` = learned; one item per project, kind, name and proposed
work, shuffled with a fixed seed, without the modes or confidences) for the judge, who adds
``verdict`` and ``reason`` to each line; ``join`` puts the modes' confidences back::

    python benchmarks/audit_names_judged.py pool --compare FILE [FILE ...] --out BLIND.jsonl
    python benchmarks/audit_names_judged.py join --compare FILE [FILE ...] --verdicts JUDGED.jsonl \
        --out benchmarks/results/audit_names_judgements.jsonl

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


def _key(f: dict) -> tuple:
    # a finding without a name (an undefined key) is told apart by its message
    return f["project"], f["finding"], f.get("name") or f.get("message") or "", f.get("title") or ""


def pooled(compare_files: list[Path]) -> dict[tuple, dict]:
    """Every finding a mode showed on an intact draft, once per (project, kind, name, proposed work),
    with each mode's confidence (None: not shown by that mode) and what the judge reads."""
    items: dict[tuple, dict] = {}
    for path in compare_files:
        shown = json.loads(path.read_text(encoding="utf-8"))["shown"]
        for side, findings in shown.items():
            for f in findings:
                item = items.setdefault(_key(f), {
                    "project": f["project"], "kind": f["finding"], "name": f.get("name"),
                    "proposed_work": f"{f.get('title')} ({f.get('year')})" if f.get("title") else None,
                    "message": f.get("message"), "location": f.get("location"), "confidence": {}})
                item["confidence"][side] = f.get("confidence")
    for item in items.values():
        for side in MODES.values():
            item["confidence"].setdefault(side, None)
    return items


def pool_cmd(args) -> None:
    import random

    items = list(pooled(args.compare).values())
    random.Random(args.seed).shuffle(items)
    with args.out.open("w", encoding="utf-8") as fh:
        for i, item in enumerate(items):
            blind = {k: v for k, v in item.items() if k != "confidence"}
            fh.write(json.dumps({"idx": i, **blind}, ensure_ascii=False) + "\n")
    print(f"{len(items)} findings to judge: {args.out}")


def join_cmd(args) -> None:
    items = pooled(args.compare)
    verdicts = [json.loads(line) for line in args.verdicts.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_key = {(v["project"], v["kind"], v.get("name") or v.get("message") or "", v.get("proposed_work") or ""): v
              for v in verdicts}
    rows = []
    for item in items.values():
        v = by_key.get((item["project"], item["kind"], item.get("name") or item.get("message") or "",
                        item.get("proposed_work") or ""))
        if v is None or v.get("verdict") not in {*VERDICTS, "already cited"}:
            raise SystemExit(f"no verdict for {item['project']} {item['kind']} {item.get('name')}")
        rows.append({"project": item["project"], "kind": item["kind"], "name": item.get("name"),
                     "proposed_work": item.get("proposed_work"), "confidence": item["confidence"],
                     "verdict": _verdict(v["verdict"]), "reason": v.get("reason", "")})
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} judged findings: {args.out}")


def main() -> None:
    import sys

    if len(sys.argv) > 1 and sys.argv[1] in ("pool", "join"):
        ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
        ap.add_argument("step", choices=("pool", "join"))
        ap.add_argument("--compare", type=Path, nargs="+", required=True)
        ap.add_argument("--verdicts", type=Path)
        ap.add_argument("--seed", type=int, default=20261208)
        ap.add_argument("--out", type=Path, required=True)
        args = ap.parse_args()
        return pool_cmd(args) if args.step == "pool" else join_cmd(args)
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
