"""The cross-encoder re-ranker on a benchmark: train it on train queries, choose ``k`` and the weight on dev.

``train``: the train-only benchmark model (``mustcite train --benchmark NAME``) scores a fixed
hashed sample of its train queries leave-one-out; their top candidates become the cross-encoder's
training pairs (``mustcite.recommend.train.cross_encoder_pairs``), so it never sees a dev or test
query. The cross-encoder is saved to ``--cross`` (not into the model, which stays as it is).

``dev``: the model scores the dev queries once; the cross-encoder scores the union of each tier's
top ``max(k)`` candidates once; every ``(k, weight)`` of the grid re-ranks from those scores.
Figures per ground truth (each ranked by its own tier, as in the test table), against the model
without the cross-encoder on the same queries, with paired randomisation tests.

    python benchmarks/cross_encoder.py train --model mustcite-work/models/bench-neurips-2024 \\
        --cross mustcite-work/models/cross-neurips-2024 --queries 600 --top 16
    python benchmarks/cross_encoder.py dev --model mustcite-work/models/bench-neurips-2024 \\
        --cross mustcite-work/models/cross-neurips-2024

Writes ``benchmarks/results/cross_encoder_<benchmark>.json`` (dev) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from mustcite.benchmark import Benchmark, mean, per_query, randomisation_test  # noqa: E402
from mustcite.config import Workspace  # noqa: E402
from mustcite.recommend import (  # noqa: E402
    TIER_OF_TRUTH,
    Recommender,
    benchmark_train_papers,
    combine,
    fit_cross_encoder,
    top_indices,
)
from mustcite.retrieval import CrossEncoderReranker  # noqa: E402

METRICS = ("MAP", "MRR", "nDCG@10", "R@50", "R@100")


def train(args) -> None:
    rec = Recommender.load(args.model, cache_queries=True)
    papers = benchmark_train_papers(rec, Workspace.resolve().root / "benchmarks" / args.benchmark)
    ce = fit_cross_encoder(rec, papers, queries=args.queries, top=args.top, epochs=args.epochs, seed=args.seed,
                           log=lambda m: print(m, file=sys.stderr))
    ce.info["benchmark"] = args.benchmark
    ce.save(args.cross)
    print(json.dumps(ce.info), file=sys.stderr)


def dev(args) -> None:
    bench = Benchmark.open(Workspace.resolve().root / "benchmarks" / args.benchmark)
    rec = Recommender.load(args.model, cache_queries=True)
    ce = CrossEncoderReranker.load(args.cross)
    queries = bench.queries(args.split)
    qrels = bench.qrels(args.split)
    ks = sorted({int(k) for k in args.k.split(",")})
    weights = [float(w) for w in args.weights.split(",")]
    t0 = time.perf_counter()
    parsed, cands, _, probs = rec.score(queries)
    t_score = time.perf_counter() - t0
    tiers = [t for t in dict.fromkeys(TIER_OF_TRUTH.values()) if t in probs]
    # cross-encoder logits for the union of every tier's top max(k), once
    scored = []
    start = 0
    n_pairs = 0
    t0 = time.perf_counter()
    for (d, _), cs in zip(parsed, cands):
        sl = slice(start, start + len(cs))
        start += len(cs)
        p = {t: probs[t][sl] for t in tiers}
        need = sorted({j for t in tiers for j in top_indices(p[t], cs, max(ks))})
        pairs = [(d.text, rec.paper_text(cs[j].row)) for j in need]
        logits = dict(zip(need, ce.score(pairs, batch_size=64).tolist()))
        n_pairs += len(need)
        scored.append((d.id, cs, p, logits))
    t_cross = time.perf_counter() - t0
    print(f"{len(queries)} queries scored in {t_score:.0f} s; {n_pairs} cross-encoder pairs in {t_cross:.0f} s "
          f"({n_pairs / max(t_cross, 1e-9):.1f} pairs/s)", file=sys.stderr)

    def run(k: int, w: float) -> dict[str, dict[str, list[str]]]:
        out: dict[str, dict[str, list[str]]] = {t: {} for t in tiers}
        for qid, cs, p, logits in scored:
            for t in tiers:
                s = p[t]
                if k and w:
                    top = top_indices(s, cs, k)
                    s = combine(s, np.array([logits[j] for j in top]), np.array(top), w)
                out[t][qid] = [cs[j].paper_id for j in top_indices(s, cs, 100)]
        return out

    def scores(ranked) -> dict[str, dict[str, dict[str, float]]]:
        res = {}
        for truth, tier in TIER_OF_TRUTH.items():
            if truth in qrels and tier in ranked:
                run_ = {q: {pid: float(100 - i) for i, pid in enumerate(ids)} for q, ids in ranked[tier].items()}
                res[truth] = per_query(run_, qrels[truth], METRICS)
        return res

    base = scores(run(0, 0.0))
    table = []
    for k in ks:
        for w in weights:
            got = scores(run(k, w))
            row = {"k": k, "weight": w}
            for truth, pq in got.items():
                row[truth] = {}
                for m in METRICS:
                    row[truth][m] = round(mean(pq[m]), 4)
                    row[truth][m + " p"] = round(randomisation_test(base[truth][m], pq[m]), 4)
            table.append(row)
    out = {"benchmark": args.benchmark, "split": args.split, "queries": len(queries), "model": str(args.model),
           "cross_encoder": ce.info, "score_seconds": round(t_score, 1), "cross_seconds": round(t_cross, 1),
           "cross_pairs": n_pairs, "pairs_per_second": round(n_pairs / max(t_cross, 1e-9), 1),
           "without": {truth: {m: round(mean(v[m]), 4) for m in METRICS} for truth, v in base.items()},
           "grid": table}
    path = args.out or Path(__file__).parent / "results" / f"cross_encoder_{args.benchmark}_{args.split}.json"
    path.write_text(json.dumps(out, indent=1))
    print("| k | w | " + " | ".join(f"{t} R@100 | {t} MRR" for t in base) + " |")
    print("| - | - | " + " | ".join("---: | ---:" for _ in base) + " |")
    print("| 0 | 0 | " + " | ".join(
        f"{out['without'][t]['R@100']:.3f} | {out['without'][t]['MRR']:.3f}" for t in base) + " |")
    for row in table:
        print(f"| {row['k']} | {row['weight']} | " + " | ".join(
            f"{row[t]['R@100']:.3f} | {row[t]['MRR']:.3f}" for t in base) + " |")
    print(f"wrote {path}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("phase", choices=("train", "dev"))
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--model", type=Path, required=True, help="the train-only benchmark model")
    ap.add_argument("--cross", type=Path, required=True, help="the cross-encoder folder (written by train)")
    ap.add_argument("--queries", type=int, default=600, help="train queries whose candidates train it")
    ap.add_argument("--top", type=int, default=16, help="candidates per tier and train query")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--split", default="dev", help="dev (the tuning split)")
    ap.add_argument("--k", default="5,10,20", help="re-ranked candidates to try")
    ap.add_argument("--weights", default="0.25,0.5,1,2,4", help="cross-encoder weights to try")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.phase == "dev" and args.split == "test":
        ap.error("the grid is searched on dev; read test with benchmarks/recommend_test.py")
    (train if args.phase == "train" else dev)(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
