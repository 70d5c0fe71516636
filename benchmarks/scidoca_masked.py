"""SCIDOCA Task 2 (masked citation prediction): the learned system against the BM25 floor.

Trains :class:`mustcite.scidoca.masked.MaskedCitationModel` on a seeded random sample of
training paragraphs (train split only), scores it and the BM25 floor (context half-width 5, the
dev-chosen floor) on a seeded sample of dev (``--dev-sample``, default 1,000 paragraphs), then once
on all of test: the official metric (per-mask accuracy: P = R
= F1), the ratio to the floor, a paired test over paragraphs (randomisation test on each
paragraph's accuracy) and throughput (paragraphs/s of ``predict``). Nothing of dev or test shapes
the model: it has no tuned setting. Writes ``benchmarks/results/scidoca_masked.json`` and saves
the model (``--model-out``, default ``<work>/models/scidoca-task2``).

    python benchmarks/scidoca_masked.py [--data DIR] [--train 4000] [--seed 0] [--dense --suffix _dense]
        [--discovery DIR --suffix _discovery]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from mustcite.benchmark import randomisation_test  # noqa: E402
from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.scidoca import BM25TopK, evaluate, read_examples, sample_examples  # noqa: E402

OUT = Path(__file__).parent / "results" / "scidoca_masked.json"


def task_file(data: Path, split: str) -> Path:
    for name in ("task2.jsonl.gz", "task2.jsonl"):
        if (data / split / name).is_file():
            return data / split / name
    raise SystemExit(f"no {split}/task2.jsonl[.gz] under {data}: run `mustcite scidoca build` first")


def per_paragraph(gold, answers) -> dict[str, float]:
    out = {}
    for g, a in zip(gold, answers):
        if g.citations:
            got = dict(a.citations)
            out[g.id] = sum(got.get(m) == c for m, c in g.citations.items()) / len(g.citations)
    return out


def compare(examples, systems: dict) -> dict:
    gold = [e.answer() for e in examples]
    rows, per = {}, {}
    for name, system in systems.items():
        t0 = time.perf_counter()
        answers = system.predict(examples)
        rate = len(examples) / (time.perf_counter() - t0)
        r = evaluate(2, gold, answers)
        rows[name] = {"f1": round(r["f1"], 4), "masks": r["masks"], "correct_masks": r["correct_masks"],
                      "paragraphs_per_s": round(rate, 1)}
        per[name] = per_paragraph(gold, answers)
    rows["learned_vs_bm25"] = {"ratio": round(rows["learned"]["f1"] / rows["bm25"]["f1"], 3),
                               "points": round(100 * (rows["learned"]["f1"] - rows["bm25"]["f1"]), 1),
                               "p_randomisation": randomisation_test(per["learned"], per["bm25"])}
    return rows


def main(argv: list[str] | None = None) -> int:
    from mustcite.config import Workspace

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="SCIDOCA task data (default: <work>/scidoca)")
    ap.add_argument("--train", type=int, default=4000, help="training paragraphs sampled")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dev-sample", type=int, default=1000, help="dev paragraphs scored (seeded sample; 0: all)")
    ap.add_argument("--dense", action="store_true", help="add the dense features (int8 MiniLM, the recommender's "
                    "encoder and embedding cache)")
    ap.add_argument("--no-test", action="store_true", help="dev only (choose between variants on dev; read test once)")
    ap.add_argument("--discovery", type=Path, help="a Task 1 model (benchmarks/scidoca_systems.py --task 1) whose "
                    "paragraph-level P becomes a feature")
    ap.add_argument("--suffix", default="", help="variant name: results file and default model folder suffix")
    ap.add_argument("--model-out", type=Path)
    ap.add_argument("--out", type=Path, help=f"results JSON (default: {OUT.name}, with --suffix before .json)")
    args = ap.parse_args(argv)
    work = Workspace.resolve().root
    data = args.data or work / "scidoca"
    t0 = time.perf_counter()
    from mustcite.scidoca import DEFAULT_ENCODER, train_masked, write_train_ids

    model, ids = train_masked(task_file(data, "train"), limit=args.train, seed=args.seed,
                              encoder=dict(DEFAULT_ENCODER) if args.dense else None, discovery_dir=args.discovery)
    fit_s = time.perf_counter() - t0
    dest = args.model_out or work / "models" / ("scidoca-task2" + args.suffix.replace("_", "-"))
    model.save(dest)
    write_train_ids(dest, ids)
    systems = {"learned": model, "bm25": BM25TopK(2)}
    dev_file = task_file(data, "dev")
    dev = compare(sample_examples(dev_file, args.dev_sample, seed=args.seed, task=2) if args.dev_sample
                  else read_examples(dev_file, task=2), systems)
    print("dev", json.dumps(dev), file=sys.stderr)
    test = None if args.no_test else compare(read_examples(task_file(data, "test"), task=2), systems)
    print("test", json.dumps(test), file=sys.stderr)
    out = {"task": 2, "dev_sample": args.dev_sample,
           "train": {"sampled_paragraphs": args.train, "seed": args.seed, **model.info,
                                "fit_s": round(fit_s, 1)},
           "model": model.metadata(), "dev": dev, "test": test,
           "target": "floor + 10 points on test (BM25 floor 0.224 -> 0.324)"}
    atomic_write_json(args.out or OUT.with_name(f"scidoca_masked{args.suffix}.json"), out)
    print(json.dumps({"dev": dev, "test": test}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
