"""The per-work decision of the audit, fit on the mention table's train papers and scored on its
held-out papers: does a paper cite (a version of) a work it names, from all its mentions of it?

    python benchmarks/mention_work_model.py [--table DIR/mentions/mentions.parquet] [--out DIR/models/mentions]
        -> benchmarks/results/mention_work_model.json, docs/img/mention_work_reliability.png

Two decisions (:data:`mustcite.recommend.mention_model.WORK_LABELS`), each a gradient-boosted model
of the max and mean of the mention features over the work's mentions in the paper, fit on the train
papers outside one fold, calibrated (isotonic) on that fold (a fifth of the train papers), scored on
the held-out papers of ``benchmarks/splits/mentions_split.json``:

* ``work``: the paper cites the work anywhere (the confidence of ``named_not_cited``);
* ``work_bib``: of the pairs whose paper cites the work, it cites it in a sentence that names it
  (the confidence of ``bib_not_cited``: a bibliography entry the text names).

Also written to ``--out``: the statistics a draft is served with (every paper of its year or
earlier) and the lexicon, so that the folder is what ``mustcite audit`` loads.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import time
from pathlib import Path

import duckdb
from mention_table import plot  # the same reliability diagram as the mention-level models

from mustcite.extract import out_of_fold_stats
from mustcite.recommend import MENTION_LEXICON_FILE as LEXICON_FILE
from mustcite.recommend import fit_work_models, write_target_index
from mustcite.recommend import mention_feature_rows as feature_rows
from mustcite.recommend import mention_serving_stats as serving_stats

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
FIGURE = ROOT / "docs" / "img" / "mention_work_reliability.png"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", type=Path, default=ROOT / "mustcite-work" / "mentions" / "mentions.parquet")
    ap.add_argument("--out", type=Path, default=ROOT / "mustcite-work" / "models" / "mentions")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(args.table.parent / LEXICON_FILE, args.out / LEXICON_FILE)
    write_target_index(args.out)
    con = duckdb.connect()
    con.execute("set threads to 2").fetchall()
    years = serving_stats(con, args.table, args.out)
    con.register("oof_stats", out_of_fold_stats(con, args.table))
    X, meta = feature_rows(con, args.table, "oof_stats")
    con.close()
    stats_s = time.perf_counter() - t0
    done = fit_work_models(X, meta, args.out, seed=args.seed, inputs={"table": str(args.table)})
    out = {"command": f"python benchmarks/mention_work_model.py --table {args.table} --out {args.out}",
           "split": "benchmarks/splits/mentions_split.json", "serving_years": years,
           "timing": {"statistics_and_features_s": round(stats_s, 1)}, "models": {}}
    bins = {}
    for label, (wm, _, _) in done.items():
        c = wm.card
        out["models"][label] = {k: c[k] for k in ("train_base_rate", "fit_pairs", "calibration_pairs",
                                                  "calibration_papers", "fit_papers", "held_out_papers",
                                                  "iterations", "fit_s", "held_out")}
        h = c["held_out"]
        bins[f"{label}: held-out pairs (Brier {h['brier']:.3f}, base rate {h['brier_base_rate']:.3f})"] = \
            h["reliability"]
    out["timing"]["total_s"] = round(time.perf_counter() - t0, 1)
    out["timing"]["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    plot(bins, FIGURE, "calibrated probability (10 bins)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mention_work_model.json").write_text(json.dumps(out, indent=1) + "\n")
    for label, m in out["models"].items():
        h = m["held_out"]
        print(f"{label}: {h['rows']:,} held-out pairs, share {h['share_positive']}, Brier {h['brier']} vs base "
              f"{h['brier_base_rate']}, AUC {h['auc']}")
        for r in h["reliability"]:
            print("   ", r)


if __name__ == "__main__":
    main()
