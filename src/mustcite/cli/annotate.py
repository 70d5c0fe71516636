"""``mustcite annotate DIR``: must-cite labels for an extraction folder (see :mod:`mustcite.labels.annotate`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from ..engine import make_engine
from ..errors import MustciteError, UsageError
from ..labels.annotate import SUMMARY_NAME, annotate_dir
from ..shown import shown_line
from .extract import ADDRESS_HELP, ENGINE_HELP, rate


def register(app: typer.Typer) -> None:
    app.command("annotate")(annotate_cmd)


def _parse_price(price: str | None, model: str | None) -> dict[str, tuple[float, float]] | None:
    if not price:
        return None
    try:
        p_in, p_out = (float(x) for x in price.split(","))
    except ValueError:
        raise UsageError(f"--price must be IN,OUT dollars per million tokens, got {price!r}") from None
    if not model:
        raise UsageError("--price needs --model (the price applies to that model)")
    return {model: (p_in, p_out)}


def annotate_cmd(
    folder: Path = typer.Argument(..., help="extraction output folder (reference files <stem>.json)"),
    backend: str = typer.Option("offline", "--backend", help="offline | neural | cascade | openai | gemini | local"),
    model: str = typer.Option(None, "--model", help="model name (openai: $MUSTCITE_OPENAI_MODEL; gemini: "
                              "gemini-2.5-flash; neural, cascade: the neural model folder, default "
                              "<work>/models/judge-neural)"),
    prompts: Path = typer.Option(None, "--prompts", help="folder with your own type1*.txt / type2*.txt prompts"),
    concurrency: int = typer.Option(8, "--concurrency", help="calls in flight at once"),
    dry_run: bool = typer.Option(False, "--dry-run",
                                 help="count the calls (cache misses) and estimate cost; judge nothing"),
    mention_threshold: int = typer.Option(3, "--mention-threshold", help="Type III: mentioned at least N times"),
    price: str = typer.Option(None, "--price", help="IN,OUT dollars per million tokens for --model"),
    force: bool = typer.Option(False, "--force", help="relabel papers whose labels are up to date"),
    chunk: int = typer.Option(None, "--chunk", min=1,
                              help="instances judged per chunk; label files are written after each chunk"),
    engine: str = typer.Option("local", "--engine", help=ENGINE_HELP + "; LLM judges always run here"),
    address: str = typer.Option(None, "--address", help=ADDRESS_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Judge every citation instance (Type I, Type II), add Type III, write DIR/labels/ and a summary.
    A rerun skips papers already labelled by the same judge (--force relabels them)."""
    # loaded when the command runs, not at the command line's start-up
    from ..labels.backends import BACKENDS

    if backend not in BACKENDS:
        raise UsageError(f"unknown --backend {backend!r}: use {', '.join(BACKENDS)}")
    if backend == "local":
        from ..labels.backends.local_llama import quality_note_for

        note = quality_note_for(str(prompts) if prompts else None)
        if note:
            typer.echo(f"warning: {shown_line(note)}", err=True)
    eng = make_engine(engine, address)
    summary = annotate_dir(folder, backend=backend, model=model, prompts_dir=str(prompts) if prompts else None,
                           concurrency=concurrency, dry_run=dry_run, mention_threshold=mention_threshold,
                           prices=_parse_price(price, model), force=force, chunk=chunk,
                           progress=not as_json and sys.stderr.isatty(), engine=eng)
    if not dry_run:
        summary["engine"] = eng.name
    if as_json:
        typer.echo(json.dumps(summary, indent=1, ensure_ascii=False))
    elif dry_run:
        typer.echo(f"{summary['papers']} papers, {summary['instances']} instances: {summary['report']}")
    else:
        c = summary["counts"]
        typer.echo(f"{summary['papers']} papers, {summary['instances']} instances judged by {summary['judge']}"
                   + (f" ({summary['skipped']} papers up to date, skipped)" if summary.get("skipped") else ""))
        typer.echo(f"type1 {c['type1']}  type2 {c['type2']}  type3 {c['type3']}  must_cite {c['must_cite']}")
        typer.echo(f"parse failures {summary['parse_failures']}, calls {summary['calls']}, cached {summary['cached']}")
        done = summary["papers"] - summary.get("skipped", 0)
        typer.echo(f"{done} papers labelled in {summary['seconds']:.1f} s ({rate(done, summary['seconds'])}, "
                   f"{summary['instances_per_s'] or 0:,.0f} instances/s, engine {eng.name})")
        typer.echo(summary["cost_report"])
        typer.echo(f"labels in {summary['labels_dir']}, summary in {Path(folder) / SUMMARY_NAME}")
    if summary.get("failed_calls"):
        raise MustciteError(f"{summary['failed_calls']} calls failed after all retries (labels left null); "
                            "rerun the same command to retry them: answers so far are cached")
