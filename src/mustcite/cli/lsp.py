"""``mustcite lsp``: the language server for LaTeX projects and BibTeX files, over stdio."""

from __future__ import annotations

import typer

from .. import lazy_libs
from .common import exit_now


def register(app: typer.Typer) -> None:
    app.command("lsp")(lsp_cmd)


def lsp_cmd(
    year: int = typer.Option(None, "--year", help="audit as of this year (default: this year); the client's "
                             "initializationOptions override each option"),
    top: int = typer.Option(10, "--top", min=0, help="missing must-cite papers shown per project"),
    min_score: float = typer.Option(0.5, "--min-score", min=0.0, max=1.0,
                                    help="show a missing paper from this audit score"),
    model: str = typer.Option(None, "--model", help="model folder (default: <work>/models/recommender)"),
    audit: bool = typer.Option(True, "--audit/--no-audit", help="audit the project after each save"),
    stdio: bool = typer.Option(True, "--stdio", hidden=True, help="talk over stdin/stdout (the only transport)"),
) -> None:
    """Language server (LSP) for LaTeX and BibTeX: checked references, undefined keys, missing must-cite papers:
    diagnostics on .bib entries (a field that disagrees with the corpus record, an entry not found
    at a venue-year the corpus holds completely, an entry that cannot be verified offline) and on
    \\cite keys (undefined, or citing such an entry); after each save, the audit's missing must-cite
    papers at the bibliography command. Quick fixes set a field to the record's value and add a
    missing paper's BibTeX to the .bib file. Editors start it as `mustcite lsp`.
    """
    lazy_libs.pygls("mustcite lsp")            # the extra's library, named if missing
    # loaded when the command runs, not at the command line's start-up
    from ..lsp.server import Options, build_server

    code = build_server(Options(year=year, top=top, min_score=min_score, model=model, audit=audit)).start_io()
    exit_now(code, wait_for_threads=False)
