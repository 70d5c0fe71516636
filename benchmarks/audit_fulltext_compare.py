"""Sides of ``audit_fulltext_simulation.py`` runs compared paper by paper: the same seeded papers,
whether each side shows the seeded omission (exact McNemar), how many findings each shows on the
intact papers (Wilcoxon signed-rank), and how many of those findings have a rendered citation right
after the name in their own sentence ("MinAtar (Young and Tian, 2019)", "LIBSVM [6]"): a finding
there is most likely about a work the paper already cites.

    python benchmarks/audit_fulltext_compare.py rules=RESULT.json:before learned=OTHER.json:after \\
        --out benchmarks/results/audit_fulltext_compare.json

Each ``NAME=FILE:SIDE`` names a side of a result file; only the papers every side audited count.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "audit_fulltext_compare.json"
#: a rendered citation right after a name: "[12]", "[3, 12]", "(Smith et al., 2020)", "(2020)"
_MARKER_AFTER = re.compile(r"^[\s~*_]*(?:[-\w]*\s+){0,2}?[\s~*_]*(?:\[\s*\d[\d,\s\-\u2013]*\]|\([^()]{0,120}?"
                           r"(?:19|20)\d\d[a-z]?\))")


def marker_after_name(sentence: str, name: str | None) -> bool:
    """Whether a rendered citation stands right after (one of) the name's places in ``sentence``."""
    if not name or not sentence:
        return False
    for m in re.finditer(re.escape(name), sentence):
        if _MARKER_AFTER.match(sentence[m.end():m.end() + 160]):
            return True
    return False


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value of ``b`` and ``c`` discordant pairs."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    p = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * p)


def side_rows(spec: str) -> tuple[str, dict[str, dict]]:
    name, _, rest = spec.partition("=")
    file, _, side = rest.rpartition(":")
    data = json.loads(Path(file).read_text())
    return name, {r["paper"]: r for r in data["sides"][side]["rows"]}


def figures(rows: list[dict]) -> dict:
    per = [len(r["intact"]) for r in rows]
    shown = [f for r in rows for f in r["intact"]]
    named = [f for f in shown if f.get("finding") in ("named_not_cited", "bib_not_cited")]
    at = sum(marker_after_name(f.get("sentence") or "", f.get("name")) for f in named)
    return {"papers": len(rows), "seeded_shown": sum(r["shown"] for r in rows),
            "seeded_share": round(sum(r["shown"] for r in rows) / max(1, len(rows)), 4),
            "seeded_found": sum(r["found"] for r in rows),
            "intact_shown": len(shown), "intact_per_paper": round(float(np.mean(per)) if per else 0.0, 3),
            "intact_named": len(named), "intact_named_marker_after": at,
            "intact_named_marker_after_share": round(at / max(1, len(named)), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sides", nargs="+", metavar="NAME=FILE:SIDE")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    sides = dict(side_rows(s) for s in args.sides)
    common = sorted(set.intersection(*(set(v) for v in sides.values())))
    out = {"command": "python benchmarks/audit_fulltext_compare.py " + " ".join(args.sides),
           "papers": len(common), "sides": {n: figures([v[p] for p in common]) for n, v in sides.items()},
           "pairs": {}}
    names = list(sides)
    from scipy.stats import wilcoxon

    for i, a in enumerate(names):
        for b in names[i + 1:]:
            only_a = sum(sides[a][p]["shown"] and not sides[b][p]["shown"] for p in common)
            only_b = sum(sides[b][p]["shown"] and not sides[a][p]["shown"] for p in common)
            da = np.array([len(sides[a][p]["intact"]) for p in common])
            db = np.array([len(sides[b][p]["intact"]) for p in common])
            diff = db - da
            out["pairs"][f"{a} vs {b}"] = {
                "seeded_only_first": only_a, "seeded_only_second": only_b,
                "mcnemar_p": round(mcnemar_exact(only_a, only_b), 6),
                "intact_more_second": int((diff > 0).sum()), "intact_fewer_second": int((diff < 0).sum()),
                "wilcoxon_p": float(wilcoxon(da, db).pvalue) if (diff != 0).any() else 1.0}
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    for n, f in out["sides"].items():
        print(n, f)
    for k, v in out["pairs"].items():
        print(k, v)


if __name__ == "__main__":
    main()
