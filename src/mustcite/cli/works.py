"""``mustcite works build``: the catalogue of cited works beside the corpus papers.

Exit codes: 0 ok, 1 bad or missing data (message names the file), 2 usage.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..engine import make_engine
from ..errors import MustciteError, UsageError
from .common import workspace
from .extract import address_option, engine_option

works_app = typer.Typer(help="The catalogue of cited works: references that link to no corpus paper, "
                             "one record per work.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(works_app, name="works")


@works_app.command("build")
def build_cmd(
    folders: list[Path] = typer.Argument(None, help="extraction folders, linked (and labelled) "
                                                    "(default: <work>/extract)"),
    out: Path = typer.Option(None, "--out", "-o", help="where the tables go (default: <work>/corpus)"),
    workers: int = typer.Option(None, "--workers", "-w", min=1, help="worker processes (default: CPU count)"),
    engine: str = engine_option(),
    address: str = address_option(),
    as_json: bool = typer.Option(False, "--json", help="print the build figures as JSON"),
) -> None:
    """Resolve every unlinked reference to a work (identifiers, then titles with first author and
    year) and mine the names citing papers give corpus papers and works; write works.parquet,
    work_citations.parquet, names.parquet and works.json."""
    # loaded when the command runs, not at the command line's start-up
    from ..extract.works import build_catalogue

    eng = make_engine(engine, address, workers=workers)
    ws = workspace()
    folders = list(folders or [ws.root / "extract"])
    for f in folders:
        if not f.is_dir():
            raise UsageError(f"{f} is not a folder (an extraction folder of `mustcite extract --out`)")
    s = build_catalogue(folders, out or ws.root / "corpus", workers=workers, progress=not as_json, engine=eng)
    if s.papers == 0:
        raise MustciteError("no reference files in the extraction folders", path=folders[0],
                            hint="run `mustcite extract PATH... --out DIR` and `mustcite link DIR` first")
    if as_json:
        typer.echo(json.dumps(s.to_dict(), indent=1))
        return
    cov = s.coverage
    kinds = ", ".join(f"{n:,} {k}" for k, n in s.by_kind.items())
    typer.echo(f"{s.works:,} works ({kinds}) from {s.unlinked_references:,} unlinked references of "
               f"{s.papers:,} papers in {s.elapsed_s:.1f} s; {s.cited_by_two_or_more:,} cited by two or more papers")
    typer.echo(f"must-cite references a corpus paper or a work (cited by another paper too) can stand for: "
               f"{cov['must_cite_share_covered']:.1%} (corpus papers alone: {cov['must_cite_share_linked']:.1%})")
    n = s.names
    typer.echo(f"names citing papers give them: {n['names']:,} for {n['corpus_papers']:,} corpus papers and "
               f"{n['works']:,} works (\"CIFAR-10 [23]\", \"HDTF [35]\")")
    typer.echo(f"written: {(out or ws.root / 'corpus')}/works.parquet, work_citations.parquet, names.parquet, "
               "works.json")


@works_app.command("mentions")
def mentions_cmd(
    folder: Path = typer.Argument(None, help="a linked extraction folder (default: <work>/extract)"),
    corpus: Path = typer.Option(None, "--corpus", help="the folder of the catalogue of cited works and the corpus "
                                                       "(default: <work>/corpus)"),
    out: Path = typer.Option(None, "--out", "-o", help="where the table goes (default: <work>/mentions)"),
    split: Path = typer.Option(None, "--split", help="a split file of held-out papers (default: the seeded split "
                                                     "of the papers' years)"),
    workers: int = typer.Option(None, "--workers", "-w", min=1, help="worker processes (default: CPU count)"),
    force: bool = typer.Option(False, "--force", help="rebuild even when the inputs are unchanged"),
    engine: str = engine_option(),
    address: str = address_option(),
    as_json: bool = typer.Option(False, "--json", help="print the figures as JSON"),
) -> None:
    """Find every occurrence, in the full texts, of every name the train papers give a cited work,
    with its form, place, neighbours and whether the paper cites the work there; write
    mentions.parquet and mentions.json."""
    from ..extract.works.mention_table import build_mention_table

    eng = make_engine(engine, address, workers=workers)
    ws = workspace()
    folder = folder or ws.root / "extract"
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder (an extraction folder of `mustcite extract --out`)")
    out = out or ws.root / "mentions"
    s = build_mention_table(folder, corpus or ws.root / "corpus", out, split_file=split, workers=workers,
                            progress=not as_json, engine=eng, force=force)
    if as_json:
        typer.echo(json.dumps(s.to_dict(), indent=1))
        return
    typer.echo(f"{s.mentions:,} mentions ({s.rows:,} rows with their candidate works) of {s.surface_forms:,} forms "
               f"in {s.papers_ok:,} of {s.papers:,} papers{' (up to date)' if s.cached else ''}; cited in the "
               f"sentence: {s.share_cited_sentence:.1%}, anywhere: {s.share_cited_paper:.1%}")
    typer.echo(f"written: {out}/mentions.parquet, mentions.json")


@works_app.command("fit-mentions")
def fit_mentions_cmd(
    table: Path = typer.Argument(None, help="a mention table (default: <work>/mentions/mentions.parquet)"),
    out: Path = typer.Option(None, "--out", "-o", help="the model folder (default: <work>/models/mentions)"),
    seed: int = typer.Option(0, "--seed", help="the seed of the fit"),
    work_only: bool = typer.Option(False, "--work-only", help="fit only the per-work decisions the audit uses "
                                                               "(not the per-mention models)"),
    as_json: bool = typer.Option(False, "--json", help="print the held-out scores as JSON"),
) -> None:
    """Count link probability and commonness over the train papers and fit the confidence that the
    field cites a named work at the mention (and anywhere) and, per work a paper names, that it cites
    it (what `mustcite audit` reports); score them on the held-out papers. The folder also gets the
    statistics a draft is served with and the lexicon."""
    from ..io import read_json
    from ..recommend.mention_model import LABELS, WORK_LABELS, train_mention_models

    ws = workspace()
    table = table or ws.root / "mentions" / "mentions.parquet"
    out = out or ws.root / "models" / "mentions"
    summary = read_json(table.parent / "mentions.json", missing_ok=True) or {}
    models = train_mention_models(table, out, seed=seed, labels=() if work_only else LABELS,
                                  inputs={"table": str(table), "inputs_key": summary.get("inputs_key")})
    held = {label: m.card["held_out"] for label, m in models.items()}
    for label in WORK_LABELS:
        held[label] = read_json(out / label / "card.json")["held_out"]
    if as_json:
        typer.echo(json.dumps(held, indent=1))
        return
    for label, h in held.items():
        typer.echo(f"{label}: held-out Brier {h['brier']:.4f} (base rate {h['brier_base_rate']:.4f}), "
                   f"AUC {h['auc']}, {h['rows']:,} rows")
    typer.echo(f"written: {out}/")


@works_app.command("consensus")
def consensus_cmd(
    source: Path = typer.Argument(None, help="reference lists of other papers: a papers.jsonl[.xz] of .bbl files "
                                             "(default: <data>/citations_cs768/papers.jsonl.xz)"),
    out: Path = typer.Option(None, "--out", "-o", help="the corpus folder it goes to (default: <work>/corpus)"),
    workers: int = typer.Option(None, "--workers", "-w", min=1,
                                help="worker processes (default: CPU count, 4 at most)"),
    force: bool = typer.Option(False, "--force", help="rebuild even when the table is current"),
) -> None:
    """The consensus of citing papers: read every reference-list item once and keep, per title, how
    each paper cites it (first author, year); written to consensus.pickle, which check-refs, its Python
    API and the language server then use by default (check-refs --no-citations turns it off). Skipped
    when the table was built from the same file (same checksum)."""
    from ..config import find_data_dir
    from ..refcheck.consensus import CONSENSUS_FILE, build_file, built_meta, is_current

    source = source or find_data_dir() / "citations_cs768" / "papers.jsonl.xz"
    if not source.is_file():
        raise MustciteError(f"no reference lists at {source}", path=source,
                            hint="pass a papers.jsonl(.xz) of .bbl files, as citations_cs768 of the data")
    corpus = out or workspace().root / "corpus"
    if not force and is_current(source, corpus):
        typer.echo(f"consensus of citing papers up to date: {corpus / CONSENSUS_FILE}")
        return
    try:
        meta = build_file(source, corpus, workers)
    except (OSError, ValueError, EOFError) as e:
        raise MustciteError(f"cannot build the consensus of citing papers: {e}", path=source) from None
    meta = built_meta(corpus) or meta
    typer.echo(f"{meta['items']:,} reference items of {meta['papers']:,} papers ({meta['titles']:,} titles) read in "
               f"{meta['elapsed_s']} s -> {corpus / CONSENSUS_FILE}")
