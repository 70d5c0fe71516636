"""``mustcite corpus build`` and ``mustcite corpus stats [--json] [--by-year] [--tracks] [--sources]``.

Exit codes: 0 ok, 1 bad or missing data (message names file and line), 2 usage.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import typer

from ..config import Workspace, find_data_dir
from ..errors import UsageError
from ..shown import rich_shown

corpus_app = typer.Typer(help="Build and inspect the paper corpus (the candidate pool).",
                         no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(corpus_app, name="corpus")


@corpus_app.command("build")
def build_cmd(
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar, summary only"),
    collected: Path = typer.Option(None, "--collected", help="folder of `mustcite collect` record files to import "
                                   "with the lists (default: <work>/collect/records when it exists)"),
    no_collected: bool = typer.Option(False, "--no-collected", help="import the paper lists only"),
    no_anthology: bool = typer.Option(False, "--no-anthology", help="leave out ML Anthology (<data>/anthology): "
                                      "the paper lists alone, as older builds did"),
) -> None:
    """Import the paper lists (<data>/proceedings) and ML Anthology (<data>/anthology), merge them record by
    record, write the store."""
    # loaded when the command runs, not at the command line's start-up
    from ..corpus.build import build_corpus

    logging.basicConfig(level=logging.WARNING, format="warning: %(message)s")
    data_dir = find_data_dir()
    ws = Workspace.resolve()
    if collected is not None and no_collected:
        raise UsageError("--collected and --no-collected exclude each other")
    report = build_corpus(data_dir, ws, progress=not quiet,
                          collected=False if no_collected else collected, anthology=not no_anthology)
    dropped = sum(sum(t.values()) for t in report.dropped_tracks.values())
    skipped = sum(report.skipped.values())
    typer.echo(f"read {report.records_read} records from {len(report.files)} files "
               f"({len(report.sources)} sources) in {report.seconds:.1f} s")
    typer.echo(f"dropped {dropped} non-main-track records (+{sum(report.dropped_linked.values())} "
               f"linked to them), {sum(report.unconfirmed.values())} unconfirmed, "
               f"skipped {skipped} (unknown venue / no year)")
    typer.echo(f"merged {report.duplicates_merged} duplicates -> {report.total} papers, "
               f"{report.with_abstract} with abstract; {report.side_tracks} side records (workshops, "
               f"journals, other venues and tracks)")
    if report.version_links or report.disagreements:
        links = sum(report.version_links.values())
        dis = ", ".join(f"{f} {sum(k.values())}" for f, k in report.disagreements.items()) or "none"
        typer.echo(f"version links: {links}; sources disagree on: {dis} (corpus/disagreements.parquet)")
    if report.collected:
        c = report.collected
        typer.echo(f"collected: {c['records']} records from {c['files']} files in {c['dir']}: "
                   f"{c['main_track']} main track -> {c['new']} new, {c['merged']} merged with listed papers, "
                   f"{c['abstracts_filled']} abstracts filled; {c['in_corpus']} corpus papers have a collected record")
    typer.echo(f"store: {report.store}")


@corpus_app.command("stats")
def stats_cmd(
    as_json: bool = typer.Option(False, "--json", help="print {total, with_abstract, duplicates_merged, "
                                 "by_venue_year, tracks, sources, year_bands}"),
    by_year: bool = typer.Option(False, "--by-year", help="one row per venue and year (default: per venue)"),
    tracks: bool = typer.Option(False, "--tracks",
                                help="the side records (workshops, Findings, other venues) by venue and track"),
    sources: bool = typer.Option(False, "--sources",
                                 help="per source: records read, papers it lists, abstracts it gave"),
) -> None:
    """Papers per venue (and year), with and without abstracts, like MasterSet Table 1, and per year
    band; or the side records by venue and track (--tracks), or what each source gave (--sources)."""
    # rich (~30 ms): loaded when the command runs, not at the command line's start-up
    from rich.console import Console

    from ..corpus.stats import corpus_stats

    stats = corpus_stats()
    if as_json:
        typer.echo(json.dumps(stats.to_dict(), indent=1))
        return
    console = Console()
    if tracks:
        console.print(_tracks_table(stats))
    if sources:
        console.print(_sources_table(stats))
    if not (tracks or sources):
        console.print(_papers_table(stats, by_year))
        if not by_year:
            console.print(_bands_table(stats))


def _n(v: int | None) -> str:
    return "–" if v is None else f"{v:,}"


def _papers_table(stats, by_year: bool):
    # rich (~30 ms): loaded when the command runs, not at the command line's start-up
    from rich.table import Table

    table = Table(title=f"Corpus: {stats.total:,} papers, {stats.with_abstract:,} with abstract, "
                        f"{stats.duplicates_merged:,} duplicates merged")
    if by_year:
        for col in ("Venue", "Year", "Papers", "With abstract", "Without"):
            table.add_column(col, justify="left" if col == "Venue" else "right")
        for r in stats.by_venue_year:
            table.add_row(rich_shown(r["venue"]), str(r["year"]), f"{r['papers']:,}", f"{r['with_abstract']:,}",
                          f"{r['papers'] - r['with_abstract']:,}")
    else:
        for col in ("Venue", "Years", "Conf-years", "Papers", "With abstract", "Without"):
            table.add_column(col, justify="left" if col == "Venue" else "right")
        for r in stats.by_venue():
            table.add_row(rich_shown(r["venue"]), f"{r['first_year']}–{r['last_year']}", str(r["years"]),
                          f"{r['papers']:,}", f"{r['with_abstract']:,}",
                          f"{r['papers'] - r['with_abstract']:,}")
    table.add_section()
    table.add_row("Total", "", "", f"{stats.total:,}", f"{stats.with_abstract:,}",
                  f"{stats.total - stats.with_abstract:,}") if not by_year else table.add_row(
        "Total", "", f"{stats.total:,}", f"{stats.with_abstract:,}", f"{stats.total - stats.with_abstract:,}")
    return table


def _bands_table(stats):
    # rich (~30 ms): loaded when the command runs, not at the command line's start-up
    from rich.table import Table

    table = Table(title="Papers by year band")
    for col in ("Years", "Papers", "With abstract", "Share"):
        table.add_column(col, justify="left" if col == "Years" else "right")
    for r in stats.year_bands:
        share = "–" if r["share_with_abstract"] is None else f"{r['share_with_abstract']:.1%}"
        table.add_row(r["band"], f"{r['papers']:,}", f"{r['with_abstract']:,}", share)
    return table


def _tracks_table(stats):
    # rich (~30 ms): loaded when the command runs, not at the command line's start-up
    from rich.table import Table

    total = sum(r["records"] for r in stats.tracks)
    table = Table(title=f"Side records (not in the corpus): {total:,}")
    for col in ("Venue", "Track", "Records", "With abstract", "Years"):
        table.add_column(col, justify="left" if col in ("Venue", "Track") else "right")
    for r in stats.tracks:
        years = "–" if r["first_year"] is None else f"{r['first_year']}–{r['last_year']}"
        table.add_row(rich_shown(r["venue"] or "(none)"), rich_shown(r["track"]), f"{r['records']:,}",
                      _n(r["with_abstract"]), years)
    if not stats.tracks:
        table.caption = "no side records in this store (built before they were kept)"
    return table


def _sources_table(stats):
    # rich (~30 ms): loaded when the command runs, not at the command line's start-up
    from rich.table import Table

    table = Table(title="Sources")
    for col in ("Source", "Files", "Records read", "With abstract", "Papers it lists", "Abstracts it gave"):
        table.add_column(col, justify="left" if col == "Source" else "right")
    for r in stats.sources:
        table.add_row(rich_shown(r["source"]), _n(r["files"]), _n(r["records"]), _n(r["with_abstract"]),
                      _n(r["papers"]), _n(r["abstracts"]))
    table.caption = ("papers it lists: corpus papers with a record of the source; "
                     "abstracts it gave: corpus abstracts taken from it")
    return table
