"""The default model as `make demo` trains it, against lighter training settings: ranking quality
on the same hold-out papers, in one run.

`make demo` trains the default model over the whole corpus in a 20-minute budget on 2 cores; each
model folder given here was trained by ``mustcite train`` on the same work folder with other
settings (fewer negative rows for the tier models, fewer encoder tokens...), or by `make demo` in
another work folder built from the same data. Every model is scored on
the same labelled papers: the hold-out of its model card (``--no-refit`` models never saw them), each
a query of its own year, every ground truth ranked by its own tier's probability; per-query
differences against the first model get a paired randomisation test. Model cards give the settings
and the training time. Writes ``benchmarks/results/demo_settings.json``.

    python benchmarks/demo_settings.py NAME=MODEL_DIR NAME=MODEL_DIR ... [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from common import paired_comparison

from mustcite.benchmark import mean, per_query
from mustcite.config import Workspace
from mustcite.recommend import TIER_OF_TRUTH, Recommender, default_training_data, qrels_of

OUT = Path(__file__).parent / "results" / "demo_settings.json"
METRICS = ("MAP", "nDCG@10", "R@50", "R@100")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="NAME=MODEL_DIR; the first is the reference")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    models = dict(m.split("=", 1) for m in args.models)
    cards = {name: json.loads((Path(d) / "card.json").read_text()) for name, d in models.items()}
    first = next(iter(cards.values()))["data"]
    for name, card in cards.items():
        # the same data (work folders built alike may lie apart), the same hold-out, never refitted on it
        same = {k: card["data"].get(k) for k in ("pool_papers", "pool_works", "labelled_papers", "train_papers",
                                                  "dev_papers", "dev_fraction", "labelled_citations", "refit_on_all")}
        if same != {k: first.get(k) for k in same} or card["data"].get("refit_on_all"):
            sys.exit(f"{name}: not trained like the first model on the same data with --no-refit")
    root = Workspace.resolve().root
    data = default_training_data(first["reference_folders"], first["pool"], seed=next(iter(cards.values()))["seed"],
                                 dev_fraction=first["dev_fraction"], works=first["works"] or None)
    held = data.dev
    queries = [{"id": p.id, "title": p.title, "abstract": p.abstract, "year": p.year} for p in held]
    qrels = qrels_of(held)
    tiers = tuple(dict.fromkeys(TIER_OF_TRUTH.values()))
    out: dict = {"work": str(root), "eval_queries": len(held), "models": {}}
    per: dict[str, dict] = {}
    for name, folder in models.items():
        rec = Recommender.load(folder)
        ranked = rec.rank_ids(queries, tiers, top=100)
        runs = {t: {qid: {pid: float(len(ids) - i) for i, pid in enumerate(ids)} for qid, ids in r.items()}
                for t, r in ranked.items()}
        per[name] = {gt: per_query(runs[TIER_OF_TRUTH[gt]], qrels[gt], METRICS) for gt in qrels}
        card = cards[name]
        out["models"][name] = {
            "folder": str(folder), "train_seconds": card.get("train_seconds"),
            "settings": {"fit_queries": card["data"].get("fit_queries"),
                         "negatives_kept": card["data"].get("negatives_kept", 1.0),
                         "max_tokens": card["config"]["settings"].get("max_tokens")},
            "metrics": {gt: {m: round(mean(v), 4) for m, v in d.items()} for gt, d in per[name].items()}}
        print(f"{name}: mustcite MAP {out['models'][name]['metrics']['mustcite']['MAP']}", file=sys.stderr)
    base = next(iter(models))
    for name in models:
        if name == base:
            continue
        row = out["models"][name]
        row["ratio_to_first"], row["p_randomisation"] = paired_comparison(per[name], per[base], METRICS)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({n: {"mustcite_MAP": v["metrics"]["mustcite"]["MAP"], "ratio": v.get("ratio_to_first", {})
                          .get("mustcite")} for n, v in out["models"].items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
