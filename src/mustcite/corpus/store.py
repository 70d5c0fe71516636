"""The corpus store: ``<work>/corpus/papers.parquet`` (+ ``build.json``), read with DuckDB.

Columns are the :class:`~mustcite.corpus.records.Paper` fields (``authors`` and ``source_ids`` as
``list<string>``) plus ``title_norm`` (:func:`normalize_title` of the title, for exact-title
linking). Writes go to a temporary file in the same folder and are renamed into place, so a failed
build never damages the store that was there before.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from ..config import Workspace
from ..errors import DataMissingError, UsageError
from ..io import process_running
from .records import VENUES, Paper, normalize_title

__all__ = ["BUILD_FILE", "DISAGREEMENTS_FILE", "PAPERS_FILE", "SIDE_TRACKS_FILE", "VERSIONS_FILE", "CorpusStore",
           "corpus_dir", "disagreements_table", "iter_papers", "load_papers", "papers_path", "require_store",
           "write_papers", "write_table"]

PAPERS_FILE = "papers.parquet"
BUILD_FILE = "build.json"
#: the records the corpus leaves out: ancillary tracks of the 15 venues (workshops, demos, Findings,
#: Datasets & Benchmarks) and every other venue (journals such as TMLR, conferences such as WACV),
#: each with its ``venue`` and ``track``; same columns as ``papers.parquet``
SIDE_TRACKS_FILE = "side_tracks.parquet"
#: version links between records of the two files (:mod:`mustcite.corpus.versions`)
VERSIONS_FILE = "versions.parquet"
#: where the sources of one corpus paper disagree (title, year, authors)
DISAGREEMENTS_FILE = "disagreements.parquet"

DISAGREEMENTS_SCHEMA = pa.schema([
    ("paper_id", pa.string()), ("venue", pa.string()), ("year", pa.int32()), ("field", pa.string()),
    ("kind", pa.string()), ("kept", pa.string()), ("kept_source", pa.string()),
    ("values", pa.map_(pa.string(), pa.string())),
])

SCHEMA = pa.schema([
    ("paper_id", pa.string()), ("title", pa.string()), ("abstract", pa.string()),
    ("authors", pa.list_(pa.string())), ("venue", pa.string()), ("year", pa.int32()),
    ("source", pa.string()), ("source_id", pa.string()), ("url", pa.string()),
    ("pdf", pa.string()), ("track", pa.string()), ("source_ids", pa.list_(pa.string())),
    ("also_published", pa.list_(pa.string())), ("doi", pa.string()),
    ("field_sources", pa.map_(pa.string(), pa.string())), ("title_norm", pa.string()),
])
PAPER_COLUMNS = [f for f in SCHEMA.names if f != "title_norm"]


def _arrow(con: duckdb.DuckDBPyConnection, sql: str, params: list) -> pa.Table:
    """Run ``sql`` and return a pyarrow Table (``to_arrow_table`` in DuckDB 2, ``arrow`` before)."""
    rel = con.sql(sql, params=params)
    fn = getattr(rel, "to_arrow_table", None) or rel.arrow
    return fn()


def corpus_dir(work: str | Path | Workspace | None = None) -> Path:
    """``<work>/corpus`` (not created)."""
    if isinstance(work, Workspace):
        return work.root / "corpus"
    return Workspace.resolve(work).root / "corpus"


def papers_path(work: str | Path | Workspace | None = None) -> Path:
    return corpus_dir(work) / PAPERS_FILE


def papers_to_table(papers: Iterable[Paper]) -> pa.Table:
    cols: dict[str, list] = {name: [] for name in SCHEMA.names}
    for p in papers:
        for name in PAPER_COLUMNS:
            v = getattr(p, name)
            cols[name].append(sorted(v.items()) if name == "field_sources" else v)
        cols["title_norm"].append(normalize_title(p.title))
    return pa.Table.from_pydict(cols, schema=SCHEMA)


def disagreements_table(rows: Sequence[dict]) -> pa.Table:
    return pa.Table.from_pylist([{**r, "values": sorted(r["values"].items())} for r in rows],
                                schema=DISAGREEMENTS_SCHEMA)


def _temp_file(path: Path) -> str:
    """A new temporary file beside ``path``, ``.<name>.<pid>.<random>.tmp``, after removing those an
    earlier write of ``path`` left behind when it was killed: of a process that is no longer
    running (or of this one: a pid reused after the kill), or without a pid (older versions)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for old in path.parent.glob(f".{path.name}.*.tmp"):
        pid = old.name[len(path.name) + 2:-len(".tmp")].partition(".")[0]
        if pid.isdigit() and int(pid) != os.getpid() and process_running(int(pid)):
            continue              # a write in progress in another process
        try:
            old.unlink()
        except OSError:
            pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    os.close(fd)
    return tmp


def write_table(table: pa.Table, path: Path) -> None:
    """Atomically write one Arrow table as Parquet (temp file in the same folder, then rename)."""
    _write_atomic(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def _write_atomic(path: Path, write) -> None:
    """``write(tmp)`` into a temporary file beside ``path``, given the user's umask, then renamed
    into place; the temporary file is removed when writing fails."""
    tmp = _temp_file(path)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_papers(papers: Sequence[Paper], path: Path, *, batch_size: int = 20_000) -> None:
    """Atomically write the Parquet file (temp file in the same folder, then rename).

    Papers are converted and written in batches, so peak memory stays near one batch of Arrow data.
    """
    def write(tmp: str) -> None:
        with pq.ParquetWriter(tmp, SCHEMA, compression="zstd") as writer:
            for start in range(0, max(len(papers), 1), batch_size):
                writer.write_table(papers_to_table(papers[start:start + batch_size]))

    _write_atomic(path, write)


def require_store(work: str | Path | Workspace | None = None) -> Path:
    path = papers_path(work)
    if not path.is_file():
        raise DataMissingError(f"no corpus store at {path}",
                               hint="run `mustcite corpus build` first (it reads proceedings/ in the data dir)")
    return path


def _papers_sql(path: Path) -> str:
    """A query of the store's rows with every column of :data:`SCHEMA` (a store written before a
    column existed reads it as empty)."""
    have = set(pq.read_schema(path).names)

    def empty(t: pa.DataType) -> str:
        if pa.types.is_list(t):
            return "CAST([] AS VARCHAR[])"
        if pa.types.is_map(t):
            return "CAST(MAP {} AS MAP(VARCHAR, VARCHAR))"
        return "CAST(NULL AS VARCHAR)"

    extra = "".join(f", {empty(f.type)} AS {f.name}" for f in SCHEMA if f.name not in have)
    return f"(SELECT *{extra} FROM read_parquet('{str(path).replace(chr(39), chr(39) * 2)}'))"


def _where(years: Sequence[int] | None, venues: Sequence[str] | None) -> tuple[str, list]:
    clauses, params = [], []
    if years is not None:
        years = list(years)
        clauses.append(f"year IN ({', '.join('?' for _ in years)})" if years else "FALSE")
        params += [int(y) for y in years]
    if venues is not None:
        venues = list(venues)
        bad = [v for v in venues if v not in VENUES]
        if bad:
            raise UsageError(f"unknown venue(s): {', '.join(bad)}; known: {', '.join(VENUES)}")
        clauses.append(f"venue IN ({', '.join('?' for _ in venues)})" if venues else "FALSE")
        params += venues
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def load_papers(work: str | Path | Workspace | None = None, years: Sequence[int] | None = None,
                venues: Sequence[str] | None = None, columns: Sequence[str] | None = None) -> pa.Table:
    """The corpus (optionally only some years / venues / columns) as a pyarrow Table."""
    path = require_store(work)
    cols = list(columns) if columns else SCHEMA.names
    unknown = [c for c in cols if c not in SCHEMA.names]
    if unknown:
        raise UsageError(f"unknown column(s): {', '.join(unknown)}; known: {', '.join(SCHEMA.names)}")
    where, params = _where(years, venues)
    sql = f"SELECT {', '.join(cols)} FROM {_papers_sql(path)}{where}"
    with duckdb.connect() as con:
        return _arrow(con, sql, params)


def iter_papers(work: str | Path | Workspace | None = None, years: Sequence[int] | None = None,
                venues: Sequence[str] | None = None) -> list[Paper]:
    """The corpus as :class:`Paper` objects."""
    return [Paper.from_dict(row) for row in load_papers(work, years, venues, PAPER_COLUMNS).to_pylist()]


class CorpusStore:
    """Look-ups in a built corpus: by paper id and by (normalised) title."""

    def __init__(self, work: str | Path | Workspace | None = None):
        self.path = require_store(work)
        self._con = duckdb.connect()
        self._con.execute(f"CREATE VIEW papers AS SELECT * FROM {_papers_sql(self.path)}")

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> CorpusStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return self._con.execute("SELECT count(*) FROM papers").fetchone()[0]

    def _papers(self, sql: str, params: list) -> list[Paper]:
        cur = self._con.execute(f"SELECT {', '.join(PAPER_COLUMNS)} FROM papers WHERE {sql}", params)
        names = [d[0] for d in cur.description]
        return [Paper.from_dict(dict(zip(names, row))) for row in cur.fetchall()]

    def get(self, paper_id: str) -> Paper | None:
        found = self._papers("paper_id = ?", [paper_id])
        return found[0] if found else None

    def by_title(self, title: str, venue: str | None = None, year: int | None = None) -> list[Paper]:
        """Papers whose normalised title equals that of ``title`` (optionally in one venue/year)."""
        sql, params = "title_norm = ?", [normalize_title(title)]
        if venue is not None:
            sql += " AND venue = ?"
            params.append(venue)
        if year is not None:
            sql += " AND year = ?"
            params.append(int(year))
        return self._papers(sql + " ORDER BY venue, year, paper_id", params)

    def query(self, sql: str, params: list | None = None) -> pa.Table:
        """Run SQL against the ``papers`` view (read only use)."""
        return _arrow(self._con, sql, params or [])
