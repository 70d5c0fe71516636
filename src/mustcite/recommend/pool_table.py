"""The recommender's pool as columns: what ranking reads for every candidate, without one Python
dict per paper.

A query looks at a few hundred of the pool's ~140,000 entries and shows twenty, so a loaded model
keeps the pool in an Arrow file mapped from disk (:meth:`PoolTable.open`): the short columns every
candidate needs (``paper_id``, ``title``, ``year``, ``venue``, ``kind``, ``published``, whether it
has an abstract) are read once into lists, and a whole record (abstract, authors, url, ...) is read
only for the rows a caller asks for (``table[row]``). A pool being built or trained on wraps its
records as they are (:meth:`PoolTable.from_records`).

``table[row]`` is a dict of the record's fields, ``len(table)`` its size; iterating gives every
record (for saving, never for ranking).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

#: the column of a written table saying whether each entry has an abstract (not part of a record)
HAS_ABSTRACT = "has_abstract"


class PoolTable(Sequence):
    """The pool papers (and cited works), by row."""

    def __init__(self, records: list[dict[str, Any]] | None = None, table: Any = None):
        self._records = records
        self._table = table
        self._columns: dict[str, list[Any]] = {}
        n = len(records) if records is not None else table.num_rows
        self._size = n
        self._has_abstract: np.ndarray | None = None

    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def from_records(cls, records: list[dict[str, Any]] | PoolTable) -> PoolTable:
        """``records`` (dicts with at least ``paper_id``) as a table; a table is returned as it is."""
        if isinstance(records, PoolTable):
            return records
        return cls(records=list(records))

    @classmethod
    def open(cls, path: str | Path) -> PoolTable:
        """The table in an Arrow file written by :meth:`write`, mapped from disk (not read)."""
        source = pa.memory_map(str(path), "r")      # stays open: the table's buffers are its pages
        return cls(table=pa.ipc.open_file(source).read_all())

    def write(self, path: str | Path, columns: Sequence[str]) -> None:
        """Write ``columns`` of every record as an uncompressed Arrow file (for :meth:`open`), with
        whether each has an abstract (so a loaded table never reads the abstracts to know)."""
        table = pa.Table.from_pylist([{k: p.get(k) for k in columns} for p in self])
        table = table.append_column(HAS_ABSTRACT, pa.array(self.has_abstract))
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)

    # ---- the sequence of records ----------------------------------------------------------------
    def __len__(self) -> int:
        return self._size

    def __getitem__(self, row: int) -> dict[str, Any]:   # type: ignore[override]
        if self._records is not None:
            return self._records[row]
        if not -self._size <= row < self._size:
            raise IndexError(row)
        return self._record(self._table.slice(row % self._size, 1).to_pylist()[0])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self._records is not None:
            return iter(self._records)
        return (self._record(rec) for batch in self._table.to_batches() for rec in batch.to_pylist())

    @staticmethod
    def _record(row: dict[str, Any]) -> dict[str, Any]:
        row.pop(HAS_ABSTRACT, None)
        return row

    def read_into_memory(self) -> None:
        """Read a mapped table's pages now (every column), so that showing a record never waits on disk."""
        if self._table is not None:
            for column in self._table.columns:
                for chunk in column.chunks:
                    for buf in chunk.buffers():
                        if buf is not None:
                            np.frombuffer(buf, dtype=np.uint8).sum()

    # ---- columns ----------------------------------------------------------------------------------
    def column(self, name: str) -> list[Any]:
        """Every entry's ``name`` (None where absent), as a list; kept after the first call."""
        got = self._columns.get(name)
        if got is None:
            if self._records is not None:
                got = [p.get(name) for p in self._records]
            elif name in self._table.column_names:
                got = self._table.column(name).to_pylist()
            else:
                got = [None] * self._size
            self._columns[name] = got
        return got

    @property
    def ids(self) -> list[str]:
        return self.column("paper_id")

    @property
    def titles(self) -> list[str | None]:
        return self.column("title")

    @property
    def has_abstract(self) -> np.ndarray:
        """Whether each entry has a non-empty abstract (bool array)."""
        if self._has_abstract is None:
            if self._records is not None:
                self._has_abstract = np.fromiter((bool(p.get("abstract")) for p in self._records),
                                                 dtype=bool, count=self._size)
            elif HAS_ABSTRACT in self._table.column_names:
                self._has_abstract = self._table.column(HAS_ABSTRACT).to_numpy(zero_copy_only=False).astype(bool)
            elif "abstract" in self._table.column_names:
                import pyarrow.compute as pc  # ~40 ms: the recommender imports this module at start-up

                lengths = pc.utf8_length(self._table.column("abstract")).fill_null(0)
                self._has_abstract = np.asarray(lengths.to_numpy(zero_copy_only=False)) > 0
            else:
                self._has_abstract = np.zeros(self._size, dtype=bool)
        return self._has_abstract
