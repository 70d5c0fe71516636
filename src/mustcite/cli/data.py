"""``mustcite data list [--json]`` and ``mustcite data check [ID] [--json]``.

``check`` verifies that every file of a dataset is present and, where a manifest gives one, that its
sha256 matches; exit 1 when a file is missing or differs, 2 for an unknown dataset id.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..config import find_data_dir
from ..errors import DataMissingError, MustciteError

data_app = typer.Typer(help="Datasets mustcite reads: where they are, where to get them, are they intact.",
                       no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")


def _data_dir_or_none() -> Path | None:
    try:
        return find_data_dir()
    except DataMissingError:
        return None


@data_app.command("list")
def list_cmd(as_json: bool = typer.Option(False, "--json", help="print the registry as JSON")) -> None:
    """Every dataset: id, what it is, where it is here, and its pinned public source."""
    # loaded when the command runs, not at the command line's start-up
    from ..datasets import DATASETS, dataset_files

    data_dir = _data_dir_or_none()
    rows = []
    for ds in DATASETS.values():
        present = data_dir is not None and (data_dir / ds.files[0]).is_file()
        files = dataset_files(ds.id, data_dir)
        rows.append({"id": ds.id, "description": ds.description, "folder": ds.folder,
                     "present": present, "license": ds.license, "used_by": ds.used_by,
                     "sources": ds.source_urls(), "n_files": len(files),
                     "files": [f.to_dict() for f in files]})
    if as_json:
        typer.echo(json.dumps({"data_dir": str(data_dir) if data_dir else None, "datasets": rows}, indent=1))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Datasets (data dir: {data_dir or 'not found'})")
    table.add_column("id", no_wrap=True)
    table.add_column("here", no_wrap=True)
    table.add_column("files", justify="right")
    table.add_column("description")
    table.add_column("source (repo@commit)", no_wrap=True)
    for ds, r in zip(DATASETS.values(), rows):
        table.add_row(r["id"], "yes" if r["present"] else "NO", str(r["n_files"]), r["description"],
                      "\n".join(f"{repo}@{commit[:10]}" for repo, commit in ds.sources))
    Console().print(table)


@data_app.command("check")
def check_cmd(
    dataset_id: str = typer.Argument(None, help="dataset id (default: all)"),
    as_json: bool = typer.Option(False, "--json", help="print the results as JSON"),
    no_verify: bool = typer.Option(False, "--no-verify", help="presence only, skip sha256"),
) -> None:
    """Verify presence and sha256 of a dataset's files (exit 1 if anything is missing or differs)."""
    # loaded when the command runs, not at the command line's start-up
    from ..datasets import DATASETS, check, get_dataset

    ids = [get_dataset(dataset_id).id] if dataset_id else list(DATASETS)
    data_dir = find_data_dir()
    results = [check(i, data_dir, verify=not no_verify) for i in ids]
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in results], indent=1))
    else:
        for r in results:
            status = "ok" if r.ok else "FAILED"
            typer.echo(f"{r.dataset}: {status} ({r.files} files, {r.verified} sha256 verified, "
                       f"{len(r.missing)} missing, {len(r.mismatched)} mismatched)")
            for p in r.missing[:10]:
                typer.echo(f"  missing: {p}")
            for p in r.mismatched[:10]:
                typer.echo(f"  sha256 mismatch: {p}")
    bad = [r for r in results if not r.ok]
    if bad:
        hints = "; ".join(f"{r.dataset}: {get_dataset(r.dataset).how_to_get()}" for r in bad)
        raise MustciteError(f"{len(bad)} dataset(s) incomplete or changed in {data_dir}", hint=hints)
