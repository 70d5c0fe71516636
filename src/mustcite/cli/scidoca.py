"""``mustcite scidoca ...``: the SCIDOCA 2025 shared task.

* ``scidoca build``: Task 1/2/3 data from the linked NeurIPS full texts (split by paper);
* ``scidoca evaluate``: the official scores of a prediction file against the gold (one JSON object).
* ``scidoca predict``: predictions of a floor (all candidates | BM25 top-k, ``scidoca.floors``).

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
    method: str = typer.Option("bm25", "--method", help="floor: all (every candidate) | bm25 (BM25 top-k)"),
    k: int = typer.Option(None, "--k", min=1, help="BM25: top k (Tasks 1, 3) or context half-width in words "
                          "(Task 2); default: the dev-tuned value"),
) -> None:
    """Predictions of a floor (all candidates | BM25 top-k), as one JSON summary line."""
    import time

    from ..errors import MustciteError
    from ..scidoca.floors import make_floor
    from ..scidoca.formats import read_examples, write_answers

    if method not in ("all", "bm25"):
        raise MustciteError(f"--method must be 'all' or 'bm25', got {method!r}")
    check_output_file(out)
    start = time.perf_counter()
    examples = read_examples(inp, task=task)
    floor = make_floor(task, method, k)
    n = write_answers(out, floor.predict(examples))
    typer.echo(json.dumps({"out": str(out), "paragraphs": n, **floor.metadata(),
                           "elapsed_s": round(time.perf_counter() - start, 3)}))
