"""Recommender ablations on the DEV split of a built benchmark: each signal removed in turn.

Every variant is a train-only model (tier models fit on the train queries; the ``--refs`` papers,
NeurIPS 2023 here, are labelled neighbours only) scored on dev, each ground truth on the ranking by
its own tier's probability. BM25 alone is the reference row. Results are merged into
``benchmarks/results/recommend_ablation.json`` variant by variant, so an interrupted run keeps what
it measured.

    python benchmarks/recommend_ablation.py --refs mustcite-work/extract [--variants full,-dense]
        [--set neighbours=50 --set disable=citers+popularity]

Variants are relative to the default configuration (``RecommenderConfig()``; ``--set`` changes it
for every variant). Earlier rounds are kept: ``recommend_ablation_round1.json`` (before the
popularity features were switched off by default), ``recommend_ablation_round2.json`` (before the
co-citation signal). This file's ``full`` is the final model.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from common import parse_set  # noqa: E402

from mustcite.benchmark import benchmark_data
from mustcite.config import Workspace  # noqa: E402
from mustcite.recommend import ABLATABLE, RecommenderConfig, build_benchmark_model, evaluate, evaluate_bm25  # noqa: E402  # noqa: E402

OUT = Path(__file__).parent / "results" / "recommend_ablation.json"
VARIANTS = ("full", "-contexts", "-cocitation", "-refs", "-dense", "-bm25", "-neighbours", "-citers", "+popularity",
            "-metadata", "-tiers")


def variant_config(name: str, base: RecommenderConfig) -> tuple[RecommenderConfig, bool]:
    """(config, use the --refs papers) for a variant name: ``full``, ``-dense``, ``-refs``,
    ``-SIGNAL`` (switch a signal off) or ``+SIGNAL`` (switch on one the default leaves off)."""
    if name == "full":
        return base, True
    if name == "-refs":
        return base, False
    if name == "-dense":
        return replace(base, dense=False), True
    signal = name[1:]
    if name[:1] not in "+-" or signal not in ABLATABLE:
        raise SystemExit(f"unknown variant {name!r}: full, -refs, -dense, -SIGNAL or +SIGNAL with SIGNAL "
                         f"one of {', '.join(ABLATABLE)}")
    if name[0] == "+":
        return replace(base, disable=tuple(d for d in base.disable if d != signal)), True
    return replace(base, disable=tuple(base.disable) + (signal,)), True



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--refs", action="append", default=[], help="labelled extraction folder(s)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--set", action="append", default=[],
                    help="config override for every variant, e.g. neighbours=50 or disable=citers+popularity")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    work = Workspace.resolve()
    bench = work.root / "benchmarks" / args.benchmark
    base = RecommenderConfig(**parse_set(args.set))
    with_refs = benchmark_data(bench, args.refs)
    without = benchmark_data(bench, [])
    dev_q, dev_qrels = with_refs.splits["dev"]
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    results.setdefault("variants", {})
    for name in args.variants.split(","):
        cfg, refs = variant_config(name, base)
        t0 = time.perf_counter()
        rec = build_benchmark_model(with_refs if refs else without, cfg, cache_dir=work.cache)
        if "bm25 alone" not in results:
            results["bm25 alone"] = evaluate_bm25(rec, dev_q, dev_qrels)
        metrics = evaluate(rec, dev_q, dev_qrels)
        single = evaluate(rec, dev_q, dev_qrels, matched=False)
        results["variants"][name] = {"config": {k: v for k, v in vars(cfg).items()}, "refs": args.refs if refs else [],
                                     "labelled": len(rec.labelled), "seconds": round(time.perf_counter() - t0, 1),
                                     "dev": metrics, "dev_one_ranking": single}
        results |= {"benchmark": str(bench), "split": "dev", "queries": len(dev_q),
                    "ranking": "each ground truth ranked by its own tier's probability",
                    "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1))
        print(name, {gt: (m["R@100"], m["MRR"]) for gt, m in metrics.items()}, flush=True)
        print(name, "one ranking", {gt: (m["R@100"], m["MRR"]) for gt, m in single.items()}, flush=True)


if __name__ == "__main__":
    main()
