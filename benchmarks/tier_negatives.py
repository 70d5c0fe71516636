"""Tier models fit on a sample of their negative rows: time saved against ranking quality.

The tier models learn from every candidate of every training query: about 1.4 million rows with 1-3%
positives for the default model's 1,500 fit queries. Fitting them on all positives and a seeded share
of the negatives (each kept negative weighing 1 / share) cuts the fit time about in proportion; this
measures what it costs. One training matrix (the default model's own fit sample) is fit with each
share in turn, in one process, and each fit is scored on the same held-out labelled papers of the
model (never in the fit sample, each left out of its own neighbours and counts: leave-one-out, as in
training), against every ground truth with its own tier's ranking; per-query differences against the
full fit get a paired randomisation test. Run with nothing else running. Writes
``benchmarks/results/tier_negatives.json``.

    python benchmarks/tier_negatives.py [--model DIR] [--fit-queries 1500] [--eval 500]
        [--shares 1 0.25 0.1]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from common import paired_comparison

from mustcite.benchmark import mean, per_query
from mustcite.recommend import TIER_OF_TRUTH, Recommender, default_model, fit_sample, qrels_of

OUT = Path(__file__).parent / "results" / "tier_negatives.json"
METRICS = ("MAP", "nDCG@10", "R@50", "R@100")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, help="model folder (default: <work>/models/recommender)")
    ap.add_argument("--fit-queries", type=int, default=1500)
    ap.add_argument("--eval", type=int, default=500, help="held-out labelled papers scored")
    ap.add_argument("--shares", type=float, nargs="+", default=[1.0, 0.25, 0.1])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    rec = Recommender.load(args.model or default_model())
    fit = fit_sample(rec.labelled, args.fit_queries, args.seed)
    fit_ids = {p.id for p in fit}
    rest = sorted((p for p in rec.labelled if p.id not in fit_ids), key=lambda p: p.id)
    held = rest[:: max(1, len(rest) // args.eval)][: args.eval]
    queries = [{"id": p.id, "title": p.title, "abstract": p.abstract, "year": p.year} for p in held]
    qrels = qrels_of(held)
    t0 = time.perf_counter()
    X, labels, groups = rec.training_matrix(fit)
    out: dict = {"model": str(args.model or "default"), "fit_queries": len(fit), "rows": int(len(X)),
                 "positives": {t: int((y == 1).sum()) for t, y in labels.items()},
                 "eval_queries": len(held), "matrix_s": round(time.perf_counter() - t0, 1), "shares": {}}
    per: dict[float, dict[str, dict[str, dict[str, float]]]] = {}
    for share in args.shares:
        t0 = time.perf_counter()
        rec.fit_matrix(X, labels, groups, negatives=share)
        fit_s = time.perf_counter() - t0
        tiers = tuple(dict.fromkeys(TIER_OF_TRUTH.values()))
        ranked = rec.rank_ids(queries, tiers, top=100, exclude_self=True)
        runs = {t: {qid: {pid: float(len(ids) - i) for i, pid in enumerate(ids)} for qid, ids in r.items()}
                for t, r in ranked.items()}
        per[share] = {gt: per_query(runs[TIER_OF_TRUTH[gt]], qrels[gt], METRICS) for gt in qrels}
        out["shares"][str(share)] = {"fit_s": round(fit_s, 1),
                                     "trees": {t: int(getattr(m, "n_iter_", 0)) for t, m in rec.tiers.models.items()},
                                     "metrics": {gt: {m: round(mean(v), 4) for m, v in d.items()}
                                                 for gt, d in per[share].items()}}
        print(f"negatives {share}: fit {fit_s:.0f} s, mustcite MAP "
              f"{out['shares'][str(share)]['metrics']['mustcite']['MAP']}", file=sys.stderr)
    base = max(args.shares)
    for share in args.shares:
        if share == base:
            continue
        row = out["shares"][str(share)]
        row["fit_time_ratio"] = round(row["fit_s"] / out["shares"][str(base)]["fit_s"], 3)
        row["ratio_to_full"], row["p_randomisation"] = paired_comparison(per[share], per[base], METRICS)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({s: {"fit_s": v["fit_s"], "mustcite_MAP": v["metrics"]["mustcite"]["MAP"]}
                      for s, v in out["shares"].items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
