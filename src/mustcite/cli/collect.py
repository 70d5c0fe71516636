"""``mustcite collect VENUE YEAR... [--no-pdfs] [--pdf-dir DIR] [--offline DIR]``: collect a venue's
main-track papers from its official proceedings site (see :mod:`mustcite.collect`).

Writes under ``<work>/collect/`` (or ``--out``): ``records/<VENUE>_<year>.jsonl``,
``reports/<VENUE>_<year>.json``, ``state/``, ``http-cache/``, ``pdfs/``. Exit codes: 0 every
venue-year collected (item problems are listed in its report), 1 a venue-year could not be
collected at all (index page missing or unreadable), 2 usage.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import typer

from ..config import Workspace
from ..errors import MustciteError, UsageError
from ..io import check_output_dir
from ..shown import shown_line


def register(app: typer.Typer) -> None:
    app.command("collect")(collect_cmd)


def parse_years(values: list[str]) -> list[int]:
    years: list[int] = []
    for v in values:
        m = re.fullmatch(r"(\d{4})(?:-(\d{4}))?", v.strip())
        if not m:
            raise UsageError(f"not a year or a year range: {v!r}", hint="e.g. 2024 or 2019-2021")
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if b < a or not (1980 <= a <= 2100):
            raise UsageError(f"bad year range {v!r}")
        years += [y for y in range(a, b + 1) if y not in years]
    return years


def collect_cmd(
    venue: str = typer.Argument(..., help="NeurIPS ICML ICLR AAAI IJCAI CVPR ICCV ECCV ACL EMNLP NAACL COLT UAI "
                                "AISTATS JMLR"),
    years: list[str] = typer.Argument(..., help="years (2024) or ranges (2019-2021)"),
    pdfs: bool = typer.Option(None, "--pdfs/--no-pdfs",
                              help="download the main-track PDFs (default: yes online, no with --offline)"),
    pdf_dir: Path = typer.Option(None, "--pdf-dir", help="where PDFs go (default <out>/pdfs/<VENUE>/<year>/)"),
    offline: Path = typer.Option(None, "--offline", help="read recorded pages from this folder instead of the network"),
    out: Path = typer.Option(None, "--out", help="output folder (default <work>/collect)"),
    delay: float = typer.Option(1.0, "--delay", min=0.0, help="seconds between two requests to one host"),
    refresh: bool = typer.Option(False, "--refresh", help="ignore the HTTP cache and the resume state"),
    track_judge: str = typer.Option("rules", "--track-judge",
                                    help="rules | openai | gemini | local (main-track classification)"),
    tracks_override: Path = typer.Option(None, "--tracks-override",
                                         help="override file (default: the packaged collect/tracks_override.json)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    as_json: bool = typer.Option(False, "--json", help="print the reports as JSON"),
) -> None:
    """Collect title, authors, abstract and PDF link of every main-track paper of VENUE in YEAR(s)."""
    # loaded when the command runs, not at the command line's start-up
    from ..collect import collector_for
    from ..collect.http import Fetcher
    from ..collect.tracks import TrackClassifier, load_overrides
    from ..collect.venue_year import collect_venue_year, file_stem
    from ..corpus.venues import venue_code
    from ..labels.track_judge import make_track_judge

    collector = collector_for(venue)          # UsageError for an unknown venue
    code = venue_code(venue)
    ys = parse_years(years)
    root = check_output_dir(out) if out else Workspace.resolve().dir("collect")
    if offline is not None and not offline.is_dir():
        raise UsageError("--offline folder does not exist", path=offline)
    if pdfs is None:
        pdfs = offline is None
    classifier = TrackClassifier(overrides=load_overrides(tracks_override),
                                 judge=make_track_judge(track_judge, root / "track_answers.json"))
    failed = 0
    reports = []
    with Fetcher(cache_dir=None if offline else root / "http-cache", offline=offline, delay=delay,
                 refresh=refresh) as fetcher:
        for y in ys:
            if refresh:
                (root / "state" / f"{file_stem(code, y)}.json").unlink(missing_ok=True)
            rep = collect_venue_year(collector, code, y, fetcher, root, classifier=classifier, pdfs=pdfs,
                                     pdf_dir=pdf_dir, progress=not quiet and sys.stderr.isatty())
            reports.append(rep)
            failed += rep.status == "failed"
            if not as_json:
                typer.echo(summary_line(rep))
                for e in rep.errors[:5]:
                    if e["kind"] != "missing_abstract":
                        typer.echo("  " + shown_line(f"{e['kind']}: {e['key']}: {e['message']}"), err=True)
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in reports], indent=1, ensure_ascii=False))
    if failed:
        bad = ", ".join(f"{r.venue} {r.year}" for r in reports if r.status == "failed")
        raise MustciteError(f"could not collect {bad}: see the report(s) in {root / 'reports'}")


def summary_line(rep) -> str:
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(rep.errors_by_kind.items())) or "none"
    tracks = "; ".join(f"{t} {d['papers']}{'' if d['main'] else ' (not main)'}" for t, d in rep.tracks.items())
    return (f"{rep.venue} {rep.year}: {rep.status}: {rep.collected} collected, {rep.main_track} main track, "
            f"{rep.with_abstract} with abstract, {rep.without_abstract} without, {rep.with_pdf_link} PDF links, "
            f"{rep.pdfs_downloaded} PDFs; {rep.requests} requests, {rep.cache_hits} cached, "
            f"{rep.reused_from_state} resumed; problems: {kinds}\n  tracks: {tracks}\n  records: {rep.records_file}")
