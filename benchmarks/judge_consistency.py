"""Inter-run consistency of every judge that runs here: the same MultiCite inputs judged twice by two
fresh judge objects (no memo, no answer cache), Type I and Type II agreement between the runs.

The vectorised judges (offline, neural in both runtimes, cascade) judge the whole 3-sentence test
split twice; the local LLM judge (greedy decoding, temperature 0) judges ``--llm-n`` items twice
without the answer cache, its P(1) compared too, because llama.cpp's prompt cache changes which
tokens are evaluated in a batch.  The hosted judges (Gemini, OpenAI-compatible) cannot be called
from this machine and are not measured.
Writes ``benchmarks/results/judge_consistency.json``.

    MUSTCITE_LOCAL_MODELS=DIR python benchmarks/judge_consistency.py [--llm-n 30] [--no-llm]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.labels import iter_instances  # noqa: E402

OUT = Path(__file__).parent / "results" / "judge_consistency.json"


def agreement(a: list, b: list) -> dict:
    from sklearn.metrics import cohen_kappa_score

    n = len(a)
    same = sum(x == y for x, y in zip(a, b))
    labs = sorted({*a, *b})
    return {"items": n, "identical": same, "agreement": round(same / n, 4) if n else None,
            "cohen_kappa": round(float(cohen_kappa_score(a, b)), 4) if len(labs) > 1 else 1.0}


def twice(make, insts) -> dict:
    out = {}
    runs = []
    for _ in range(2):
        judge = make()
        t0 = time.perf_counter()
        res = judge.judge_many(insts, ("type1", "type2"))
        runs.append((res, time.perf_counter() - t0))
    for task in ("type1", "type2"):
        out[task] = agreement([j.value for j in runs[0][0][task]], [j.value for j in runs[1][0][task]])
    p = [[(j.prob or {}).get(1, 0.0) for j in r[0]["type1"]] for r in runs]
    out["max_abs_p1_difference"] = round(max(abs(x - y) for x, y in zip(*p)), 8)
    out["seconds"] = [round(s, 1) for _, s in runs]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llm-n", type=int, default=30)
    ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    from mustcite.labels import CascadeJudge, NeuralJudge, OfflineJudge

    insts = [inst for _, inst in iter_instances("test", "3")]
    result = {"inputs": f"MultiCite test, 3-sentence contexts ({len(insts)} items)", "judges": {}}
    for name, make in (("offline-lr-v1", OfflineJudge),
                       ("neural-minilm-v1 torch", lambda: NeuralJudge(runtime="torch")),
                       ("neural-minilm-v1 onnx-int8", lambda: NeuralJudge(runtime="onnx-int8")),
                       ("cascade-lr-neural-v1", lambda: CascadeJudge(runtime="onnx-int8"))):
        result["judges"][name] = twice(make, insts)
        print(name, result["judges"][name], flush=True)
    if not args.no_llm:
        from mustcite.labels import LocalLlamaJudge, local_models_dir, run_judge

        sample = [inst for _, inst in iter_instances("test", "3", n=args.llm_n, seed=5)]
        runs = []
        for _ in range(2):
            judge = LocalLlamaJudge(cache_dir=local_models_dir(), n_threads=args.threads)
            t0 = time.perf_counter()
            res = run_judge(judge, [(inst, "type1") for inst in sample], None, concurrency=1, progress=True)
            runs.append(([res.judgements[(inst.key(), "type1")] for inst in sample], time.perf_counter() - t0))
            del judge
        a, b = runs[0][0], runs[1][0]
        result["judges"]["local qwen2.5-coder-1.5b (greedy)"] = {
            "type1": agreement([j.value for j in a], [j.value for j in b]),
            "max_abs_p1_difference": round(max(abs((x.prob or {}).get(1, 0) - (y.prob or {}).get(1, 0))
                                               for x, y in zip(a, b)), 6),
            "seconds": [round(s, 1) for _, s in runs], "decision": "calibrated threshold on P(1)"}
        print(result["judges"]["local qwen2.5-coder-1.5b (greedy)"], flush=True)
    atomic_write_json(args.out, result)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
