"""Which learner ranks the recommender's candidates best? Measured on the DEV split.

The candidates and features of the train-only benchmark model are computed once (train queries
leave-one-out, dev queries as at serving); then each learner is fit per tier and every dev ground
truth is scored on the ranking by its own tier's score:

* ``hgb-100``: scikit-learn HistGradientBoosting, 100 trees at 0.08 (the earlier default);
* ``hgb-300``: 300 trees at 0.05 (the default now; early stopping on);
* ``hgb-63-leaves``, ``hgb-unweighted``: more leaves; no class weights;
* ``lambdarank``, ``lambdarank-graded``: LightGBM LambdaRank per query (graded: 2 for the tier,
  1 for any other citation), only when ``lightgbm`` is installed (it is not a dependency:
  ``pip install lightgbm`` to include it).

    python benchmarks/recommend_learners.py --refs mustcite-work/extract

Writes ``benchmarks/results/recommend_learners.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mustcite.benchmark import benchmark_data
from mustcite.config import Workspace  # noqa: E402
from mustcite.labels import TIERS  # noqa: E402
from mustcite.recommend import TIER_OF_TRUTH, Recommender, RecommenderConfig, ranking_metrics  # noqa: E402  # noqa: E402

OUT = Path(__file__).parent / "results" / "recommend_learners.json"


def hgb(X, y, Xd, *, trees=300, lr=0.05, leaves=31, weighted=True, seed=0):
    from sklearn.ensemble import HistGradientBoostingClassifier

    pos, neg = int((y == 1).sum()), int((y == 0).sum())
    w = np.where(y == 1, min(10.0, neg / max(pos, 1)) ** 0.5, 1.0) if weighted else None
    m = HistGradientBoostingClassifier(max_iter=trees, learning_rate=lr, max_leaf_nodes=leaves, min_samples_leaf=20,
                                       l2_regularization=1.0, random_state=seed)
    return m.fit(X, y, sample_weight=w).predict_proba(Xd)[:, 1]


def lambdarank(X, y, groups, Xd, seed=0):
    import lightgbm as lgb

    _, counts = np.unique(groups, return_counts=True)   # rows of a query are contiguous
    m = lgb.LGBMRanker(objective="lambdarank", n_estimators=300, learning_rate=0.05, num_leaves=31,
                       min_child_samples=20, reg_lambda=1.0, random_state=seed, verbose=-1)
    return m.fit(X, y, group=counts).predict(Xd)


LEARNERS = {
    "hgb-100": lambda X, y, g, Xd, tier, lab: hgb(X, y, Xd, trees=100, lr=0.08),
    "hgb-300": lambda X, y, g, Xd, tier, lab: hgb(X, y, Xd),
    "hgb-63-leaves": lambda X, y, g, Xd, tier, lab: hgb(X, y, Xd, trees=200, leaves=63),
    "hgb-unweighted": lambda X, y, g, Xd, tier, lab: hgb(X, y, Xd, weighted=False),
    "lambdarank": lambda X, y, g, Xd, tier, lab: lambdarank(X, y, g, Xd),
    "lambdarank-graded": lambda X, y, g, Xd, tier, lab: lambdarank(
        X, np.where(y == 1, 2, (lab["cited"] == 1).astype(int)) if tier != "cited" else y, g, Xd),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--refs", action="append", default=[], help="labelled extraction folder(s)")
    ap.add_argument("--learners", default=",".join(LEARNERS))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    names = [n for n in args.learners.split(",") if n]
    unknown = set(names) - set(LEARNERS)
    if unknown:
        sys.exit(f"unknown learner(s): {', '.join(sorted(unknown))}; known: {', '.join(LEARNERS)}")
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        skipped = [n for n in names if n.startswith("lambdarank")]
        names = [n for n in names if n not in skipped]
        print(f"lightgbm is not installed: skipping {', '.join(skipped)}", file=sys.stderr)
    work = Workspace.resolve()
    bench = work.root / "benchmarks" / args.benchmark
    data = benchmark_data(bench, args.refs)
    rec = Recommender.build(data.pool, data.labelled, RecommenderConfig(), cache_dir=work.cache)
    extra = {p.id for p in data.extra}
    X, labels, groups = rec.training_matrix([p for p in rec.labelled if p.id not in extra])
    dev_q, dev_qrels = data.splits["dev"]
    parsed, cands, feats, _ = rec.score(dev_q)
    Xd = np.vstack(feats)
    results = {"benchmark": str(bench), "split": "dev", "queries": len(dev_q), "train_rows": int(len(X)),
               "dev_rows": int(len(Xd)), "learners": {}}
    for name in names:
        t0 = time.perf_counter()
        ranked: dict[str, dict[str, list[str]]] = {}
        for tier in TIERS:
            known = labels[tier] >= 0
            lab = {t: v[known] for t, v in labels.items()}
            score = LEARNERS[name](X[known], labels[tier][known], groups[known], Xd, tier, lab)
            start, ranked[tier] = 0, {}
            for (d, _), cs in zip(parsed, cands):
                s = score[start:start + len(cs)]
                start += len(cs)
                order = sorted(range(len(cs)), key=lambda j: (-s[j], cs[j].paper_id))[:100]
                ranked[tier][d.id] = [cs[j].paper_id for j in order]
        metrics = {}
        for gt, table in dev_qrels.items():
            metrics |= ranking_metrics(ranked[TIER_OF_TRUTH[gt]], {gt: table})
        results["learners"][name] = {"seconds": round(time.perf_counter() - t0, 1), "dev": metrics}
        print(name, {gt: (m["R@100"], m["MRR"]) for gt, m in metrics.items()}, flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
