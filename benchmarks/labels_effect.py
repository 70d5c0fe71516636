"""How much the labels move the benchmark: BM25, MiniLM and mustcite on the test split of two builds
of one benchmark recipe that differ only in their labels (e.g. ``offline-lr-v1`` and the cascade judge).

Inputs are the runs the other scripts wrote: ``<bench>/runs/<tag>.test.trec`` for the baselines (the
same pool and queries in both builds, so the same rankings) and the recommender's per-ground-truth runs
``mustcite.<truth>.test.trec`` of each build (``benchmarks/recommend_test.py``: a train-only model
of that build).  For each ground truth whose qrels come from the judge (type1, type2, mustcite) it
reports each method's means on each build's own test queries, and, on the queries both builds hold,
the paired difference new - old of every method (the baseline rankings do not change: only the
labels they are scored against do) with a paired t-test; mustcite is scored three ways: old model on
old labels, old model on new labels, new model on new labels.

    python benchmarks/labels_effect.py --old neurips-2024 --new neurips-2024-cascade
Writes ``benchmarks/results/labels_effect.{json,md}``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mustcite.benchmark import Benchmark, per_query, read_run  # noqa: E402
from mustcite.config import Workspace  # noqa: E402
from mustcite.io import atomic_write_json, atomic_write_text  # noqa: E402

OUT = Path(__file__).parent / "results" / "labels_effect"
TRUTHS = ("type1", "type2", "mustcite")
METRICS = ("R@100", "MRR", "MAP")


def scores(run_path: Path, qrels) -> dict[str, dict[str, float]]:
    return per_query(read_run(run_path), qrels, METRICS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="neurips-2024")
    ap.add_argument("--new", default="neurips-2024-cascade")
    ap.add_argument("--baseline", action="append", default=["BM25=bm25", "MiniLM=minilm-int8-64"])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    from scipy.stats import ttest_rel

    root = Workspace.resolve().root / "benchmarks"
    old, new = Benchmark.open(root / args.old), Benchmark.open(root / args.new)
    result = {"old": {"benchmark": args.old, "labels": old.manifest["labels"]["version"]},
              "new": {"benchmark": args.new, "labels": new.manifest["labels"]["version"]}, "truths": {}}
    lines = [f"# Labels {result['old']['labels']} (old) vs {result['new']['labels']} (new), test split\n"]
    for truth in TRUTHS:
        q_old, q_new = old.qrels("test", [truth])[truth], new.qrels("test", [truth])[truth]
        rows = []
        for spec in args.baseline:
            name, tag = spec.split("=", 1)
            rows.append((name, old.path / "runs" / f"{tag}.test.trec", new.path / "runs" / f"{tag}.test.trec"))
        rows.append(("mustcite (old model on new labels)", old.path / "runs" / f"mustcite.{truth}.test.trec",
                     old.path / "runs" / f"mustcite.{truth}.test.trec"))
        rows.append(("mustcite", old.path / "runs" / f"mustcite.{truth}.test.trec",
                     new.path / "runs" / f"mustcite.{truth}.test.trec"))
        table = {}
        for name, run_old, run_new in rows:
            a, b = scores(run_old, q_old), scores(run_new, q_new)
            shared = sorted(set(a["R@100"]) & set(b["R@100"]))
            entry = {"queries_old": len(a["R@100"]), "queries_new": len(b["R@100"]), "queries_shared": len(shared)}
            for m in METRICS:
                mo, mn = sum(a[m].values()) / len(a[m]), sum(b[m].values()) / len(b[m])
                x, y = [a[m][q] for q in shared], [b[m][q] for q in shared]
                p = float(ttest_rel(y, x).pvalue) if any(u != v for u, v in zip(x, y)) else 1.0
                entry[m] = {"old": round(mo, 4), "new": round(mn, 4),
                            "shared_difference": round(sum(y) / len(y) - sum(x) / len(x), 4), "p_ttest": round(p, 4)}
            table[name] = entry
        for name in table:
            for m in METRICS:
                base = table["BM25"][m]
                table[name][m]["ratio_vs_bm25_old"] = round(table[name][m]["old"] / base["old"], 3)
                table[name][m]["ratio_vs_bm25_new"] = round(table[name][m]["new"] / base["new"], 3)
        result["truths"][truth] = {"pairs_old": sum(len(v) for v in q_old.values()),
                                   "pairs_new": sum(len(v) for v in q_new.values()), "methods": table}
        lines.append(f"\n## {truth} (test pairs {result['truths'][truth]['pairs_old']} -> "
                     f"{result['truths'][truth]['pairs_new']})\n")
        lines.append("| method | R@100 old | R@100 new | shared diff (p) | MRR old | MRR new | shared diff (p) "
                     "| R@100 / BM25 old -> new |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        mustcite_old_model = "mustcite (old model on new labels)"
        for name, e in table.items():
            old_cells = ("" if name == mustcite_old_model else f"{e['R@100']['old']:.4f}",
                         "" if name == mustcite_old_model else f"{e['MRR']['old']:.4f}")
            lines.append(f"| {name} | {old_cells[0]} | {e['R@100']['new']:.4f} | "
                         f"{e['R@100']['shared_difference']:+.4f} ({e['R@100']['p_ttest']:.2g}) | {old_cells[1]} | "
                         f"{e['MRR']['new']:.4f} | {e['MRR']['shared_difference']:+.4f} ({e['MRR']['p_ttest']:.2g}) | "
                         f"{e['R@100']['ratio_vs_bm25_old']:.2f}x -> {e['R@100']['ratio_vs_bm25_new']:.2f}x |")
    atomic_write_json(args.out.with_suffix(".json"), result)
    atomic_write_text(args.out.with_suffix(".md"), "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
