"""Reading a built benchmark folder (``mustcite benchmark build``), in the style of ir_datasets::

    bench = Benchmark.open("<work>/benchmarks/neurips-2024")
    bench.pool()                              # [{"paper_id", "title", "abstract", "venue", "year"}, ...]
    bench.queries("dev")                      # [{"id", "title", "abstract", "year", "venue", "source"}, ...]
    bench.qrels("dev")                        # {ground truth: {qid: {paper_id: relevance}}}
    bench.evaluate(run, "dev", "mustcite")    # {metric: mean over the dev queries}

The folder layout is described in :mod:`.build`. A file the folder lacks raises
:class:`~mustcite.errors.DataMissingError` naming it.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ..corpus.pool import load_pool
from ..errors import DataMissingError
from ..io import iter_jsonl
from .evaluate import METRICS, evaluate
from .recipes import SPLITS
from .trec import Qrels, Run, read_qrels

_HINT = "run `mustcite benchmark build` first"


class Benchmark:
    """A built benchmark: its pool, queries and qrels per split, labels and manifest."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @classmethod
    def open(cls, path: str | Path) -> Benchmark:
        """The benchmark in folder ``path``; DataMissingError when there is no such folder."""
        path = Path(path)
        if not path.is_dir():
            raise DataMissingError("no benchmark folder", path=path, hint=_HINT)
        return cls(path)

    @property
    def name(self) -> str:
        """The folder's name (the recipe name unless built with ``--out``)."""
        return self.path.name

    def _file(self, relative: str, what: str) -> Path:
        path = self.path / relative
        if not path.is_file():
            raise DataMissingError(f"benchmark {what} not found", path=path, hint=_HINT)
        return path

    @cached_property
    def manifest(self) -> dict[str, Any]:
        """``manifest.json``: recipe, pool snapshot, split sizes, counts, checksums."""
        return json.loads(self._file("manifest.json", "manifest").read_text(encoding="utf-8"))

    # ------------------------------------------------------------------ pool
    def pool_file(self) -> Path:
        return self._file("pool.parquet", "pool")

    def pool(self) -> list[dict[str, Any]]:
        """The pool papers as dicts (:func:`~mustcite.corpus.pool.load_pool`)."""
        return load_pool(self.pool_file())

    def pool_ids(self) -> set[str]:
        return set(pq.read_table(self.pool_file(), columns=["paper_id"]).column("paper_id").to_pylist())

    # ------------------------------------------------------------------ queries and qrels
    def splits(self) -> list[str]:
        """The splits that have a queries file: train, dev, test (those present), then any other."""
        have = {p.name[:-len(".jsonl")] for p in (self.path / "queries").glob("*.jsonl")}
        return [s for s in SPLITS if s in have] + sorted(have - set(SPLITS))

    def queries_file(self, split: str) -> Path:
        return self._file(f"queries/{split}.jsonl", f"split {split}")

    def queries(self, split: str) -> list[dict[str, Any]]:
        """The split's queries, ``{"id", "title", "abstract", "year", ...}`` in file order."""
        return [obj for _, obj in iter_jsonl(self.queries_file(split))]

    def qrels_file(self, split: str, ground_truth: str) -> Path:
        return self._file(f"qrels/{split}.{ground_truth}.qrels", f"qrels of {split}/{ground_truth}")

    def qrels(self, split: str, ground_truths: tuple[str, ...] | list[str] | None = None) -> dict[str, Qrels]:
        """``{ground truth: {qid: {paper_id: relevance}}}`` of the split: the given ground truths
        (each file must exist), else every one the folder has (in file-name order)."""
        if ground_truths is None:
            prefix = f"{split}."
            ground_truths = [f.name[len(prefix):-len(".qrels")]
                             for f in sorted((self.path / "qrels").glob(f"{split}.*.qrels"))]
        return {gt: read_qrels(self.qrels_file(split, gt)) for gt in ground_truths}

    def labels(self) -> list[dict[str, Any]]:
        """``labels.jsonl``: one row per (query, cited pool paper) with the ground-truth flags."""
        return [obj for _, obj in iter_jsonl(self._file("labels.jsonl", "labels"))]

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, run: Run, split: str, ground_truth: str,
                 metrics: tuple[str, ...] = METRICS) -> dict[str, float]:
        """Mean metrics of ``run`` (``{qid: {paper_id: score}}``) against the split's qrels of
        ``ground_truth`` (:func:`.evaluate.evaluate`)."""
        return evaluate(run, self.qrels(split, [ground_truth])[ground_truth], metrics)
