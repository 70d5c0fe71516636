"""Two sides' findings on intact held-out full texts, judged blind.

``audit_fulltext_simulation.py`` writes, per side, a seeded sample of 50 findings shown by default
on intact published papers. ``pool`` merges two samples into one blind list (one item per paper,
kind, name and proposed work, shuffled with a fixed seed, without the sides) and a key file that
says which side showed each item; the judge adds ``verdict`` (genuine, optional, wrong, already
cited) and ``reason`` to every line of the blind list; ``join`` puts the sides back and tallies
each side's verdicts, with Wilson 95% intervals and Fisher's exact test between the sides::

    python benchmarks/audit_fulltext_judged.py pool --sample rules=A.jsonl --sample learned=B.jsonl \\
        --out BLIND.jsonl --key KEY.json
    python benchmarks/audit_fulltext_judged.py join --key KEY.json --verdicts JUDGED.jsonl \\
        --out benchmarks/results/audit_fulltext_judged.json

``join`` also writes the joined verdicts beside ``--out`` (``audit_fulltext_judgements_join.jsonl``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERDICTS = ("genuine", "optional", "wrong", "already_cited")


def wilson(k: int, n: int, z: float = 1.96) -> list[float]:
    if not n:
        return [0.0, 0.0]
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [round((centre - half) / (1 + z * z / n), 3), round((centre + half) / (1 + z * z / n), 3)]


def pool(args) -> None:
    items: dict[tuple, dict] = {}
    for spec in args.sample:
        side, path = spec.split("=", 1)
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            f = json.loads(line)
            item = items.setdefault((f["paper"], f["finding"], f.get("name"), f.get("title")), {
                "paper": f["paper"], "kind": f["finding"], "name": f.get("name"),
                "proposed_work": f"{f.get('title')} ({f.get('year')})", "message": f.get("message"),
                "sentence": f.get("sentence"), "section": f.get("section"), "sides": []})
            item["sides"].append(side)
    order = list(items.values())
    random.Random(args.seed).shuffle(order)
    args.out.write_text("".join(json.dumps({"idx": i, **{k: v for k, v in it.items() if k != "sides"}},
                                           ensure_ascii=False) + "\n" for i, it in enumerate(order)), encoding="utf-8")
    args.key.write_text(json.dumps([{"idx": i, **it} for i, it in enumerate(order)]), encoding="utf-8")
    print(f"{len(order)} findings to judge: {args.out}")


def join(args) -> None:
    from scipy.stats import fisher_exact

    key = {k["idx"]: k for k in json.loads(args.key.read_text(encoding="utf-8"))}
    rows = []
    for line in args.verdicts.read_text(encoding="utf-8").splitlines():
        v = json.loads(line)
        k = key[v["idx"]]
        if (k["paper"], k["name"]) != (v["paper"], v["name"]):
            raise SystemExit(f"verdict {v['idx']} is not the pooled item it claims")
        rows.append({"paper": v["paper"], "kind": v["kind"], "name": v["name"], "proposed_work": v["proposed_work"],
                     "sides": k["sides"], "verdict": v["verdict"].replace(" ", "_"), "reason": v.get("reason", "")})
    if len(rows) != len(key):
        raise SystemExit(f"{len(key) - len(rows)} pooled findings have no verdict")
    sides = sorted({s for r in rows for s in r["sides"]})
    out = {"what": "findings shown on intact held-out full texts, a seeded sample of 50 per side, judged blind",
           "judged": len(rows), "sides": {}}
    for side in sides:
        c = Counter(r["verdict"] for r in rows if side in r["sides"])
        n = sum(c.values())
        out["sides"][side] = {"sample": n, **{v: c[v] for v in VERDICTS},
                              **{f"{v}_share": round(c[v] / n, 3) if n else 0.0 for v in VERDICTS},
                              **{f"{v}_ci95": wilson(c[v], n) for v in VERDICTS}}
    if len(sides) == 2:
        a, b = (out["sides"][s] for s in sides)
        out["fisher_p"] = {v: round(float(fisher_exact([[a[v], a["sample"] - a[v]], [b[v], b["sample"] - b[v]]])[1]), 5)
                           for v in VERDICTS}
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    args.out.with_name("audit_fulltext_judgements_join.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    for side in sides:
        s = out["sides"][side]
        print(side, " ".join(f"{v} {s[v]} ({s[v + '_share']:.0%})" for v in VERDICTS))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("pool", "join"))
    ap.add_argument("--sample", nargs="+", default=[], metavar="SIDE=FILE")
    ap.add_argument("--key", type=Path, required=True)
    ap.add_argument("--verdicts", type=Path)
    ap.add_argument("--seed", type=int, default=20261208)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "audit_fulltext_judged.json")
    args = ap.parse_args()
    pool(args) if args.step == "pool" else join(args)


if __name__ == "__main__":
    main()
