"""Benchmark data for methods that learn: the pool, the train queries as labelled papers, the
earlier labelled papers of reference folders, and the dev/test splits they are scored on.

Dev and test queries never become labelled papers: they are matched out by id and by normalised
title, and extra labelled papers come only from before the earliest query year.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..corpus.records import normalize_title
from ..extract.works import WorkIndex
from ..labels.papers import LabelledPaper, from_qrels, load_reference_dirs, read_citing_text
from .loader import Benchmark


@dataclass
class BenchmarkData:
    """What a train-only recommender of a built benchmark sees, and what it is scored on."""

    pool: list[dict[str, Any]]
    train: list[LabelledPaper]          # the train queries, with their qrels as labels
    extra: list[LabelledPaper]          # --refs papers from before the query year (neighbours)
    splits: dict[str, tuple[list[dict[str, Any]], dict[str, dict[str, dict[str, int]]]]]

    @property
    def labelled(self) -> list[LabelledPaper]:
        return self.train + self.extra


def benchmark_data(bench: str | Path, refs: list[str | Path] = ()) -> BenchmarkData:
    """Pool, train queries (as labelled papers), extra labelled papers and dev/test of ``bench``."""
    b = Benchmark.open(bench)
    pool = b.pool()
    # a benchmark with works (v3): labelled papers cite the works their unlinked references name
    manifest = b.manifest if (b.path / "manifest.json").is_file() else {}
    catalogue = (manifest.get("works") or {}).get("catalogue")
    works = WorkIndex.load(catalogue) if catalogue else None
    pool_ids = {p["paper_id"] for p in pool}
    names = ["train", "dev"] + (["test"] if "test" in b.splits() else [])
    splits = {s: (b.queries(s), b.qrels(s)) for s in names}
    train_q, train_qrels = splits["train"]
    held_q = [q for name in ("dev", "test") if name in splits for q in splits[name][0]]
    held = {str(q["id"]) for q in held_q}
    train = from_qrels(train_q, train_qrels, source=f"{b.name}:train")
    if refs:   # a train query's citation contexts, from its reference file (queries name it as "source")
        source = {str(q["id"]): str(q.get("source") or "") for q in train_q}
        found = read_citing_text(list(refs), set(source.values()) - {""}, pool_ids, works)
        for p in train:
            text = found.get(source.get(p.id, ""))
            if text is not None:
                p.contexts, p.names = text.contexts, text.names
    # a reference folder names papers by file stem, the benchmark by corpus paper_id: match on the
    # normalised title too, so no dev/test query leaks in and no train query counts twice
    held_titles = {normalize_title(q.get("title")) for q in held_q}
    known = {p.id for p in train} | {normalize_title(p.title) for p in train}
    extra = [p for p in load_reference_dirs(list(refs), pool_ids, works)
             if p.ids().isdisjoint(held) and normalize_title(p.title) not in held_titles] if refs else []
    extra = [p for p in extra if p.ids().isdisjoint(known) and normalize_title(p.title) not in known]
    # as in MasterSet, extra labelled papers come from before the query year (the pool's years)
    query_years = [q.get("year") for q in train_q + held_q if isinstance(q.get("year"), int)]
    if query_years:
        extra = [p for p in extra if p.year is None or p.year < min(query_years)]
    return BenchmarkData(pool, train, extra, splits)
