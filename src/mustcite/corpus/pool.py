"""Pool files: the candidate papers a retriever indexes, read from a corpus or benchmark Parquet
file or a JSONL file, with the columns retrieval, its output and the recommender read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ..errors import DataMissingError, MustciteError
from ..io import iter_jsonl

#: the columns of a pool paper that retrieval, its output and the recommender read
POOL_COLUMNS = ("paper_id", "title", "abstract", "authors", "venue", "year", "url", "pdf")
#: the columns a pool of papers and cited works adds: what each entry is (``paper``, ``dataset``,
#: ``software``, ``book``, ``web page``) and the year it was published (``year`` is then the year
#: from which a query may see it)
WORK_COLUMNS = ("kind", "published")


def load_pool(path: str | Path, years: tuple[int, int] | None = None) -> list[dict[str, Any]]:
    """Pool papers from a Parquet (corpus or benchmark pool) or JSONL file, as dicts with the
    :data:`POOL_COLUMNS` (and :data:`WORK_COLUMNS`) the file has; ``years=(first, last)`` keeps papers
    of those years."""
    path = Path(path)
    if not path.is_file():
        raise DataMissingError(f"pool file {path} does not exist",
                               hint="build the corpus (`mustcite corpus build`) or the benchmark "
                                    "(`mustcite benchmark build`), or pass --pool FILE")
    if path.suffix == ".parquet":
        try:
            names = pq.read_schema(path).names
            table = pq.read_table(path, columns=[c for c in POOL_COLUMNS + WORK_COLUMNS if c in names])
        except Exception as exc:  # pyarrow raises several types for corrupt files
            raise MustciteError(f"cannot read Parquet: {exc}", path=path) from None
        if "paper_id" not in table.column_names or "title" not in table.column_names:
            raise MustciteError("pool Parquet needs columns paper_id and title", path=path)
        rows = table.to_pylist()
    else:
        rows = []
        for lineno, obj in iter_jsonl(path):
            if not obj.get("paper_id") or not isinstance(obj.get("title"), str):
                raise MustciteError("pool record needs 'paper_id' and 'title'", path=path, line=lineno)
            rows.append(obj)
    if years:
        rows = [r for r in rows if r.get("year") and years[0] <= r["year"] <= years[1]]
    return rows
