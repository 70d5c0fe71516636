"""``mustcite agreement FILE... [--judge JUDGE.csv] [--label COL]``, ``mustcite rate SAMPLE.csv --out DIR``,
``mustcite agreement sample --refs DIR --n 200 --out S.csv`` and ``mustcite labels stats DIR --out fig.png
[--json]``, ``mustcite labels train-judge [--out DIR]`` (the neural judge, :mod:`mustcite.labels.neural`),
``mustcite labels fit-cascade`` (the cascade judge, :mod:`mustcite.labels.cascade`).

``rate`` serves the rater page for a sample on localhost (:mod:`mustcite.api.rate`).
``agreement`` prints Krippendorff's alpha, pairwise (weighted) Cohen's kappa, exact / within-one
agreement and, with a judge CSV, judge accuracy and weighted kappa as one JSON object
(:mod:`mustcite.labels.agreement`).  ``agreement sample`` draws a stratified (venue, year) sample of
citation instances for raters (:mod:`mustcite.labels.sample`).  ``labels stats`` counts and plots
the three label distributions of labelled reference files (:mod:`mustcite.labels.plots`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from .. import lazy_libs
from ..config import Workspace
from ..errors import MustciteError, UsageError
from ..io import atomic_write_text, check_output_file
from ..labels.tiers import LabelConfig
from ..run_markers import read_run_state, warn_if_partial

labels_app = typer.Typer(help="Must-cite labels: distributions of labelled reference files.",
                         no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("agreement")(agreement_cmd)
    app.command("rate")(rate_cmd)
    app.add_typer(labels_app, name="labels")


def agreement_cmd(
    targets: list[str] = typer.Argument(..., metavar="FILE... | sample | judge SAMPLE.csv",
                                        help="long-form ratings CSV(s) (item,rater,label; e.g. one per rater, as "
                                             "`mustcite rate` writes them), 'sample' to draw a sample, or "
                                             "'judge SAMPLE.csv' to label a sample with a judge"),
    label: str = typer.Option("label", "--label",
                              help="the label column of the ratings CSV(s); `mustcite rate` files: type1 or type2"),
    judge: Path = typer.Option(None, "--judge", help="judge labels CSV (item and label, or item,type1,type2 as "
                                                     "'agreement judge' writes it)"),
    backend: str = typer.Option("offline", "--backend",
                                help="(judge) offline | neural | cascade | openai | gemini | local"),
    model: str = typer.Option(None, "--model",
                              help="(judge) model name or neural model folder, as for `mustcite judge`"),
    refs: Path = typer.Option(None, "--refs", help="(sample) extraction folder with <stem>.json reference files"),
    n: int = typer.Option(200, "--n", help="(sample) number of citation instances"),
    out: Path = typer.Option(None, "--out", help="(sample) CSV to write"),
    papers: Path = typer.Option(None, "--papers",
                                help="(sample) papers.jsonl / manifest with venue and year per paper id"),
    seed: int = typer.Option(0, "--seed", help="(sample) random seed"),
) -> None:
    """Inter-rater agreement of a ratings CSV (JSON to stdout), 'agreement sample' to draw a
    stratified validation sample, or 'agreement judge SAMPLE.csv --backend B --out J.csv' to label the
    sample with a judge (columns item,type1,type2) for `--judge`."""
    if targets[0] == "judge":
        if len(targets) != 2 or out is None:
            raise UsageError("usage: mustcite agreement judge SAMPLE.csv --backend B --out JUDGE.csv")
        # loaded when the command runs, not at the command line's start-up
        from ..labels.agreement import read_sample_instances
        from ..labels.backends import BACKENDS, make_judge
        from ..labels.contract import judge_instances

        if backend not in BACKENDS:
            raise UsageError(f"unknown --backend {backend!r}: use {', '.join(BACKENDS)}")
        check_output_file(out)
        ids, insts = read_sample_instances(targets[1])
        rows = judge_instances(ids, insts, make_judge(backend, model=model), progress=sys.stderr.isatty())
        atomic_write_text(out, "item,type1,type2\n" + "".join(f"{r['id']},{r['type1']},{r['type2']}\n" for r in rows))
        typer.echo(f"{len(rows)} sample items judged by {backend}; labels in {out}")
        return

    if targets[0] == "sample":
        if len(targets) > 1:
            raise UsageError("'mustcite agreement sample' takes no file arguments")
        if refs is None or out is None:
            raise UsageError("'mustcite agreement sample' needs --refs DIR and --out FILE.csv")
        if judge is not None:
            raise UsageError("--judge does not apply to 'agreement sample'")
        from ..labels.sample import write_sample

        check_output_file(out)

        typer.echo(json.dumps(write_sample(refs, out, n=n, seed=seed, manifest=papers), indent=1))
        return
    if refs is not None or out is not None or papers is not None:
        raise UsageError("--refs/--out/--papers belong to 'mustcite agreement sample'")
    from ..labels.agreement import agreement_from_files

    typer.echo(json.dumps(agreement_from_files(targets if len(targets) > 1 else targets[0], judge, label),
                          indent=1))


def rate_cmd(
    sample: Path = typer.Argument(..., help="the sample CSV of `mustcite agreement sample`"),
    out: Path = typer.Option(..., "--out", help="folder for the ratings: one <rater>.csv per rater"),
    port: int = typer.Option(8010, "--port", help="port on 127.0.0.1"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on (default: this machine only)"),
    abstracts: Path = typer.Option(None, "--abstracts",
                                   help="where cited abstracts come from, matched by normalised title: a JSONL "
                                        "of title and abstract records or a corpus store (default: "
                                        "<work>/corpus/papers.parquet when it exists)"),
) -> None:
    """Serve the rater page for SAMPLE at http://HOST:PORT/rate: one instance at a time, Type I (0/1)
    and Type II (1-5) by keyboard, each answer saved at once to OUT/<rater>.csv (resumable).
    `mustcite agreement OUT/*.csv --label type1` (or type2) reads the files."""
    lazy_libs.fastapi("mustcite labels rate")  # the extra's libraries, named if missing
    lazy_libs.uvicorn("mustcite labels rate")
    # loaded when the command runs, not at the command line's start-up
    from ..api.rate import serve_rate
    from ..labels.rating import RatingStore

    if abstracts is None and (Workspace.resolve().root / "corpus" / "papers.parquet").is_file():
        abstracts = Workspace.resolve().root / "corpus" / "papers.parquet"
    store = RatingStore.open(sample, out, abstracts)
    typer.echo(f"rating {len(store.instances)} instances of {sample}; answers in {out}/<rater>.csv\n"
               f"open http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/rate", err=True)
    serve_rate(store, host=host, port=port)


@labels_app.command("stats")
def stats_cmd(
    folder: Path = typer.Argument(..., help="folder of labelled reference files (<stem>.json)"),
    out: Path = typer.Option(None, "--out", help="PNG to write (three panels, MasterSet Figure 1)"),
    as_json: bool = typer.Option(False, "--json", help="print the counts as JSON"),
    n_mentions: int = typer.Option(3, "--n-mentions", help="Type III threshold N"),
    allow_partial: bool = typer.Option(False, "--allow-partial",
                                       help="count a folder whose run was interrupted or failed (with a warning)"),
) -> None:
    """Counts of Type I / Type II / Type III labels (and mentions) in DIR, optionally plotted.
    A folder whose `mustcite annotate` run did not complete is refused unless --allow-partial."""
    # loaded when the command runs, not at the command line's start-up
    from ..labels.plots import label_counts, plot_counts

    if out is not None:
        check_output_file(out)
    partial = warn_if_partial(folder, "label folder") if folder.is_dir() else None
    if partial and not allow_partial:
        st = read_run_state(folder)
        rerun = (f"`mustcite annotate {st.options.get('folder') or folder.parent}`" if st and st.stage == "annotate"
                 else f"the `mustcite {st.stage if st else 'annotate'}` command that wrote it")
        raise MustciteError(partial, hint=f"rerun {rerun} to finish it (finished papers are skipped), "
                                          "or pass --allow-partial")
    if partial:
        typer.echo(f"warning: {partial}", err=True)
    counts = label_counts(folder, LabelConfig(n_mentions=n_mentions))
    if out is not None:
        counts["figure"] = str(plot_counts(counts, out))
    if as_json:
        typer.echo(json.dumps(counts, indent=1))
        return
    typer.echo(f"{counts['references']} references in {counts['files']} files")
    for key in ("type1", "type2", "type3", "must_cite"):
        typer.echo(f"{key}: " + ", ".join(f"{k}={v}" for k, v in counts[key].items()))
    if out is not None:
        typer.echo(f"figure: {counts['figure']}")


@labels_app.command("train-judge")
def train_judge_cmd(
    out: Path = typer.Option(None, "--out", help="model folder (default: <work>/models/judge-neural)"),
    epochs: int = typer.Option(1, "--epochs", min=1, help="passes over the training pairs"),
    max_length: int = typer.Option(128, "--max-length", min=16, help="word pieces per input"),
    batch_size: int = typer.Option(16, "--batch-size", min=1, help="training batch size"),
    lr: float = typer.Option(5e-5, "--lr", help="AdamW learning rate (linear warm-up and decay)"),
    seed: int = typer.Option(0, "--seed", help="random seed (head initialisation, shuffling)"),
    contexts: str = typer.Option("3", "--contexts",
                                 help="MultiCite train context versions, comma-separated (3, 1, gold); '3,1' adds "
                                      "the 1-sentence version as augmentation"),
    limit: int = typer.Option(None, "--limit", min=1, help="first N train items of each version (quick builds)"),
    dev_limit: int = typer.Option(None, "--dev-limit", min=1, help="first N dev items (quick builds)"),
    onnx: bool = typer.Option(False, "--onnx", help="also export an int8 ONNX model (runtime onnx-int8)"),
    freeze_embeddings: bool = typer.Option(True, "--freeze-embeddings/--train-embeddings",
                                           help="keep MiniLM's embedding layer fixed (about 2x faster on CPU)"),
    force: bool = typer.Option(False, "--force", help="overwrite a model already in the folder"),
    as_json: bool = typer.Option(False, "--json", help="print the training card as JSON"),
) -> None:
    """Build the neural judge (`--backend neural`): fine-tune the shipped MiniLM cross-encoder on
    MultiCite train (Type I proxy), choose its threshold and Type II cut points on MultiCite dev,
    and save it with a training card. Needs the MultiCite data; nothing is downloaded."""
    # loaded when the command runs, not at the command line's start-up
    from ..labels.neural import CARD, default_model_dir, train_judge

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    folder = out or default_model_dir()
    versions = tuple(c.strip() for c in contexts.split(",") if c.strip())
    if not versions or any(c not in ("3", "1", "gold") for c in versions):
        raise UsageError(f"--contexts takes 3, 1 and/or gold, got {contexts!r}")
    if (folder / CARD).is_file() and not force:
        raise MustciteError("a neural judge model is already in this folder", path=folder,
                            hint="pass --force to retrain it, or --out for another folder")
    card = train_judge(folder, epochs=epochs, max_length=max_length, batch_size=batch_size, lr=lr, seed=seed,
                       contexts=versions, limit=limit, dev_limit=dev_limit, onnx=onnx,
                       freeze_embeddings=freeze_embeddings,
                       progress=not as_json and sys.stderr.isatty())
    if as_json:
        typer.echo(json.dumps(card, indent=1))
        return
    typer.echo(f"neural judge in {folder}: {card['train_pairs']} training pairs, {epochs} epoch(s), "
               f"{card['fit_seconds']} s; dev accuracy {card['dev']['accuracy']} kappa {card['dev']['cohen_kappa']} "
               f"at threshold {card['threshold']}")


@labels_app.command("fit-cascade")
def fit_cascade_cmd(
    model: Path = typer.Option(None, "--model", help="neural model folder (default: <work>/models/judge-neural)"),
    as_json: bool = typer.Option(False, "--json", help="print the calibration as JSON"),
) -> None:
    """Calibrate the cascade judge (`--backend cascade`: the offline judge, with the neural judge
    averaged in where the offline judge is unsure) on MultiCite dev; writes cascade.json beside the
    neural model. Needs a model built by `mustcite labels train-judge`."""
    # loaded when the command runs, not at the command line's start-up
    from ..labels.cascade import fit_cascade

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    cal = fit_cascade(model)
    if as_json:
        typer.echo(json.dumps(cal, indent=1))
        return
    c = cal["dev"]["chosen"]
    typer.echo(f"cascade: band {cal['band']} (neural judge on {c['share_to_neural']:.0%} of dev items), "
               f"threshold {cal['threshold']}; dev accuracy {c['accuracy']} kappa {c['cohen_kappa']}")
