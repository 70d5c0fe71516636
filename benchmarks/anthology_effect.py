"""Does a fuller pool help? The benchmark test tables and the unseen contract of two builds, side by side.

Each build (a work folder) has its benchmark (v2 ``neurips-2024``, v3 ``neurips-2024-v3``), BM25 and
mustcite test runs (``benchmarks/recommend_test.py --out``) and the unseen contract
(``benchmarks/unseen_contract.py --out``). This reads both builds' reports and, so that the two
mustcite runs are compared on the same inputs, scores the *before* run and the *after* run on the
after build's qrels (the same test queries), with a paired randomisation test per metric:

    python benchmarks/anthology_effect.py --before-work OLD --after-work NEW \\
        --before-reports DIR --after-reports DIR [--out PATH]

``*-reports`` folders hold ``recommend_test_v2.json``, ``recommend_test_v3.json`` and
``unseen_contract.json``. Writes ``benchmarks/results/anthology_effect.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mustcite.benchmark import GROUND_TRUTHS, Benchmark, mean, per_query, randomisation_test, read_run

OUT = Path(__file__).parent / "results" / "anthology_effect.json"
METRICS = ("MAP", "MRR", "nDCG@10", "R@100")
BENCHES = {"v2": "neurips-2024", "v3": "neurips-2024-v3"}


def _load(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.is_file() else None


def paired(before_work: Path, after_work: Path, name: str) -> dict:
    """mustcite before vs after, both runs scored on the after build's test qrels."""
    after = Benchmark(after_work / "benchmarks" / name)
    out = {}
    for gt, qrels in after.qrels("test", GROUND_TRUTHS).items():
        runs = {k: read_run(w / "benchmarks" / name / "runs" / f"mustcite.{gt}.test.trec")
                for k, w in (("before", before_work), ("after", after_work))}
        pq = {k: per_query(r, qrels, METRICS) for k, r in runs.items()}
        row = {"queries": len(pq["after"][METRICS[0]])}
        for m in METRICS:
            b, a = mean(pq["before"][m]), mean(pq["after"][m])
            row[m] = {"before": round(b, 4), "after": round(a, 4), "ratio": round(a / b, 3) if b else None,
                      "p": randomisation_test(pq["after"][m], pq["before"][m])}
        out[gt] = row
    return out


def tables(report: dict | None) -> dict:
    if not report:
        return {}
    return {gt: {meth: {m: row.get(m) for m in (*METRICS, "queries", "R@100 ratio", "MRR ratio")}
                 for meth, row in t.items()} for gt, t in report["tables"].items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before-work", type=Path, required=True)
    ap.add_argument("--after-work", type=Path, required=True)
    ap.add_argument("--before-reports", type=Path, required=True)
    ap.add_argument("--after-reports", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    res: dict = {"before_work": str(a.before_work), "after_work": str(a.after_work)}
    for tag, name in BENCHES.items():
        rb, ra = (_load(d / f"recommend_test_{tag}.json") for d in (a.before_reports, a.after_reports))
        entry = {"before": tables(rb), "after": tables(ra)}
        if rb and ra:
            entry["paired_on_after_qrels"] = paired(a.before_work, a.after_work, name)
        res[tag] = entry
    ub, ua = (_load(d / "unseen_contract.json") for d in (a.before_reports, a.after_reports))
    res["unseen"] = {k: ({"pool_papers": u["pool_papers"], "queries": u["queries"],
                          "conventions": {c: {"mustcite": v["mustcite"], "bm25": v["bm25"], "ratio": v["ratio"]}
                                          for c, v in u["conventions"].items()}} if u else None)
                     for k, u in (("before", ub), ("after", ua))}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=1) + "\n")
    for tag in BENCHES:
        for gt, row in res[tag].get("paired_on_after_qrels", {}).items():
            print(f"{tag} {gt:9s} " + "  ".join(f"{m} {row[m]['before']:.4f}->{row[m]['after']:.4f} "
                                              f"(p={row[m]['p']:.2g})" for m in METRICS))
    print(f"-> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
