"""Offline judge vs MultiCite: Type I proxy accuracy / Cohen's kappa (and majority baseline),
Type II quadratic kappa vs the ordinal proxy.

Primary figure: the 3-sentence TEST split, multi-label rule 'any' (positive if any intent is
uses/differences/similarities/extends); rule 'all' is reported alongside.  Also reports dev and the
gold / 1-sentence test versions.  Writes benchmarks/results/offline_judge_multicite.json.

    .venv/bin/python benchmarks/offline_judge_multicite.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.labels import OfflineJudge, evaluate_judge, load_offline_model  # noqa: E402

OUT = Path(__file__).parent / "results" / "offline_judge_multicite.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the 3-sentence test split")
    ap.add_argument("--out", default=str(OUT))
    ns = ap.parse_args()
    judge = OfflineJudge()
    runs = [("test", "3")] if ns.quick else [("test", "3"), ("dev", "3"), ("test", "gold"), ("test", "1")]
    result = {"judge": judge.name, "model_meta": load_offline_model().meta,
              "paper_reference": "MasterSet (seed 000) Table 2: Gemini 2.5 Flash Type I accuracy 0.816 vs humans "
                                 "on 510 MasterSet instances (different data and labels: not directly comparable)",
              "multi_label_rule_primary": "any", "runs": {}}
    for split, ctx in runs:
        t0 = time.time()
        r = evaluate_judge(judge, split, ctx)
        r["seconds"] = round(time.time() - t0, 1)
        result["runs"][f"{split}/{ctx}"] = r
        t1 = r["type1"]["any"]
        print(f"{split}/{ctx}: acc {t1['accuracy']} kappa {t1['cohen_kappa']} "
              f"majority {t1['majority_baseline_accuracy']}"
              f" | rule all: acc {r['type1']['all']['accuracy']} | "
              f"type2 qwk {r['type2']['quadratic_weighted_kappa_vs_proxy']}")
    atomic_write_json(ns.out, result)
    print("wrote", ns.out)


if __name__ == "__main__":
    main()
