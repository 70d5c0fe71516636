"""Neural judge vs MultiCite, by the offline judge's own evaluation: Type I proxy accuracy / Cohen's
kappa (and majority baseline, confusion matrix), Type II quadratic kappa vs the ordinal proxy
(:func:`mustcite.labels.multicite.evaluate_judge`), with the offline LR judge's row beside it
(from ``benchmarks/results/offline_judge_multicite.json``), plus the instances per second of
``judge_many`` over the whole split (both tasks, scoring every instance once).

Primary figure: the 3-sentence TEST split, rule 'any'.  Also reports dev/3, the int8 ONNX
runtime where the model folder has one, and, where the folder has a ``cascade.json`` (``mustcite
labels fit-cascade``), the cascade judge and the plain average of both judges on every item (the
cascade's band 1.0 row of the dev grid), with exact McNemar tests of each against the LR judge.
Needs a model built by ``mustcite labels train-judge``.
Writes benchmarks/results/neural_judge_multicite.json.

    .venv/bin/python benchmarks/neural_judge_multicite.py [--model DIR] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.labels import (  # noqa: E402
    CASCADE_FILE,
    ONNX_DIR,
    ONNX_FILE,
    CascadeJudge,
    NeuralJudge,
    OfflineJudge,
    evaluate_judge,
    iter_instances,
    neural_model_dir,
)

OUT = Path(__file__).parent / "results" / "neural_judge_multicite.json"
LR_RESULTS = Path(__file__).parent / "results" / "offline_judge_multicite.json"


def throughput(judge, split: str, context: str) -> dict:
    """judge_many over every instance of a split, both tasks, from a cold memo."""
    insts = [inst for _, inst in iter_instances(split, context)]
    if hasattr(judge, "clear_memo"):
        judge.clear_memo()
    t0 = time.perf_counter()
    judge.judge_many(insts, ("type1", "type2"))
    secs = time.perf_counter() - t0
    return {"instances": len(insts), "seconds": round(secs, 2), "instances_per_second": round(len(insts) / secs, 1)}


def mcnemar(judge_a, judge_b, split: str = "test", context: str = "3") -> dict:
    """Exact McNemar test of two judges' Type I answers against the proxy (rule 'any')."""
    from scipy.stats import binomtest

    from mustcite.labels import load_split, type1_proxy

    insts = [inst for _, inst in iter_instances(split, context)]
    y = [type1_proxy(it.labels) for it in load_split(split, context)]
    a = [j.value for j in judge_a.judge_batch(insts, "type1")]
    b = [j.value for j in judge_b.judge_batch(insts, "type1")]
    only_a = sum(x == t != z for x, z, t in zip(a, b, y))
    only_b = sum(z == t != x for x, z, t in zip(a, b, y))
    n = only_a + only_b
    return {"a_right_b_wrong": only_a, "b_right_a_wrong": only_b,
            "p_value": round(float(binomtest(only_a, n, 0.5).pvalue), 5) if n else 1.0}


def run(judge, runs) -> dict:
    out = {}
    for split, ctx in runs:
        t0 = time.time()
        speed = throughput(judge, split, ctx)        # also fills the judge's memo: evaluate_judge reuses it
        r = evaluate_judge(judge, split, ctx)
        r["judge_many"] = speed
        r["seconds"] = round(time.time() - t0, 1)
        out[f"{split}/{ctx}"] = r
        t1 = r["type1"]["any"]
        print(f"{judge.version} {split}/{ctx}: acc {t1['accuracy']} kappa {t1['cohen_kappa']} "
              f"majority {t1['majority_baseline_accuracy']} | rule all: acc {r['type1']['all']['accuracy']} "
              f"| type2 qwk {r['type2']['quadratic_weighted_kappa_vs_proxy']} | {speed['instances_per_second']} inst/s",
              flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model folder (default <work>/models/judge-neural)")
    ap.add_argument("--quick", action="store_true", help="only the 3-sentence test split")
    ap.add_argument("--no-onnx", action="store_true", help="skip the int8 ONNX runtime")
    ap.add_argument("--out", default=str(OUT))
    ns = ap.parse_args()
    folder = Path(ns.model) if ns.model else neural_model_dir()
    runs = [("test", "3")] if ns.quick else [("test", "3"), ("dev", "3")]
    judge = NeuralJudge(folder, runtime="torch")
    result = {"judge": judge.name, "model_folder": str(folder), "card": judge.card,
              "multi_label_rule_primary": "any", "evaluation": "mustcite.labels.multicite.evaluate_judge "
              "(the same function as benchmarks/offline_judge_multicite.py)", "runtimes": {}}
    import torch
    result["machine"] = {"cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads()}
    result["runtimes"]["torch"] = {"judge": judge.name, "runs": run(judge, runs)}
    if not ns.no_onnx and (folder / ONNX_DIR / ONNX_FILE).is_file():
        oj = NeuralJudge(folder, runtime="onnx-int8")
        result["runtimes"]["onnx-int8"] = {"judge": oj.name, "runs": run(oj, [("test", "3")])}
    if (folder / CASCADE_FILE).is_file():
        runtime = "onnx-int8" if (folder / ONNX_DIR / ONNX_FILE).is_file() else "torch"
        cj = CascadeJudge(folder, runtime=runtime)
        result["runtimes"]["cascade"] = {"judge": cj.name, "calibration": cj.cal, "neural_runtime": runtime,
                                         "runs": run(cj, [("test", "3")])}
        cj.seen = cj.sent = 0
        cj.judge_batch([inst for _, inst in iter_instances("test", "3")], "type1")
        result["runtimes"]["cascade"]["share_to_neural_test"] = round(cj.sent / max(1, cj.seen), 4)
        every = next(r for r in cj.cal["dev"]["grid"] if r["band"] >= 1.0)
        avg = CascadeJudge(folder, runtime=runtime)
        avg.band, avg.threshold = every["band"], every["threshold"]
        avg.name = "average of offline-lr-v1 and the neural judge on every item (dev threshold); not an LLM"
        result["runtimes"]["average"] = {"judge": avg.name, "threshold": avg.threshold,
                                         "runs": run(avg, [("test", "3")])}
        off_ = OfflineJudge()
        result["mcnemar_vs_lr_test3"] = {"cascade": mcnemar(cj, off_), "average": mcnemar(avg, off_),
                                         "neural": mcnemar(judge, off_)}
    lr = json.loads(LR_RESULTS.read_text("utf-8")) if LR_RESULTS.is_file() else None
    off = OfflineJudge()
    lr_speed = throughput(off, "test", "3")
    row = {"judge": off.name, "source": str(LR_RESULTS.name) if lr else "recomputed", "judge_many_test/3": lr_speed}
    lr_run = lr["runs"]["test/3"] if lr else evaluate_judge(off, "test", "3")
    row["test/3"] = {"type1": lr_run["type1"], "type2": lr_run["type2"]}
    result["offline_lr"] = row
    nt = result["runtimes"]["torch"]["runs"]["test/3"]
    result["summary_test3_rule_any"] = {
        name: {"accuracy": r["type1"]["any"]["accuracy"], "cohen_kappa": r["type1"]["any"]["cohen_kappa"],
               "type2_qwk": r["type2"]["quadratic_weighted_kappa_vs_proxy"], "instances_per_second": s}
        for name, r, s in [
            ("offline-lr-v1", lr_run, lr_speed["instances_per_second"]),
            ("neural-minilm-v1 torch", nt, nt["judge_many"]["instances_per_second"]),
            *([("neural-minilm-v1 onnx-int8", result["runtimes"]["onnx-int8"]["runs"]["test/3"],
                result["runtimes"]["onnx-int8"]["runs"]["test/3"]["judge_many"]["instances_per_second"])]
              if "onnx-int8" in result["runtimes"] else []),
            *([(name, result["runtimes"][key]["runs"]["test/3"],
                result["runtimes"][key]["runs"]["test/3"]["judge_many"]["instances_per_second"])
               for key, name in (("cascade", "cascade-lr-neural-v1"), ("average", "average LR + neural"))
               if key in result["runtimes"]])]}
    result["target"] = {"accuracy": 0.85, "cohen_kappa": 0.68}
    atomic_write_json(ns.out, result)
    print(json.dumps(result["summary_test3_rule_any"], indent=1))
    print("wrote", ns.out)


if __name__ == "__main__":
    main()
