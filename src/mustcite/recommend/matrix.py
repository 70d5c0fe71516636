"""Training rows of the tier models: every candidate of every training query, leave-one-out.

A labelled paper used as a training query is left out of its own neighbours, its citations are
subtracted from the citation counts, and it sees only the papers of its own year or earlier (the
time order of :mod:`.method`), so its rows are exactly those it gets when served with
``exclude_self``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import DataMissingError
from ..labels.papers import TIERS, LabelledPaper
from ..retrieval.base import Doc
from .candidates import CandidateGenerator
from .features import Candidate
from .query import effective_year
from .shared_workers import map_spans, span_workers

#: the features of a query's candidates: ``(query, year, candidates, own tier flags) -> matrix``
Featurize = Callable[[Doc, int, list[Candidate], dict[str, dict[str, int | None]]], np.ndarray]


def training_matrix(candidates: CandidateGenerator, featurize: Featurize, train: list[LabelledPaper], *,
                    batch: int = 64) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Features (``featurize``) of every candidate ``candidates`` gives every ``train`` paper
    (leave-one-out), its label per tier (1/0, -1 where that tier is unknown, and for every row of
    a paper none of whose citations has that tier labelled) and its query's index (``groups``).

    Batches of ``batch`` papers run on forked workers where :func:`.shared_workers.span_workers`
    allows; their query vectors are encoded (and cached) here first, so the workers only read."""
    if not train:
        raise DataMissingError("no training queries")
    parallel = span_workers(-(-len(train) // batch)) > 1
    if parallel and candidates.pool_vecs is not None:
        if candidates.cache_queries:
            candidates.encoder.embed([Doc(p.id, p.title, p.abstract).text for p in train], desc="encoding queries")
        else:
            parallel = False     # each worker would encode its queries afresh: one process instead
    parts = map_spans(_span_rows, (candidates, featurize, train), len(train), batch, desc="training features",
                      parallel=parallel)
    Xs = [x for xs, _, _ in parts for x in xs]
    if not Xs:
        raise DataMissingError("no training query has any candidate")
    ys = {t: [y for _, part, _ in parts for y in part[t]] for t in TIERS}
    return np.vstack(Xs), {t: np.concatenate(v) for t, v in ys.items() if v}, \
        np.concatenate([g for _, _, gs in parts for g in gs])


def _span_rows(shared: tuple[CandidateGenerator, Featurize, list[LabelledPaper]], start: int, end: int,
               ) -> tuple[list[np.ndarray], dict[str, list[np.ndarray]], list[np.ndarray]]:
    """The rows, labels and groups of ``train[start:end]`` (one batch of :func:`training_matrix`)."""
    candidates, featurize, train = shared
    Xs: list[np.ndarray] = []
    ys: dict[str, list[np.ndarray]] = {t: [] for t in TIERS}
    gs: list[np.ndarray] = []
    chunk = train[start:end]
    docs = [Doc(p.id, p.title, p.abstract) for p in chunk]
    # each training query sees only the papers of its own year or earlier, as at serving time
    years = [effective_year(p.year) for p in chunk]
    cands, _, _ = candidates.generate(docs, exclude=[p.id for p in chunk], years=years)
    for k, (p, d, cs, year) in enumerate(zip(chunk, docs, cands, years)):
        if not cs:
            continue
        own = {c.paper_id: c.flags() for c in p.cites}
        Xs.append(featurize(d, year, cs, own if p.id in candidates.nindex.by_id else {}))
        gs.append(np.full(len(cs), start + k, dtype=np.int64))
        # a paper whose citations carry no tier label at all (a bibliography read without its
        # text) teaches "cited" only: its rows are unknown, not negatives, for the other tiers
        known = {t for f in own.values() for t, v in f.items() if v is not None}
        for t in TIERS:
            if t not in known:
                ys[t].append(np.full(len(cs), -1, dtype=np.int64))
                continue
            col = []
            for c in cs:
                f = own.get(c.paper_id)
                if f is None:
                    col.append(0)
                else:
                    col.append(-1 if f[t] is None else int(f[t]))
            ys[t].append(np.asarray(col, dtype=np.int64))
    return Xs, ys, gs
