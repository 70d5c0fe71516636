"""A benchmark's held-out split, scored by two train-only models that differ in one input, paired.

Both models are ``mustcite train --benchmark NAME`` models of the same built benchmark, trained with
the same settings and seed; the *after* model reads one more reference folder (``--refs``) as
labelled neighbours, for instance the imported bibliographies. Each ground truth is ranked by its
own tier's probability (as in ``recommend_test.py``), from one scoring pass per model. Per ground
truth and metric: the two means and a paired randomisation test (10,000 sign flips) over the
split's queries. Cited R@100 is also broken down by the query's year band and by its field (the
venue of the query), wherever the split holds more than one of them.

    python benchmarks/reach_benchmarks.py --benchmark W/benchmarks/neurips-2024-v2 \\
        --before W/models/v2-before --after W/models/v2-after [--split test] [--out PATH]

Writes ``benchmarks/results/reach_benchmark_<benchmark>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mustcite.benchmark import GROUND_TRUTHS, Benchmark, mean, per_query, randomisation_test  # noqa: E402
from mustcite.recommend import TIER_OF_TRUTH, Recommender  # noqa: E402

METRICS = ("R@20", "R@100", "MAP", "nDCG@10")
BREAKDOWN = ("cited", "R@100")       # the ground truth and metric broken down by year band and field


def year_band(year: Any) -> str:
    """The query's year band: 2016-2018, 2019-2020, 2021-2022, 2023-2024, or its year otherwise."""
    for lo, hi in ((2016, 2018), (2019, 2020), (2021, 2022), (2023, 2024)):
        if isinstance(year, int) and lo <= year <= hi:
            return f"{lo}-{hi}"
    return str(year)


def field_of(query: dict[str, Any]) -> str:
    """The query's venue without its year ("NeurIPS 2024" -> "NeurIPS"); "unknown" when none."""
    venue = str(query.get("venue") or "").split()
    return venue[0] if venue else "unknown"


def side_runs(model: Path, queries: list[dict[str, Any]]) -> tuple[dict[str, dict[str, dict[str, float]]], float]:
    """``{ground truth: run}`` of a model (each ranked by its tier) and the seconds scoring took."""
    rec = Recommender.load(model, cache_queries=True)
    tiers = tuple(dict.fromkeys(t for t in TIER_OF_TRUTH.values() if t in rec.tiers.models))
    t0 = time.perf_counter()
    ranked = rec.rank_ids(queries, tiers, top=100)
    seconds = time.perf_counter() - t0
    runs = {gt: {qid: {pid: float(len(ids) - i) for i, pid in enumerate(ids)}
                 for qid, ids in ranked.get(tier, {}).items()} for gt, tier in TIER_OF_TRUTH.items()}
    return runs, seconds


def paired(before: dict[str, float], after: dict[str, float], keep: set[str] | None = None) -> dict[str, Any]:
    """Means of both sides over the queries of ``keep`` (all when None) with the randomisation p."""
    a = {q: v for q, v in after.items() if keep is None or q in keep}
    b = {q: v for q, v in before.items() if keep is None or q in keep}
    return {"queries": len(set(a) & set(b)), "before": round(mean(b), 4), "after": round(mean(a), 4),
            "p": randomisation_test(a, b) if a and b else None}


def compare(bench: Benchmark, split: str, before: Path, after: Path) -> dict[str, Any]:
    queries = bench.queries(split)
    qrels = bench.qrels(split, GROUND_TRUTHS)
    runs, seconds = {}, {}
    for side, model in (("before", before), ("after", after)):
        runs[side], seconds[side] = side_runs(model, queries)
        print(f"{side}: {len(queries)} {split} queries scored in {seconds[side]:.1f} s", file=sys.stderr)
    table: dict[str, Any] = {}
    per: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for gt, rel in qrels.items():
        per[gt] = {side: per_query(runs[side][gt], rel, METRICS) for side in runs}
        table[gt] = {"queries": len(per[gt]["after"][METRICS[0]])} | {
            m: paired(per[gt]["before"][m], per[gt]["after"][m]) for m in METRICS}
    gt, metric = BREAKDOWN
    groups: dict[str, dict[str, set[str]]] = {"year band": {}, "field": {}}
    for q in queries:
        groups["year band"].setdefault(year_band(q.get("year")), set()).add(str(q["id"]))
        groups["field"].setdefault(field_of(q), set()).add(str(q["id"]))
    breakdown = {kind: {name: paired(per[gt]["before"][metric], per[gt]["after"][metric], keep)
                        for name, keep in sorted(found.items())} for kind, found in groups.items()}
    cards = {side: json.loads((Path(m) / "card.json").read_text()) for side, m in (("before", before),
                                                                                   ("after", after))}
    return {"benchmark": str(bench.path), "version": bench.manifest.get("version"), "split": split,
            "queries": len(queries), "before": str(before), "after": str(after),
            "models": {side: {"reference_folders": c.get("data", {}).get("reference_folders"),
                              "extra_labelled": c.get("data", {}).get("extra_labelled"),
                              "train_queries": c.get("data", {}).get("train_queries"),
                              "fit_queries": c.get("data", {}).get("fit_queries"),
                              "config": c.get("config"), "seed": c.get("seed"),
                              "train_seconds": c.get("train_seconds"), "score_seconds": round(seconds[side], 1)}
                       for side, c in cards.items()},
            "table": table, "breakdown": {"ground_truth": gt, "metric": metric} | breakdown}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", type=Path, required=True, help="a built benchmark folder")
    ap.add_argument("--before", type=Path, required=True, help="train-only model without the extra folder")
    ap.add_argument("--after", type=Path, required=True, help="the same with the extra folder")
    ap.add_argument("--split", default="test")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    bench = Benchmark.open(args.benchmark)
    report = compare(bench, args.split, args.before, args.after)
    out = args.out or Path(__file__).parent / "results" / f"reach_benchmark_{bench.path.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({gt: report["table"][gt] for gt in ("cited",) if gt in report["table"]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
