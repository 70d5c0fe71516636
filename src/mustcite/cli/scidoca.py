"""``mustcite scidoca ...``: the SCIDOCA 2025 shared task.

* ``scidoca build``: Task 1/2/3 data from the linked NeurIPS full texts (split by paper);
* ``scidoca evaluate``: the official scores of a prediction file against the gold (one JSON object).
* ``scidoca predict``: predictions of a floor (all candidates | BM25 top-k, ``scidoca.floors``) or of
  a learned system (``scidoca.discovery``, ``scidoca.masked``, ``scidoca.sentences``);
  ``scidoca train``: train one (``scidoca.training``).

Further commands go on ``scidoca_app`` below with ``@scidoca_app.command("name")``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from ..config import Workspace
from ..errors import UsageError
from ..io import check_output_dir, check_output_file

scidoca_app = typer.Typer(help="SCIDOCA 2025 shared task: file formats and official scoring.",
                          no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(scidoca_app, name="scidoca")


@scidoca_app.command("evaluate")
def evaluate_cmd(
    task: int = typer.Option(..., "--task", min=1, max=3, help="subtask: 1 discovery | 2 masked | 3 sentence"),
    pred: Path = typer.Option(..., "--pred", help="predictions, JSONL in the seed's output shape with an id"),
    gold: Path = typer.Option(..., "--gold", help="gold: the same shape, or full examples (JSONL, or an official "
                              ".in/.label folder)"),
) -> None:
    """Official scores of predictions against the gold, as one JSON object.

    F1, precision, recall and counts; Task 3 also micro F1 and no-citation accuracy.
    """
    # loaded when the command runs, not at the command line's start-up
    from ..scidoca.evaluate import evaluate_files

    typer.echo(json.dumps(evaluate_files(task, pred, gold)))


@scidoca_app.command("build")
def build_cmd(
    out: Path = typer.Option(None, "--out", help="output folder (default: <work>/scidoca)"),
    fulltext: list[Path] = typer.Option(None, "--fulltext", help="full-text folder(s), repeatable "
                                        "(default: every neurips/fulltext_* folder of the data directory)"),
    refs: Path = typer.Option(None, "--refs", help="linked extraction folder (default: <work>/extract)"),
    corpus: Path = typer.Option(None, "--corpus", help="corpus Parquet (default: <work>/corpus/papers.parquet)"),
    seed: int = typer.Option(0, "--seed"),
    max_candidates: int = typer.Option(None, "--max-candidates", min=1, help="cap on candidates per paragraph "
                                       "(gold always kept; default: every distractor)"),
    compress: bool = typer.Option(True, "--compress/--no-compress", help="write task{n}.jsonl.gz (the train "
                                  "split repeats candidate abstracts: ~8.6 GB uncompressed on all NeurIPS texts)"),
    workers: int = typer.Option(2, "--workers", min=1),
    fractions: tuple[float, float, float] = typer.Option(
        (0.8, 0.1, 0.1), "--fractions", metavar="TRAIN DEV TEST",
        help="shares of papers per split (three numbers summing to 1)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
) -> None:
    """Build Task 1/2/3 data (train/dev/test, split by paper) from the linked NeurIPS full texts."""
    # loaded when the command runs, not at the command line's start-up
    from ..scidoca.build import build_task_data, default_inputs

    work = Workspace.resolve()
    dirs, extract, corpus_default = default_inputs(None, str(work.root))
    dest = check_output_dir(out or work.root / "scidoca")
    manifest = build_task_data(fulltext or dirs, refs or extract, corpus or corpus_default, dest, seed=seed,
                               fractions=fractions, max_candidates=max_candidates, compress=compress, workers=workers,
                               progress=not quiet)
    typer.echo(json.dumps({"out": str(dest), "counts": manifest["counts"], "elapsed_s": manifest["elapsed_s"]}))


@scidoca_app.command("predict")
def predict_cmd(
    task: int = typer.Option(..., "--task", min=1, max=3, help="subtask: 1 discovery | 2 masked | 3 sentence"),
    inp: Path = typer.Option(..., "--in",
                             help="task examples: seed-shape JSONL, or an official .in/.label file or folder"),
    out: Path = typer.Option(..., "--out", help="predictions, JSONL in the seed's output shape"),
    method: str = typer.Option("bm25", "--method", help="all (every candidate) | bm25 (BM25 top-k) | learned "
                               "(a model from `scidoca train`)"),
    k: int = typer.Option(None, "--k", min=1, help="BM25: top k (Tasks 1, 3) or context half-width in words "
                          "(Task 2); default: the dev-tuned value"),
    model: Path = typer.Option(None, "--model",
                               help="learned: the model folder (default: <work>/models/scidoca-taskN)"),
) -> None:
    """Predictions of a floor (all candidates | BM25 top-k) or a learned system, as one JSON summary line."""
    # loaded when the command runs, not at the command line's start-up
    from ..scidoca.floors import make_floor
    from ..scidoca.formats import read_examples, write_answers

    if method not in ("all", "bm25", "learned"):
        raise UsageError(f"--method must be 'all', 'bm25' or 'learned', got {method!r}")
    check_output_file(out)
    start = time.perf_counter()
    if method == "learned":
        from ..scidoca.training import default_model_dir, load_learned

        system = load_learned(task, model or default_model_dir(Workspace.resolve().root, task))
    else:
        system = make_floor(task, method, k)
    examples = read_examples(inp, task=task)
    n = write_answers(out, system.predict(examples))
    typer.echo(json.dumps({"out": str(out), "paragraphs": n, **system.metadata(),
                           "elapsed_s": round(time.perf_counter() - start, 3)}))


@scidoca_app.command("train-encoder")
def train_encoder_cmd(
    data: Path = typer.Option(None, "--data", help="task data from `scidoca build` (default: <work>/scidoca): "
                              "trains on train/task3 only"),
    out: Path = typer.Option(None, "--out", help="model folder (default: <work>/models/scidoca-encoder)"),
    limit: int = typer.Option(3000, "--limit", min=1, help="training paragraphs (a seeded uniform sample of train)"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Fine-tune MiniLM on train paragraphs and their citing sentences -> cited candidates (NT-Xent
    with a BM25-hard negative of the same paragraph); use it with `scidoca train --encoder DIR`."""
    # loaded when the command runs, not at the command line's start-up
    from ..scidoca import training as tr

    root = Workspace.resolve().root
    data = data or root / "scidoca"
    dest = check_output_dir(out or root / "models" / "scidoca-encoder")
    card = tr.train_encoder(tr.split_file(data, "train", 3), dest, limit=limit, seed=seed)
    typer.echo(json.dumps({"out": str(dest), "triplets": card["pairs"], "loss_per_epoch": card["loss_per_epoch"],
                           "seconds": card["seconds"]}))


@scidoca_app.command("train")
def train_cmd(
    task: int = typer.Option(..., "--task", min=1, max=3, help="subtask: 1 discovery | 2 masked | 3 sentence"),
    data: Path = typer.Option(None, "--data", help="task data from `scidoca build` (default: <work>/scidoca): "
                              "trains on train/, tunes on dev/, never reads test/"),
    out: Path = typer.Option(None, "--out", help="model folder (default: <work>/models/scidoca-taskN)"),
    limit: int = typer.Option(4000, "--limit", min=1, help="training paragraphs (a seeded uniform sample of train)"),
    dev_limit: int = typer.Option(1000, "--dev-limit", min=1,
                                  help="dev paragraphs for the tuned settings (Tasks 1, 3)"),
    seed: int = typer.Option(0, "--seed"),
    dense: bool = typer.Option(False, "--dense/--no-dense", help="Tasks 1, 2: add the dense features (int8 MiniLM)"),
    encoder: Path = typer.Option(None, "--encoder", help="Tasks 1, 2: the dense features from this fine-tuned encoder "
                                 "(`scidoca train-encoder`; implies --dense; its paragraphs are not trained on again)"),
    cross_encoder: Path = typer.Option(None, "--cross-encoder", help="Task 1: a trained cross-encoder folder to "
                                       "re-score the stage-1 top candidates (its weight is chosen on dev)"),
    cross_train: int = typer.Option(0, "--train-cross-encoder", min=0, help="Task 1: train a cross-encoder on N other "
                                    "train paragraphs (about an hour per 1,400 on two CPU cores)"),
    discovery: Path = typer.Option(None, "--discovery", help="Task 3: the Task 1 model it builds on "
                                   "(default: <work>/models/scidoca-task1); Task 2: optional, adds that "
                                   "model's paragraph-level P as features"),
) -> None:
    """Train a learned system on training paragraphs and tune it on dev (never on test)."""
    # loaded when the command runs, not at the command line's start-up
    from ..scidoca import training as tr

    root = Workspace.resolve().root
    data = data or root / "scidoca"
    dest = check_output_dir(out or tr.default_model_dir(root, task))
    enc, skip = None, []
    if (dense or encoder is not None) and task in (1, 2):
        enc = tr.encoder_settings(encoder)
        skip = tr.read_train_ids(encoder) if encoder is not None else []
    report = None
    if task == 1:
        ce = None
        if cross_encoder is not None:
            from ..retrieval.cross_encoder import CrossEncoderReranker

            ce = CrossEncoderReranker.load(cross_encoder)
        model, ids, report = tr.train_discovery(tr.split_file(data, "train", 1), tr.split_file(data, "dev", 1),
                                                limit=limit, dev_limit=dev_limit, seed=seed, encoder=enc,
                                                cross_encoder=ce, cross_train=cross_train, exclude=skip)
    elif task == 2:
        model, ids = tr.train_masked(tr.split_file(data, "train", 2), limit=limit, seed=seed, encoder=enc,
                                     discovery_dir=discovery, exclude=skip)
    else:
        model, ids, report = tr.train_sentences(tr.split_file(data, "train", 3), tr.split_file(data, "dev", 3),
                                                discovery or tr.default_model_dir(root, 1), limit=limit,
                                                dev_limit=dev_limit, seed=seed)
    model.save(dest)
    tr.write_train_ids(dest, ids)
    typer.echo(json.dumps({"out": str(dest), **model.metadata(), "dev": report["best"] if report else None}))
