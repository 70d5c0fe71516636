"""Local LLM judge (xllamacpp + Qwen2.5-Coder-1.5B Q4_K_M) on MultiCite: agreement with a Type I proxy.

Sample: a fixed-seed sample of N MultiCite items of ``--split`` (dev or test), 3-sentence contexts
(``data/intents/multicite/classification_3_context/<split>.json.gz``).  Proxy Type I label: 1 if the
item's intents include uses, differences, similarities or extends, else 0.  The judge answers the
Type I prompt (``--prompts DIR``: another prompt folder); answers, with the digits' probabilities,
are cached in SQLite (``--cache``), so the run can be stopped and resumed.

Reports two decision rules over P(1) (the normalised probability of the digit 1):
* ``argmax``: 1 iff P(1) >= 0.5 (the judge's raw answer);
* ``calibrated``: 1 iff P(1) >= t.  On dev, t is chosen here (best Cohen's kappa over the observed
  P(1) values); on test, pass ``--threshold`` from the dev run.
Writes accuracy, Cohen's kappa, ROC AUC of P(1), parse failures and seconds per call to
``benchmarks/results/local_judge_multicite_<split>[_<prompt folder>].json``.

    MUSTCITE_LOCAL_MODELS=/tmp/mc_models nohup .venv/bin/python benchmarks/local_judge_multicite.py \\
        --split dev --n 150 &
    .venv/bin/python benchmarks/local_judge_multicite.py --split test --threshold T
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from mustcite.config import find_data_dir  # noqa: E402
from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.labels import (  # noqa: E402
    CitationInstance,
    JudgeCache,
    LocalLlamaJudge,
    cache_key,
    local_models_dir,
    run_judge,
    xllamacpp_available,
)

PROXY_POSITIVE = {"uses", "differences", "similarities", "extends"}
CITE = re.compile(r"<cite>(.*?)</cite>", re.S)


def load_items(data: Path, split: str = "test") -> list[dict]:
    path = data / "intents" / "multicite" / "classification_3_context" / f"{split}.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def to_instance(item: dict) -> CitationInstance:
    """A MultiCite item as a citation instance: no titles are given, the marked span is the cite."""
    text = item["x"] if isinstance(item["x"], str) else " ".join(item["x"])  # 25 test items hold a list
    cites = CITE.findall(text)
    cite = " ".join(cites[0].split()) if cites else ""
    context = CITE.sub(lambda m: f"[CITATION: {' '.join(m.group(1).split())}]", text)
    return CitationInstance(citing_id=item["id"].rsplit("_", 1)[0], citing_title="", citing_abstract="",
                            ref_title="", ref_raw=cite, cite=cite, year=None,
                            contexts=(("", " ".join(context.split())),), mentions=1)


def proxy(item: dict) -> int:
    return int(bool(set(item["y"].split()) & PROXY_POSITIVE))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "test"), default="test")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--prompts", default=None, help="prompt folder (default: the package's prompts)")
    ap.add_argument("--threshold", type=float, default=None,
                    help="calibrated P(1) threshold (from the dev run); on dev it is chosen here")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", default=None,
                    help="folder of the 22 wheels and the GGUF (default $MUSTCITE_LOCAL_MODELS or <work>/cache/models)")
    ap.add_argument("--cache", default=str(ROOT / "cache" / "judge.sqlite"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--write-calibration", action="store_true",
                    help="store the threshold (dev) or the test figures (test) in the judge's "
                         "local_calibration.json, which LocalLlamaJudge reads")
    ap.add_argument("--report-only", action="store_true", help="summarise the cached answers, judge nothing")
    args = ap.parse_args(argv)

    if not xllamacpp_available():
        print("skipped: the local judge needs xllamacpp (pip install xllamacpp)")
        return 0
    if args.out is None:
        tag = f"_{Path(args.prompts).name}" if args.prompts else ""
        args.out = str(ROOT / "benchmarks" / "results" / f"local_judge_multicite_{args.split}{tag}.json")
    items = load_items(find_data_dir(), args.split)
    sample = random.Random(args.seed).sample(items, args.n)
    insts = [to_instance(it) for it in sample]
    if args.report_only:   # the cache key needs only the judge's identity, not the loaded model
        from types import SimpleNamespace

        from mustcite.labels import GGUF_NAME, load_prompt
        judge = SimpleNamespace(name="local", model=Path(GGUF_NAME).stem,
                                prompt_version=lambda task: load_prompt(task, args.prompts).version)
    else:
        judge = LocalLlamaJudge(cache_dir=args.models or local_models_dir(), n_threads=args.threads,
                                prompts_dir=args.prompts, calibrated=False)   # raw P(1), calibrated here
    cache = JudgeCache(args.cache)
    t0 = time.perf_counter()

    def write(_job=None, _j=None) -> None:
        gold, pred, secs, parse_fail, p1 = [], [], [], 0, []
        db = sqlite3.connect(args.cache)
        for it, inst in zip(sample, insts):
            row = db.execute("SELECT value, seconds, prob FROM judgements WHERE backend=? AND model=? AND "
                             "prompt_version=? AND task=? AND instance_key=?",
                             cache_key(judge, inst, "type1")).fetchone()
            if row is None:
                continue
            secs.append(row[1])
            if row[0] is None:
                parse_fail += 1
                continue
            gold.append(proxy(it))
            pred.append(row[0])
            p1.append(json.loads(row[2])["1"] if row[2] else float(row[0]))
        db.close()
        from sklearn.metrics import cohen_kappa_score, roc_auc_score

        from mustcite.labels import calibrate_threshold
        auc = round(float(roc_auc_score(gold, p1)), 4) if len(set(gold)) > 1 else None
        if args.split == "dev" and len(set(gold)) > 1:
            thr = calibrate_threshold(p1, gold)
        else:
            thr = args.threshold
        cal = [int(p >= thr) for p in p1] if thr is not None else None
        mean_p1 = {c: round(sum(p for g, p in zip(gold, p1) if g == c) / max(1, gold.count(c)), 4) for c in (0, 1)}
        n = len(gold)
        out = {
            "what": "local LLM judge (Type I prompt) vs MultiCite Type I proxy "
                    f"(uses/differences/similarities/extends = 1, else 0), 3-sentence {args.split} items",
            "split": args.split,
            "model": judge.model, "prompt_version": judge.prompt_version("type1"),
            "threads": args.threads, "seed": args.seed, "sample_size": args.n,
            "judged": len(secs), "complete": len(secs) == args.n, "parse_failures": parse_fail,
            "accuracy": round(sum(g == p for g, p in zip(gold, pred)) / n, 4) if n else None,
            "cohen_kappa": round(float(cohen_kappa_score(gold, pred)), 4) if n and len(set(gold + pred)) > 1 else None,
            "proxy_positive_rate": round(sum(gold) / n, 4) if n else None,
            "predicted_positive_rate": round(sum(pred) / n, 4) if n else None,
            "roc_auc_p1": auc,
            "calibrated": None if cal is None or not n else {
                "threshold": thr, "threshold_from": "this dev sample (best kappa)" if args.split == "dev"
                else "--threshold (the dev run's)",
                "accuracy": round(sum(g == p for g, p in zip(gold, cal)) / n, 4),
                "cohen_kappa": round(float(cohen_kappa_score(gold, cal)), 4) if len(set(gold + cal)) > 1 else 0.0,
                "predicted_positive_rate": round(sum(cal) / n, 4)},
            "mean_p1_by_proxy_class": mean_p1,
            "seconds_per_call": round(sum(secs) / len(secs), 2) if secs else None,
            "elapsed_this_run_s": round(time.perf_counter() - t0, 1),
            "reproduce": "MUSTCITE_LOCAL_MODELS=DIR .venv/bin/python benchmarks/local_judge_multicite.py "
                         + " ".join(a for a in (argv if argv is not None else sys.argv[1:])),
        }
        atomic_write_json(args.out, out)
        if args.write_calibration and out["complete"] and out["calibrated"]:
            from mustcite.labels import LOCAL_CALIBRATION_FILE
            key = f"{judge.model}|{out['prompt_version']}"
            allcal = json.loads(LOCAL_CALIBRATION_FILE.read_text("utf-8")) if LOCAL_CALIBRATION_FILE.is_file() else {}
            entry = allcal.setdefault(key, {})
            figures = {"items": n, "accuracy": out["calibrated"]["accuracy"],
                       "cohen_kappa": out["calibrated"]["cohen_kappa"], "roc_auc_p1": auc,
                       "argmax_accuracy": out["accuracy"], "argmax_cohen_kappa": out["cohen_kappa"],
                       "seed": args.seed}
            if args.split == "dev":
                entry.update(threshold=thr, dev=figures)
            elif entry.get("threshold") == thr:
                entry["test"] = figures
            atomic_write_json(LOCAL_CALIBRATION_FILE, allcal)

    if not args.report_only:
        run_judge(judge, [(inst, "type1") for inst in insts], cache, concurrency=1, progress=True,
                  on_answer=write)
    write()
    print(Path(args.out).read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
