"""SCIDOCA 2025 floors (``mustcite.scidoca.floors``): tune BM25's k on dev, then score test once.

For each task: the "all candidates" floor and the BM25 floor for every k of a grid on dev (the
official metric's ``f1`` picks k; ties -> smallest k), then both floors once on test with the
chosen k -- f1, precision, recall (Task 3 also micro_f1 and no_citation_accuracy) -- and their
throughput on test (paragraphs/s of ``predict``, tokenisation included, file reading excluded).
k is top-k for Tasks 1 and 3, the context half-width in words around the slot for Task 2.
Writes ``benchmarks/results/scidoca_floors.json``.

    python benchmarks/scidoca_floors.py [--data DIR] [--dev-sample N] [--seed 0]

``--dev-sample N`` tunes on a seeded random sample of N dev paragraphs (0 = all of dev).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from mustcite.io import iter_jsonl  # noqa: E402
from mustcite.scidoca import AllCandidates, BM25TopK, Origin, evaluate, example_from_json, read_examples  # noqa: E402

OUT = Path(__file__).parent / "results" / "scidoca_floors.json"
GRID = {1: list(range(1, 11)), 2: [3, 5, 10, 15, 20, 30, 50, 100], 3: list(range(1, 11))}
KEYS = {1: ("f1", "precision", "recall"), 2: ("f1", "precision", "recall"),
        3: ("f1", "precision", "recall", "micro_f1", "no_citation_accuracy")}


def _task_file(data: Path, split: str, task: int) -> Path:
    """``<split>/task<N>.jsonl.gz`` (as `mustcite scidoca build` writes it) or ``.jsonl``."""
    gz = data / split / f"task{task}.jsonl.gz"
    return gz if gz.is_file() else data / split / f"task{task}.jsonl"


def _read_sample(path: Path, task: int, n: int, seed: int):
    if not n:
        return read_examples(path, task=task)
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        total = sum(1 for _ in fh)
    keep = set(random.Random(seed).sample(range(1, total + 1), min(n, total)))
    return [example_from_json(obj, Origin(str(path), line), task=task)
            for line, obj in iter_jsonl(path) if line in keep]


def _scores(task, gold, answers):
    r = evaluate(task, gold, answers)
    return {k: r[k] for k in KEYS[task]}


def _timed(floor, examples):
    start = time.perf_counter()
    answers = floor.predict(examples)
    return answers, len(examples) / (time.perf_counter() - start)


def run_task(task: int, data: Path, sample: int, seed: int) -> dict:
    dev = _read_sample(_task_file(data, "dev", task), task, sample, seed)
    gold = [e.answer() for e in dev]
    bm25 = BM25TopK(task)
    grid = {}
    if task == 2:  # the window changes the queries: score each k afresh
        for k in GRID[2]:
            grid[k] = _scores(2, gold, bm25.answers(dev, bm25.score(dev, k), k))
    else:  # one scoring pass, cut at every k
        scored = bm25.score(dev)
        for k in GRID[task]:
            grid[k] = _scores(task, gold, bm25.answers(dev, scored, k))
        del scored
    best = max(GRID[task], key=lambda k: (grid[k]["f1"], -k))
    dev_all = _scores(task, gold, AllCandidates(task).predict(dev))
    n_dev = len(dev)
    del dev, gold  # free dev before test is read

    test = read_examples(_task_file(data, "test", task), task=task)
    tgold = [e.answer() for e in test]
    out = {"dev_paragraphs": n_dev, "k_meaning": "context half-width in words around the slot" if task == 2
           else "top-k candidates" + (" per sentence" if task == 3 else ""),
           "dev_grid": {str(k): v for k, v in grid.items()}, "chosen_k": best, "dev_all": dev_all,
           "test_paragraphs": len(test), "test": {}}
    for name, floor in (("all", AllCandidates(task)), ("bm25", BM25TopK(task, best))):
        answers, rate = _timed(floor, test)
        out["test"][name] = {**_scores(task, tgold, answers), "paragraphs_per_s": round(rate, 1),
                             "floor": floor.metadata()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1] / "mustcite-work" / "scidoca")
    ap.add_argument("--dev-sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tasks", default="1,2,3")
    args = ap.parse_args()
    result = {"data": str(args.data), "dev": "all of dev" if not args.dev_sample else
              f"seeded random sample of {args.dev_sample} dev paragraphs (random.Random({args.seed}))",
              "selection": "k maximising the official f1 on dev (ties -> smallest k); test read once after",
              "tasks": {}}
    for task in (int(t) for t in args.tasks.split(",")):
        start = time.perf_counter()
        result["tasks"][str(task)] = run_task(task, args.data, args.dev_sample, args.seed)
        result["tasks"][str(task)]["elapsed_s"] = round(time.perf_counter() - start, 1)
        print(json.dumps({"task": task, "chosen_k": result["tasks"][str(task)]["chosen_k"],
                          "test": {k: {m: v for m, v in s.items() if m != "floor"}
                                   for k, s in result["tasks"][str(task)]["test"].items()}}), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
