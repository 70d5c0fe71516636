"""The results table in the paper's layout (MasterSet Tables 3-6): one row per run, one table per
ground truth, paired t-test of every row against the first (BM25).

A run is ``NAME=FILE``; ``{truth}`` in FILE is replaced by the ground truth, for methods that rank
differently per ground truth (the recommender ranks by each tier's own probability; see
``mustcite recommend --rank-by``). Writes ``benchmarks/results/benchmark_table.{md,json}``.

    B=mustcite-work/benchmarks/neurips-2024
    python benchmarks/benchmark_table.py --run BM25=$B/runs/bm25.test.trec \\
        --run MiniLM-L6=$B/runs/minilm.test.trec --run MiniLM-NTX=$B/runs/minilm-ntx.test.trec \\
        --run 'mustcite=$B/runs/recommender.{truth}.test.trec'
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mustcite.benchmark import (  # noqa: E402
    GROUND_TRUTHS,
    Benchmark,
    build_rows,
    compare_with,
    per_query,
    read_run,
    render,
)
from mustcite.config import Workspace  # noqa: E402

OUT = Path(__file__).parent / "results" / "benchmark_table"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--split", default="test")
    ap.add_argument("--run", action="append", required=True, help="NAME=FILE ({truth} is replaced)")
    ap.add_argument("--out", type=Path, default=OUT, help="path stem of the .md and .json written")
    ap.add_argument("--versus", help="also test every row against this run (e.g. mustcite)")
    args = ap.parse_args()
    bench = Workspace.resolve().root / "benchmarks" / args.benchmark
    runs = [spec.split("=", 1) for spec in args.run]
    md, data = [], {"benchmark": str(bench), "split": args.split, "runs": dict(runs), "tables": {}}
    for gt, qrels in Benchmark.open(bench).qrels(args.split, GROUND_TRUTHS).items():
        pq = [(name, per_query(read_run(path.replace("{truth}", gt)), qrels)) for name, path in runs]
        rows = build_rows(pq)
        if args.versus:
            compare_with(rows, pq, args.versus)
        md.append(render(rows, "markdown", title=f"{args.benchmark} {args.split}, {gt}", versus=args.versus))
        data["tables"][gt] = {r.method: {"values": r.values, "pvalues_vs_first": r.pvalues, "queries": r.queries,
                                         **({f"pvalues_vs_{args.versus}": r.pvalues_vs} if args.versus else {})}
                              for r in rows}
    text = "\n\n".join(md)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text(text, encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(data, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
