"""``mustcite corpus build`` and ``mustcite corpus stats [--json]``.

Exit codes: 0 ok, 1 bad or missing data (message names file and line), 2 usage.
"""

from __future__ import annotations

import json
import logging

from pathlib import Path

import typer

from ..errors import UsageError

corpus_app = typer.Typer(help="Build and inspect the paper corpus (the candidate pool).",
                         no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(corpus_app, name="corpus")


@corpus_app.command("build")
def build_cmd(
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar, summary only"),
    collected: Path = typer.Option(None, "--collected", help="folder of `mustcite collect` record files to import with the lists (default: <work>/collect/records when it exists)"),
    no_collected: bool = typer.Option(False, "--no-collected", help="import the paper lists only"),
) -> None:
    """Import every paper list in <data>/proceedings, keep main tracks, merge duplicates, write the store."""
    from ..config import Workspace, find_data_dir
    from ..corpus.build import build_corpus

    logging.basicConfig(level=logging.WARNING, format="warning: %(message)s")
    data_dir = find_data_dir()
    ws = Workspace.resolve()
    if collected is not None and no_collected:
        raise UsageError("--collected and --no-collected exclude each other")
    report = build_corpus(data_dir, ws, progress=not quiet,
                          collected=False if no_collected else collected)
    dropped = sum(sum(t.values()) for t in report.dropped_tracks.values())
    skipped = sum(report.skipped.values())
    typer.echo(f"read {report.records_read} records from {len(report.files)} files "
               f"({len(report.sources)} sources) in {report.seconds:.1f} s")
    typer.echo(f"dropped {dropped} non-main-track records (+{sum(report.dropped_linked.values())} "
               f"linked to them), {sum(report.unconfirmed.values())} unconfirmed, "
               f"skipped {skipped} (unknown venue / no year)")
    typer.echo(f"merged {report.duplicates_merged} duplicates -> {report.total} papers, "
               f"{report.with_abstract} with abstract")
    if report.collected:
        c = report.collected
        typer.echo(f"collected: {c['records']} records from {c['files']} files in {c['dir']}: "
                   f"{c['main_track']} main track -> {c['new']} new, {c['merged']} merged with listed papers, "
                   f"{c['abstracts_filled']} abstracts filled; {c['in_corpus']} corpus papers have a collected record")
    typer.echo(f"store: {report.store}")


@corpus_app.command("stats")
def stats_cmd(
    as_json: bool = typer.Option(False, "--json", help="print {total, with_abstract, duplicates_merged, by_venue_year}"),
    by_year: bool = typer.Option(False, "--by-year", help="one row per venue and year (default: per venue)"),
) -> None:
    """Papers per venue (and year), with and without abstracts, like MasterSet Table 1."""
    from rich.console import Console
    from rich.table import Table

    from ..corpus.stats import corpus_stats

    stats = corpus_stats()
    if as_json:
        typer.echo(json.dumps(stats.to_dict(), indent=1))
        return
    table = Table(title=f"Corpus: {stats.total:,} papers, {stats.with_abstract:,} with abstract, "
                        f"{stats.duplicates_merged:,} duplicates merged")
    if by_year:
        for col in ("Venue", "Year", "Papers", "With abstract", "Without"):
            table.add_column(col, justify="left" if col == "Venue" else "right")
        for r in stats.by_venue_year:
            table.add_row(r["venue"], str(r["year"]), f"{r['papers']:,}", f"{r['with_abstract']:,}",
                          f"{r['papers'] - r['with_abstract']:,}")
    else:
        for col in ("Venue", "Years", "Conf-years", "Papers", "With abstract", "Without"):
            table.add_column(col, justify="left" if col == "Venue" else "right")
        for r in stats.by_venue():
            table.add_row(r["venue"], f"{r['first_year']}–{r['last_year']}", str(r["years"]),
                          f"{r['papers']:,}", f"{r['with_abstract']:,}",
                          f"{r['papers'] - r['with_abstract']:,}")
    table.add_section()
    table.add_row("Total", "", "", f"{stats.total:,}", f"{stats.with_abstract:,}",
                  f"{stats.total - stats.with_abstract:,}") if not by_year else table.add_row(
        "Total", "", f"{stats.total:,}", f"{stats.with_abstract:,}", f"{stats.total - stats.with_abstract:,}")
    Console().print(table)
