"""SCIDOCA Tasks 1 and 3: the learned systems against the two floors, on dev and once on test.

Trains the task's system with the recipe of ``mustcite scidoca train`` (``mustcite.scidoca.training``:
a seeded sample of train, settings chosen on a seeded sample of dev) or loads a trained one
(``--model``), then scores it and the floors -- all candidates, and BM25 top-k with the dev-chosen
k of ``benchmarks/scidoca_floors.py`` -- on the dev sample and once on all of test: the official
metrics, the ratio and points over the better floor, a paired randomisation test over paragraphs
(Task 1: each paragraph's F1 times its gold count, the terms of the official weighted mean; Task 3:
each paragraph's summed sentence F1 over its citing sentences) and throughput (paragraphs/s of
``predict``, one process). Task 3 is scored twice: as tuned (sentences below the need threshold
get no citation) and with the need gate off (every sentence answered, as the floors do). Writes
``benchmarks/results/scidoca_task<N>[<suffix>].json``.

    python benchmarks/scidoca_systems.py --task 1 [--limit 4000] [--dev-limit 1000] [--dense]
        [--encoder DIR] [--cross-encoder DIR] [--compare NAME=DIR] [--no-test] [--model DIR] [--suffix NAME]
    python benchmarks/scidoca_systems.py --task 3 --discovery DIR [--limit 3000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from mustcite.benchmark import randomisation_test  # noqa: E402
from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.scidoca import (  # noqa: E402
    AllCandidates,
    BM25TopK,
    default_model_dir,
    encoder_settings,
    evaluate,
    load_learned,
    read_examples,
    read_train_ids,
    sample_examples,
    split_file,
    train_discovery,
    train_sentences,
    write_train_ids,
)

RESULTS = Path(__file__).parent / "results"
KEYS = {1: ("f1", "precision", "recall"),
        3: ("f1", "precision", "recall", "micro_f1", "no_citation_accuracy")}


def per_paragraph(task: int, gold, answers) -> dict[str, float]:
    """The paragraph's additive share of the official score (see the module docstring)."""
    out = {}
    for g, a in zip(gold, answers):
        if task == 1:
            gs, ps = set(g.citations), set(a.citations)
            tp = len(gs & ps)
            out[g.id] = 2 * tp / (len(gs) + len(ps)) * len(gs) if gs or ps else 0.0
        else:
            total = 0.0
            for gi, pi in zip(g.citations, a.citations):
                gs, ps = set(gi), set(pi)
                if gs:
                    tp = len(gs & ps)
                    total += 2 * tp / (len(gs) + len(ps))
            out[g.id] = total
    return out


def compare(task: int, examples, systems: dict, *, skip: tuple[str, ...] = (), versus: tuple[str, ...] = ()) -> dict:
    """Each system's official scores; each learned system against the better floor, and the
    ``learned`` system against each system named in ``versus`` (paired randomisation test)."""
    gold = [e.answer() for e in examples]
    rows, per = {}, {}
    for name, system in systems.items():
        if name in skip:
            continue
        t0 = time.perf_counter()
        answers = system.predict(examples)
        rate = len(examples) / (time.perf_counter() - t0)
        r = evaluate(task, gold, answers)
        rows[name] = {k: (round(r[k], 4) if r[k] is not None else None) for k in KEYS[task]}
        rows[name]["paragraphs_per_s"] = round(rate, 2)
        per[name] = per_paragraph(task, gold, answers)
    floor = max(("all", "bm25"), key=lambda n: rows[n]["f1"])
    for name in [n for n in systems if n.startswith("learned") and n not in skip]:
        rows[f"{name}_vs_better_floor"] = {
            "floor": floor, "ratio": round(rows[name]["f1"] / rows[floor]["f1"], 3),
            "points": round(100 * (rows[name]["f1"] - rows[floor]["f1"]), 1),
            "p_randomisation": randomisation_test(per[name], per[floor])}
    for other in [n for n in versus if "learned" in rows and n in rows]:
        rows[f"learned_vs_{other}"] = {
            "ratio": round(rows["learned"]["f1"] / rows[other]["f1"], 3),
            "points": round(100 * (rows["learned"]["f1"] - rows[other]["f1"]), 1),
            "p_randomisation": randomisation_test(per["learned"], per[other])}
    return rows


class Ungated:
    """The Task 3 system answering every sentence (its need gate off): the floors' regime."""

    name = "learned_ungated"

    def __init__(self, model):
        self.model = model

    def predict(self, examples):
        from mustcite.scidoca import SentenceRule

        r = self.model.rule
        rule = SentenceRule(0.0, r.threshold, r.min_k)
        return [self.model.answer(ex, pt, rule) for ex, pt in zip(examples, self.model.parts(examples))]


def main(argv: list[str] | None = None) -> int:
    from mustcite.config import Workspace

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", type=int, choices=(1, 3), required=True)
    ap.add_argument("--data", type=Path, help="SCIDOCA task data (default: <work>/scidoca)")
    ap.add_argument("--limit", type=int, help="training paragraphs (default: 4000 for Task 1, 3000 for Task 3)")
    ap.add_argument("--dev-limit", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dense", action="store_true", help="Task 1: dense features too (int8 MiniLM)")
    ap.add_argument("--encoder", type=Path, help="Task 1: dense features from this fine-tuned encoder "
                    "(`mustcite scidoca train-encoder`; implies --dense; its paragraphs are skipped)")
    ap.add_argument("--compare", action="append", default=[], metavar="NAME=DIR",
                    help="also score this trained Task 1 model on the same paragraphs (repeatable)")
    ap.add_argument("--cross-encoder", type=Path, help="Task 1: a trained cross-encoder folder")
    ap.add_argument("--discovery", type=Path, help="Task 3: the Task 1 model (default: <work>/models/scidoca-task1)")
    ap.add_argument("--model", type=Path, help="score this trained model instead of training one")
    ap.add_argument("--model-out", type=Path,
                    help="where to save the trained model (default: <work>/models/scidoca-task<N>)")
    ap.add_argument("--no-test", action="store_true", help="dev only (choose between variants on dev; read test once)")
    ap.add_argument("--suffix", default="", help="results file suffix (a variant's name)")
    args = ap.parse_args(argv)
    task = args.task
    work = Workspace.resolve().root
    data = args.data or work / "scidoca"
    train_file, dev_file = split_file(data, "train", task), split_file(data, "dev", task)
    t0 = time.perf_counter()
    report = None
    if args.model:
        model = load_learned(task, args.model)
    elif task == 1:
        ce = None
        if args.cross_encoder:
            from mustcite.retrieval import CrossEncoderReranker

            ce = CrossEncoderReranker.load(args.cross_encoder)
        model, ids, report = train_discovery(train_file, dev_file, limit=args.limit or 4000,
                                             dev_limit=args.dev_limit, seed=args.seed,
                                             encoder=encoder_settings(args.encoder)
                                             if args.dense or args.encoder else None,
                                             cross_encoder=ce,
                                             exclude=read_train_ids(args.encoder) if args.encoder else ())
    else:
        model, ids, report = train_sentences(train_file, dev_file, args.discovery or default_model_dir(work, 1),
                                             limit=args.limit or 3000, dev_limit=args.dev_limit, seed=args.seed)
    fit_s = time.perf_counter() - t0
    if not args.model:
        dest = args.model_out or default_model_dir(work, task)
        model.save(dest)
        write_train_ids(dest, ids)
    systems = {"learned": model, "all": AllCandidates(task), "bm25": BM25TopK(task)}
    for spec in args.compare:
        name, _, folder = spec.partition("=")
        systems[f"learned_{name}"] = load_learned(task, Path(folder))
    if task == 3:
        systems["learned_ungated"] = Ungated(model)
    versus = tuple(f"learned_{spec.partition('=')[0]}" for spec in args.compare)
    # a system tuned here was scored on the dev sample while tuning (report["best"]): not again
    tuned = report is not None and task == 1
    dev = compare(task, sample_examples(dev_file, args.dev_limit, seed=args.seed, task=task), systems,
                  skip=("learned",) if tuned else (), versus=versus)
    if tuned:
        dev["learned"] = {"f1": report["best"]["f1"], "scored_while_tuning": True}
    print("dev", json.dumps(dev), file=sys.stderr)
    test = None if args.no_test else compare(task, read_examples(split_file(data, "test", task), task=task), systems,
                                             versus=versus)
    print("test", json.dumps(test), file=sys.stderr)
    target = {1: "better floor + 10 points on test (BM25 k=8: 0.426 -> 0.526)",
              3: "better floor + 10 points on test (BM25 k=1: 0.365 -> 0.465), no-citation accuracy beside"}[task]
    out = {"task": task, "dev_sample": args.dev_limit, "seed": args.seed, "fit_and_tune_s": round(fit_s, 1),
           "load_average": os.getloadavg()[0], "model": model.metadata(),
           "tuning": {k: v for k, v in (report or {}).items() if k != "grid"}, "dev": dev, "test": test,
           "target": target,
           "leaderboard_reference": {1: "best F1 50.75 (other data)",
                                     3: "best F1 23.27, no-citation accuracy 67.00 (other data)"}[task]}
    atomic_write_json(RESULTS / f"scidoca_task{task}{args.suffix}.json", out)
    print(json.dumps({"dev": dev, "test": test}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
