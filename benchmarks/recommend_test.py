"""The held-out table: BM25, MiniLM and mustcite on one benchmark split, with ratios and significance.

mustcite here is a train-only model of the benchmark (``mustcite train --benchmark NAME``: tier
models fit on the train queries, the ``--refs`` papers of earlier years are labelled neighbours
only; nothing is tuned on this split). Its runs are written per ground truth, each ranked by that
tier's own probability, to ``<bench>/runs/mustcite.<truth>.<split>.trec`` from one scoring pass.
BM25 and MiniLM are the runs ``mustcite benchmark run`` wrote (``--run NAME=TAG`` reads
``<bench>/runs/<TAG>.<split>.trec``). Every row is compared with the first (BM25) on the same
queries: the ratio of the means, a paired t-test and a paired randomisation test.

    python benchmarks/recommend_test.py --benchmark neurips-2024 --refs mustcite-work/extract \\
        --run BM25=bm25 --run MiniLM=minilm-int8-256 [--model DIR] [--split test]

Writes ``benchmarks/results/recommend_test_<benchmark>.json`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mustcite.benchmark import (  # noqa: E402
    GROUND_TRUTHS,
    Benchmark,
    mean,
    paired_ttest,
    per_query,
    randomisation_test,
    read_run,
    write_run,
)
from mustcite.config import Workspace  # noqa: E402
from mustcite.recommend import TIER_OF_TRUTH  # noqa: E402  (the tier that ranks each ground truth)

METRICS = ("MAP", "MRR", "nDCG@10", "R@50", "R@100", "HR@10")


def _p(p: float) -> str:
    """A randomisation-test p-value as printed (10,000 sign flips: nothing below 1e-4 is resolved)."""
    return "p<0.001" if p < 0.001 else f"p={p:.2g}"


def mustcite_runs(bench: Benchmark, split: str, model: Path, top: int) -> dict[str, Path]:
    """Write the recommender's run per ground truth; returns ``{truth: path}``."""
    from mustcite.recommend import Recommender

    rec = Recommender.load(model, cache_queries=True)
    queries = bench.queries(split)
    tiers = tuple(dict.fromkeys(t for t in TIER_OF_TRUTH.values() if t in rec.tiers.models))
    t0 = time.perf_counter()
    ranked = rec.rank_ids(queries, tiers, top=top)
    seconds = time.perf_counter() - t0
    out = {}
    for truth, tier in TIER_OF_TRUTH.items():
        ids = ranked.get(tier, {})
        path = bench.path / "runs" / f"mustcite.{truth}.{split}.trec"
        write_run(path, {qid: [(pid, float(len(pids) - i)) for i, pid in enumerate(pids)] for qid, pids in ids.items()},
                  tag=f"mustcite-{truth}")
        out[truth] = path
    print(f"mustcite: {len(queries)} {split} queries scored in {seconds:.1f} s", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--split", default="test")
    ap.add_argument("--run", action="append", default=[],
                    help="NAME=TAG of a run in <bench>/runs (first: the baseline)")
    ap.add_argument("--model", type=Path, help="a train-only model of this benchmark (default: train one)")
    ap.add_argument("--refs", action="append", default=[], help="reference folders (labelled neighbours) when training")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE of RecommenderConfig when training")
    ap.add_argument("--top", type=int, default=100)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)

    bench = Benchmark.open(Workspace.resolve().root / "benchmarks" / args.benchmark)
    manifest = bench.manifest
    model = args.model
    trained = None
    if model is None:
        from common import parse_set  # the same KEY=VALUE parsing as the ablations

        from mustcite.recommend import RecommenderConfig, train_benchmark

        config = RecommenderConfig(**parse_set(args.set))
        model = Workspace.resolve().root / "models" / f"bench-{args.benchmark}"
        t0 = time.perf_counter()
        card = train_benchmark(bench.path, model, refs=args.refs, config=config,
                               log=lambda s: print(s, file=sys.stderr))
        trained = {"seconds": round(time.perf_counter() - t0, 1), "config": card.get("config"),
                   "dev": card.get("metrics", {}).get("dev")}
    runs = [spec.split("=", 1) for spec in args.run]
    paths = {name: {gt: bench.path / "runs" / f"{tag}.{args.split}.trec" for gt in GROUND_TRUTHS} for name, tag in runs}
    paths["mustcite"] = mustcite_runs(bench, args.split, model, args.top)

    tables: dict[str, dict] = {}
    md = [f"# {args.benchmark} ({manifest.get('version')}) {args.split}: ratios and p-values vs {runs[0][0]}"]
    for gt, qrels in bench.qrels(args.split, GROUND_TRUTHS).items():
        pq = {name: per_query(read_run(p[gt]), qrels, METRICS) for name, p in paths.items()}
        base_name = runs[0][0]
        rows = {}
        for name, values in pq.items():
            row = {"queries": len(values[METRICS[0]])}
            for m in METRICS:
                v, b = mean(values[m]), mean(pq[base_name][m])
                row[m] = round(v, 4)
                if name != base_name:
                    row[f"{m} ratio"] = round(v / b, 3) if b else None
                    row[f"{m} p_ttest"] = paired_ttest(values[m], pq[base_name][m])
                    row[f"{m} p_perm"] = randomisation_test(values[m], pq[base_name][m])
            rows[name] = row
        tables[gt] = rows
        md.append(f"\n## {gt} ({rows[base_name]['queries']} queries)\n")
        md.append("| method | " + " | ".join(METRICS) + " | R@100 ratio | MRR ratio |")
        md.append("|---|" + "---|" * (len(METRICS) + 2))
        for name, row in rows.items():
            def ratio(m: str, name: str = name, row: dict = row, base_name: str = base_name) -> str:
                return "1" if name == base_name else f"{row[f'{m} ratio']:.2f}x ({_p(row[f'{m} p_perm'])})"
            md.append(f"| {name} | " + " | ".join(f"{row[m]:.4f}" for m in METRICS)
                      + f" | {ratio('R@100')} | {ratio('MRR')} |")
    text = "\n".join(md)
    print(text)
    out = args.out or Path(__file__).parent / "results" / f"recommend_test_{args.benchmark}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"benchmark": str(bench.path), "version": manifest.get("version"), "split": args.split,
                               "model": str(model), "trained": trained,
                               "runs": {k: {gt: str(p) for gt, p in v.items()} for k, v in paths.items()},
                               "tables": tables, "markdown": text}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
