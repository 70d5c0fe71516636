"""``mustcite extract`` (full texts -> per-paper reference files) and ``mustcite link`` (-> corpus ids).

Exit codes: 0 when the run completed (failed papers are listed in ``summary.json``), 1 when nothing
could be done (no input papers, every paper failed, no corpus store), 2 on usage errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..config import Workspace
from ..engine import make_engine
from ..errors import MustciteError, UsageError
from ..extract.runner import extract_paths
from ..io import check_output_dir

ENGINE_HELP = ("where per-paper work runs: local (a process pool, default) or ray (a Ray cluster; "
               "pip install 'mustcite[ray]')")
ADDRESS_HELP = "with --engine ray: the Ray cluster to join, e.g. ray://head:10001 or auto (default: start a local one)"


def engine_option() -> str:
    return typer.Option("local", "--engine", help=ENGINE_HELP)


def address_option() -> str:
    return typer.Option(None, "--address", help=ADDRESS_HELP)


def rate(papers: int, seconds: float) -> str:
    return f"{papers / seconds:.2f} papers/s" if seconds > 0 and papers else "-"


def register(app: typer.Typer) -> None:
    app.command("extract")(extract_cmd)
    app.command("link")(link_cmd)
    app.command("extract-bibliographies")(extract_bibliographies_cmd)


def extract_cmd(
    paths: list[Path] = typer.Argument(..., help="files or folders (.md, .mmd, .md.gz, .mmd.gz, .tei.xml, .pdf)"),
    out: Path = typer.Option(..., "--out", "-o", help="output folder for <paper>.json, summary.json, papers.jsonl"),
    workers: int = typer.Option(None, "--workers", "-w", min=1, help="worker processes (default: CPU count)"),
    grobid_url: str = typer.Option(None, "--grobid-url", envvar="MUSTCITE_GROBID_URL",
                                   help="GROBID server, e.g. http://localhost:8070 (default: built-in PDF path only)"),
    force: bool = typer.Option(False, "--force", help="re-extract papers whose output is up to date"),
    engine: str = engine_option(),
    address: str = address_option(),
    as_json: bool = typer.Option(False, "--json", help="print the run totals as JSON"),
) -> None:
    """Extract reference lists and citation contexts from full texts."""
    if grobid_url is not None and not grobid_url.startswith(("http://", "https://")):
        raise UsageError(f"--grobid-url must be an http(s) URL, got {grobid_url!r}")
    eng = make_engine(engine, address, workers=workers)
    check_output_dir(out)
    summary = extract_paths([str(p) for p in paths], out, workers=workers, grobid_url=grobid_url,
                            force=force, progress=not as_json, engine=eng)
    totals = summary.totals()
    done = summary.papers - summary.skipped
    if as_json:
        typer.echo(json.dumps({**totals, "engine": eng.name,
                               "papers_per_s": round(done / summary.elapsed_s, 3) if summary.elapsed_s else None},
                              indent=1))
    else:
        typer.echo(f"{summary.papers} papers: {summary.ok} ok, {summary.flagged} flagged, "
                   f"{summary.failed} failed ({summary.skipped} up to date); {summary.references} references, "
                   f"{summary.mentions} mentions -> {out}/summary.json")
        typer.echo(f"{done} papers extracted in {summary.elapsed_s:.1f} s ({rate(done, summary.elapsed_s)}, "
                   f"engine {eng.name})")
        lost = [r for r in summary.rows if "worker_lost" in r.get("failure_modes", [])]
        if lost:
            typer.echo(f"{len(lost)} papers lost with their worker (reported failed, no files written; "
                       "rerun the same command to extract them)", err=True)
    if summary.papers == 0:
        raise MustciteError("no input papers found (.md, .mmd, .md.gz, .mmd.gz, .tei.xml, .pdf)",
                            path=", ".join(str(p) for p in paths))
    if summary.failed == summary.papers:
        raise MustciteError(_all_failed(summary, out))


def _all_failed(summary, out: Path, show: int = 5) -> str:
    """"every paper failed", naming the first few files and why (a single bad file reads as one
    clear message), then where the rest is."""
    lines = [f"{r['source_path']}: {'; '.join(r.get('messages') or []) or 'failed'}"
             for r in summary.rows[:show]]
    more = f"\n  ... and {summary.papers - show} more" if summary.papers > show else ""
    if summary.papers == 1:
        return f"{lines[0]} (see {out}/summary.json)"
    return f"every paper failed; see {out}/summary.json\n  " + "\n  ".join(lines) + more


def link_cmd(
    folder: Path = typer.Argument(..., help="an extraction folder (from `mustcite extract --out`)"),
    corpus: Path = typer.Option(None, "--corpus", help="papers.parquet (default: <work>/corpus/papers.parquet)"),
    workers: int = typer.Option(None, "--workers", "-w", min=1, help="worker processes (default: CPU count)"),
    engine: str = engine_option(),
    address: str = address_option(),
    as_json: bool = typer.Option(False, "--json", help="print the link figures as JSON"),
) -> None:
    """Link each extracted reference to a corpus paper (paper_id, link_score) and report the link rate."""
    # loaded when the command runs, not at the command line's start-up
    from ..extract.link import link_dir

    eng = make_engine(engine, address, workers=workers)
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder")
    corpus_path = corpus or Workspace.resolve().root / "corpus" / "papers.parquet"
    summary = link_dir(folder, corpus_path, workers=workers, progress=not as_json, engine=eng)
    if as_json:
        per_s = round(summary.papers / summary.elapsed_s, 3) if summary.elapsed_s else None
        typer.echo(json.dumps({**summary.to_dict(), "engine": eng.name, "papers_per_s": per_s}, indent=1))
    else:
        typer.echo(f"linked {summary.linked}/{summary.references} references "
                   f"(link rate {summary.rate:.1%}, {summary.exact} exact) in {summary.papers} papers "
                   f"({summary.errors} errors) in {summary.elapsed_s:.1f} s "
                   f"({rate(summary.papers, summary.elapsed_s)}, engine {eng.name})")
    if summary.papers == 0:
        raise MustciteError("no reference files to link", path=folder,
                            hint="run `mustcite extract PATH... --out DIR` first")


def extract_bibliographies_cmd(
    source: Path = typer.Argument(..., help="papers' bibliographies, one JSON object a line (.jsonl, .jsonl.xz, "
                                            ".jsonl.gz): {id, title, abstract, bbl: [{file, text}]}"),
    out: Path = typer.Option(None, "--out", "-o", help="output folder (default: <work>/extract-bbl)"),
    corpus: Path = typer.Option(None, "--corpus", help="the corpus folder (default: <work>/corpus)"),
    fulltext: list[Path] = typer.Option(None, "--fulltext", help="extraction folders of full texts: a paper "
                                        "that is one of their works is excluded (default: <work>/extract)"),
    benchmarks: Path = typer.Option(None, "--benchmarks", help="benchmark folders: a version of a dev or test "
                                    "query is excluded (default: <work>/benchmarks)"),
    no_link: bool = typer.Option(False, "--no-link", help="do not link the references to the corpus"),
    workers: int = typer.Option(None, "--workers", "-w", min=1, help="worker processes (default: CPU count)"),
    force: bool = typer.Option(False, "--force", help="import again even when the inputs are unchanged"),
    engine: str = engine_option(),
    address: str = address_option(),
    as_json: bool = typer.Option(False, "--json", help="print the import figures as JSON"),
) -> None:
    """Import papers' .bbl bibliographies as reference files (no citation contexts), each citing
    paper with its corpus record and year, its references linked to the corpus."""
    from ..extract.bibliographies import EXCLUDED_SUBDIR, import_bibliographies

    eng = make_engine(engine, address, workers=workers)
    root = Workspace.resolve().root
    out = out or root / "extract-bbl"
    check_output_dir(out)
    s = import_bibliographies(source, out, corpus or root / "corpus", fulltext=fulltext or [root / "extract"],
                              benchmarks=benchmarks or root / "benchmarks", link=not no_link, workers=workers,
                              progress=not as_json, force=force, engine=eng)
    if as_json:
        typer.echo(json.dumps(s.to_dict(), indent=1))
    else:
        for line in s.bad_lines[:10]:
            typer.echo(f"skipped: {line}", err=True)
        if len(s.bad_lines) > 10:
            typer.echo(f"... and {len(s.bad_lines) - 10} more bad lines (see {out}/summary.json)", err=True)
        for e in s.errors[:10]:
            typer.echo(f"failed: {e['error']}", err=True)
        typer.echo(f"{s.papers:,} papers{' (up to date)' if s.cached else ''}: {s.written:,} written, "
                   f"{s.excluded.get('papers', 0):,} excluded (in {out / EXCLUDED_SUBDIR}), {s.failed:,} failed, "
                   f"{len(s.bad_lines):,} bad lines; {s.items:,} items, {s.references:,} references, "
                   f"{s.linked:,} linked to the corpus")
        ys = ", ".join(f"{k} {v:,}" for k, v in sorted(s.year_source.items()))
        typer.echo(f"citing year from: {ys}; {s.elapsed_s:.1f} s -> {out}/summary.json")
    if s.papers == 0:
        raise MustciteError("no citing papers in the file", path=source)
    if s.papers == len(s.bad_lines) + s.failed:
        raise MustciteError("no paper could be imported", path=source, hint=f"see {out}/summary.json")
