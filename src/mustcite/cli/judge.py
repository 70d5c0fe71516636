"""``mustcite judge --backend NAME --in FILE.jsonl [--out FILE.jsonl]``: Type I / Type II labels for
any set of citation contexts (the judge contract of :mod:`mustcite.labels.contract`).

Reads one ``{"id", "context", "section", "cite"}`` a line, prints one ``{"id", "type1", "type2"}`` a
line in input order (to ``--out`` if given, written atomically).  A bad input line stops the run
before anything is judged (exit 1, the message names the line); an item the judge gives no label
for stops it after judging (exit 1, the message names the ids; nothing is written).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from ..errors import UsageError
from ..io import check_output_file, write_jsonl
from ..shown import shown_line

BACKEND_HELP = "offline | neural | cascade | openai | gemini | local"


def register(app: typer.Typer) -> None:
    app.command("judge")(judge_cmd)


def judge_cmd(
    backend: str = typer.Option("offline", "--backend", help=BACKEND_HELP),
    in_path: Path = typer.Option(..., "--in", help="contexts JSONL: one {id, context, section, cite} a line"),
    out: Path = typer.Option(None, "--out", help="write the labels JSONL here (default: stdout)"),
    model: str = typer.Option(None, "--model", help="model name (openai: $MUSTCITE_OPENAI_MODEL; gemini: "
                              "gemini-2.5-flash; neural, cascade: the neural model folder, default "
                              "<work>/models/judge-neural)"),
    prompts: Path = typer.Option(None, "--prompts", help="folder with your own type1*.txt / type2*.txt prompts"),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="LLM calls in flight at once"),
) -> None:
    """Judge citation contexts: one {id, type1: 0|1, type2: 1-5} line per input line, in input order."""
    # loaded when the command runs, not at the command line's start-up
    from ..labels.backends import BACKENDS, make_judge
    from ..labels.contract import cite_found, judge_contexts, read_contexts

    if backend not in BACKENDS:
        raise UsageError(f"unknown --backend {backend!r}: use {', '.join(BACKENDS)}")
    if out is not None:
        check_output_file(out)
    if backend == "local":
        from ..labels.backends.local_llama import quality_note_for

        note = quality_note_for(str(prompts) if prompts else None)
        if note:
            typer.echo(f"warning: {shown_line(note)}", err=True)
    items = read_contexts(in_path)
    missing = [it for it in items if not cite_found(it)]
    if missing:
        ids = ", ".join(f"{it.id} (line {it.line})" for it in missing[:5])
        typer.echo(f"warning: the cite marker does not occur in the context of {len(missing)} of {len(items)} "
                   f"items, e.g. {ids}; they are judged on the context alone", err=True)
    judge = make_judge(backend, model=model, prompts_dir=str(prompts) if prompts else None)
    stats: dict = {}
    rows = judge_contexts(items, judge, concurrency=concurrency, progress=sys.stderr.isatty(), stats=stats)
    if out is not None:
        write_jsonl(out, rows)
        secs = stats.get("seconds", 0.0)
        typer.echo(f"{len(rows)} contexts judged by {str(getattr(judge, 'name', backend)).split(':', 1)[0]} "
                   f"in {secs:.2f} s ({len(rows) / secs if secs > 0 else 0:,.0f} contexts/s); labels in {out}",
                   err=True)
    else:
        sys.stdout.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        sys.stdout.flush()
