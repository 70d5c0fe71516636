"""``mustcite check-refs FILE...``: is each bibliography entry a real paper, cited correctly?

Each FILE is a ``.bib``, a ``.bbl``, a LaTeX project (a ``.tex`` file or folder), its ``.zip`` /
``.tar.gz`` archive, or a draft (.pdf, .tei.xml, Markdown) whose reference list is read as
``audit`` reads it. Each entry is answered verified, outdated, mismatch, not_found or unverifiable against
``<work>/corpus`` (papers and the catalogue of cited works), and each block that could not be read is
answered unreadable; nothing goes online. File names may follow ``--`` (``check-refs -- --odd.bib``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from ..errors import MustciteError, UsageError
from ..io import check_output_file
from ..shown import shown_line
from .common import write_report


def register(app: typer.Typer) -> None:
    app.command("check-refs")(check_refs_cmd)


def check_refs_cmd(
    files: list[Path] = typer.Argument(..., metavar="FILE...", help="one or more: a .bib or .bbl file, a LaTeX .tex "
                                       "file / project folder / .zip / .tar.gz archive, or a draft (.pdf, .tei.xml, "
                                       ".md/.mmd[.gz]); their entries are reported in order"),
    fmt: str = typer.Option("table", "--format", help="table | json (one JSON object per entry, in input order) | "
                                                      "markdown"),
    fail_on: str = typer.Option(None, "--fail-on", help="exit 1 after the report when an entry is: not_found; "
                                                        "mismatch (a mismatch or a not_found); or outdated (any of "
                                                        "the three: the strictest gate). outdated entries fail only "
                                                        "--fail-on outdated; unreadable entries fail every level; "
                                                        "unverifiable entries never fail"),
    out: Path = typer.Option(None, "--out", help="write the report to this file (default: standard output); "
                                                 "never one of the input files"),
    citations: Path = typer.Option(None, "--citations", help="reference lists of other papers (a papers.jsonl[.xz] "
                                   "of .bbl files, as citations_cs768 of the data; default $MUSTCITE_CITATIONS): an "
                                   "entry no record holds that 3 papers cite the same way is verified; read once, "
                                   "then cached. Default: the table `mustcite works consensus` built into the work "
                                   "folder, when there"),
    no_citations: bool = typer.Option(False, "--no-citations", help="check without the consensus of citing papers"),
) -> None:
    """Check every entry of a bibliography against the corpus: title, authors (order and count), year,
    venue and identifiers. Statuses: verified; outdated (an arXiv preprint or a workshop version is
    cited where a published version exists, nothing else wrong: the report gives the published
    version and its BibTeX); mismatch (a record is found and a field is wrong: each issue names the
    field, the entry's value and the record's); not_found (the venue-year is one the corpus is
    measured to hold completely, in every track the entry could belong to, and no record matches:
    very likely invented or misattributed); unverifiable (an arXiv
    preprint, a journal, workshop or venue-year the corpus does not hold, a proceedings volume:
    cannot verify offline); unreadable (a block that could not be read: a brace error, a field over
    64 KiB, a title over 200 words; every --fail-on level fails on it). A file of more than 10,000
    entries is refused. File names may follow "--", so that one starting with "-" is a file."""
    # loaded when the command runs, not at the command line's start-up
    from ..refcheck import FAIL_ON, fail_statuses
    from ..refcheck.check import check_entries
    from ..refcheck.entries import read_entries
    from ..refcheck.index import load_index
    from ..refcheck.render import FORMATS, render, summary

    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    if out:
        check_output_file(out)
        _not_an_input(out, files)
    # every file is read (and refused when it cannot be, or holds too many entries) before the
    # index is loaded and any entry is checked
    read = [read_entries(file) for file in files]
    # an entry that cannot be read is reported without the index: none needs it, none is loaded
    if no_citations and citations is not None:
        raise UsageError("--citations and --no-citations exclude each other")
    wanted = any(not e.unreadable for entries, _ in read for e in entries)
    index = load_index(citations=False if no_citations else citations) if wanted else None
    checks = []
    for entries, messages in read:
        checks.extend(check_entries(entries, index))
        for m in messages:
            print(f"note: {shown_line(m)}", file=sys.stderr)
    text = render(checks, fmt)
    write_report(text, out)
    if fmt != "table":
        print(summary(checks), file=sys.stderr)
    if fail_on is not None:
        gate = fail_statuses(fail_on)
        bad = [c for c in checks if c.status in gate]
        if bad:
            raise MustciteError(f"check-refs failed: {len(bad)} entr{'y' if len(bad) == 1 else 'ies'} "
                                f"{' or '.join(gate)}: " + ", ".join(c.key for c in bad[:10])
                                + (" ..." if len(bad) > 10 else ""), path=files[0] if len(files) == 1 else None)


def _not_an_input(out: Path, files: list[Path]) -> None:
    """A UsageError when ``out`` is one of the input files (the same path once resolved, or the same
    file by another name): the report would overwrite what it reports on."""
    target = out.resolve()
    for f in files:
        same = f.resolve() == target
        if not same and out.exists() and f.exists():
            try:
                same = os.path.samefile(out, f)
            except OSError:
                same = False
        if same:
            raise UsageError(f"--out is the input file {f}; write the report elsewhere", path=out)
