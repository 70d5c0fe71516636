"""``mustcite scidoca ...``: the SCIDOCA 2025 shared task.

* ``scidoca build``: Task 1/2/3 data from the linked NeurIPS full texts (split by paper);
* ``scidoca evaluate``: the official scores of a prediction file against the gold (one JSON object).
* ``scidoca predict``: predictions of a floor (all candidates | BM25 top-k, ``scidoca.floors``) or of
  the learned Task 2 system (``scidoca.masked``); ``scidoca train``: train that system.

Further commands go on ``scidoca_app`` below with ``@scidoca_app.command("name")``.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..io import check_output_dir, check_output_file

scidoca_app = typer.Typer(help="SCIDOCA 2025 shared task: file formats and official scoring.",
                          no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(scidoca_app, name="scidoca")


@scidoca_app.command("evaluate")
def evaluate_cmd(
    task: int = typer.Option(..., "--task", min=1, max=3, help="subtask: 1 discovery | 2 masked | 3 sentence"),
    pred: Path = typer.Option(..., "--pred", help="predictions, JSONL in the seed's output shape with an id"),
    gold: Path = typer.Option(..., "--gold", help="gold: the same shape, or full examples (JSONL, or an official .in/.label folder)"),
) -> None:
    """Official scores of predictions against the gold, as one JSON object.

    F1, precision, recall and counts; Task 3 also micro F1 and no-citation accuracy.
    """
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
) -> None:
    """Build Task 1/2/3 data (train/dev/test, split by paper) from the linked NeurIPS full texts."""
    from ..config import Workspace
    from ..scidoca.build import build_task_data, default_inputs

    work = Workspace.resolve()
    dirs, extract, corpus_default = default_inputs(None, str(work.root))
    dest = check_output_dir(out or work.root / "scidoca")
    manifest = build_task_data(fulltext or dirs, refs or extract, corpus or corpus_default, dest, seed=seed,
                               max_candidates=max_candidates, compress=compress, workers=workers)
    typer.echo(json.dumps({"out": str(dest), "counts": manifest["counts"], "elapsed_s": manifest["elapsed_s"]}))


@scidoca_app.command("predict")
def predict_cmd(
    task: int = typer.Option(..., "--task", min=1, max=3, help="subtask: 1 discovery | 2 masked | 3 sentence"),
    inp: Path = typer.Option(..., "--in", help="task examples: seed-shape JSONL, or an official .in/.label file or folder"),
    out: Path = typer.Option(..., "--out", help="predictions, JSONL in the seed's output shape"),
    method: str = typer.Option("bm25", "--method", help="all (every candidate) | bm25 (BM25 top-k) | learned "
                               "(Task 2: a model from `scidoca train`)"),
    k: int = typer.Option(None, "--k", min=1, help="BM25: top k (Tasks 1, 3) or context half-width in words "
                          "(Task 2); default: the dev-tuned value"),
    model: Path = typer.Option(None, "--model", help="learned: the model folder (default: <work>/models/scidoca-task2)"),
) -> None:
    """Predictions of a floor (all candidates | BM25 top-k) or the learned Task 2 system, as one JSON summary line."""
    import time

    from ..errors import UsageError
    from ..scidoca.floors import make_floor
    from ..scidoca.formats import read_examples, write_answers

    if method not in ("all", "bm25", "learned"):
        raise UsageError(f"--method must be 'all', 'bm25' or 'learned', got {method!r}")
    if method == "learned" and task != 2:
        raise UsageError("--method learned is built for Task 2 only so far; use all or bm25 for Tasks 1 and 3")
    check_output_file(out)
    start = time.perf_counter()
    if method == "learned":
        from ..config import Workspace
        from ..scidoca.masked import MaskedCitationModel

        system = MaskedCitationModel.load(model or Workspace.resolve().root / "models" / "scidoca-task2")
    else:
        system = make_floor(task, method, k)
    examples = read_examples(inp, task=task)
    n = write_answers(out, system.predict(examples))
    typer.echo(json.dumps({"out": str(out), "paragraphs": n, **system.metadata(),
                           "elapsed_s": round(time.perf_counter() - start, 3)}))


@scidoca_app.command("train")
def train_cmd(
    task: int = typer.Option(2, "--task", min=2, max=2, help="subtask (2: masked citation prediction)"),
    inp: Path = typer.Option(None, "--in", help="training examples (default: <work>/scidoca/train/task2.jsonl[.gz])"),
    out: Path = typer.Option(None, "--out", help="model folder (default: <work>/models/scidoca-task2)"),
    limit: int = typer.Option(4000, "--limit", min=1, help="train on the first N paragraphs of the file "
                              "(benchmarks/scidoca_masked.py samples them at random instead)"),
) -> None:
    """Train the learned Task 2 system on training paragraphs (never on dev or test)."""
    import itertools

    from ..config import Workspace
    from ..errors import DataMissingError
    from ..scidoca.formats import iter_examples
    from ..scidoca.masked import MaskedCitationModel

    root = Workspace.resolve().root
    if inp is None:
        found = [p for p in (root / "scidoca" / "train" / "task2.jsonl.gz", root / "scidoca" / "train" / "task2.jsonl")
                 if p.is_file()]
        if not found:
            raise DataMissingError("no SCIDOCA training data", hint="run `mustcite scidoca build` first")
        inp = found[0]
    dest = check_output_dir(out or root / "models" / "scidoca-task2")
    model = MaskedCitationModel().fit(itertools.islice(iter_examples(inp, task=task), limit))
    model.save(dest)
    typer.echo(json.dumps({"out": str(dest), **model.metadata()}))
