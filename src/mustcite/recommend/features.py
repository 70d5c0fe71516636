"""Reranker features: one row per (query, candidate) from fusion, neighbour votes and metadata.

Missing values are NaN (the gradient-boosted models in :mod:`.tiers` handle them natively).
:func:`feature_matrix` gives a query's candidates their rows, with the citation counts
leave-one-out and the features of switched-off signals (:data:`.config.ABLATABLE`) at 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..extract.works import is_work_id
from ..retrieval.base import Doc
from .config import ABLATABLE
from .contexts import ContextMatch
from .name_index import NameHit
from .neighbours import NeighbourIndex, Vote
from .pool_table import PoolTable
from .text import overlap, terms

FEATURES: tuple[str, ...] = (
    "bm25_score", "bm25_rr", "dense_cos", "dense_rr", "rrf",
    "vote_score", "vote_must_score", "vote_count", "vote_must_count", "vote_best_sim",
    "log_cite_count", "log_must_count", "year_gap", "venue_neurips", "venue_icml", "venue_iclr",
    "title_overlap", "title_terms_matched", "has_abstract",
    "vote_share", "citer_max_sim", "citer_top3_sim", "must_citer_max_sim",
    "cocite_log", "cocite_norm", "cocite_papers", "seed_rank",
    "context_best", "context_top3", "context_citers", "context_rr",
    "is_work", "kind_dataset", "kind_software", "kind_book",
    "name_support", "name_in_title",
)


@dataclass
class Candidate:
    """A pool paper considered for one query, with the raw signals the features come from."""

    paper_id: str
    row: int                                   # row in the pool table
    bm25: tuple[float, int] | None = None      # (score, 1-based rank)
    dense: tuple[float, int] | None = None
    dense_cos: float = float("nan")
    rrf: float = 0.0
    vote: Vote = field(default_factory=Vote)
    vote_share: float = 0.0                    # vote score / summed similarity of the neighbours
    citer: tuple[float, float, float] = (0.0, 0.0, 0.0)   # NeighbourIndex.citer_similarity
    cocite: tuple[float, float, float] = (0.0, 0.0, 0.0)  # NeighbourIndex.cocitation
    seed_rank: int = 0                         # 1-based rank among the co-citation seeds (0: not one)
    context: ContextMatch = field(default_factory=ContextMatch)   # citation-context match (contexts.py)
    named: NameHit | None = None               # the query names it (names.py)
    sources: list[str] = field(default_factory=list)


def feature_row(c: Candidate, *, query_year: int | None, cand_year: int | None, venue: str,
                has_abstract: bool, query_terms: set[str], title_terms: set[str],
                cite_count: int, must_count: int, kind: str | None = None) -> list[float]:
    """One candidate's features; ``kind`` is set for a cited work outside the corpus (``paper``,
    ``dataset``, ``software``, ``book``, ``web page``) and None for a corpus paper."""
    gap = float(query_year - cand_year) if query_year and cand_year else float("nan")
    v = c.vote
    return [
        c.bm25[0] if c.bm25 else 0.0, 1.0 / c.bm25[1] if c.bm25 else 0.0,
        c.dense_cos, 1.0 / c.dense[1] if c.dense else 0.0, c.rrf,
        v.score, v.must_score, float(v.count), float(v.must_count), v.best_sim,
        math.log1p(max(cite_count, 0)), math.log1p(max(must_count, 0)), gap,
        float(venue == "NeurIPS"), float(venue == "ICML"), float(venue == "ICLR"),
        overlap(query_terms, title_terms), float(len(query_terms & title_terms)), float(has_abstract),
        c.vote_share, *c.citer,
        math.log1p(c.cocite[0]), c.cocite[1], c.cocite[2], 1.0 / c.seed_rank if c.seed_rank else 0.0,
        c.context.best, c.context.top3, math.log1p(c.context.citers),
        1.0 / c.context.rank if c.context.rank else 0.0,
        float(kind is not None), float(kind == "dataset"), float(kind == "software"), float(kind == "book"),
        math.log1p(c.named.support) if c.named else 0.0, float(bool(c.named and c.named.from_title)),
    ]


def as_matrix(rows: list[list[float]]) -> np.ndarray:
    return np.asarray(rows, dtype=np.float64).reshape(-1, len(FEATURES))


def feature_matrix(q: Doc, year: int, cands: list[Candidate], own: dict[str, dict[str, int | None]], *,
                   pool: PoolTable, title_terms: Sequence[set[str]], nindex: NeighbourIndex,
                   disable: tuple[str, ...] = ()) -> np.ndarray:
    """Feature matrix of ``cands`` for a query of ``year`` (its effective year). ``own``: the
    tier flags of the query's own citations when the query is itself a labelled paper of
    ``nindex`` (leave-one-out: they are subtracted from the citation counts, which count the
    labelled papers of ``year`` or earlier). ``title_terms``: the title stems of each pool paper;
    ``disable``: signals whose features are set to 0."""
    qt = set(terms(q.text))
    cite_count, must_count = nindex.counts(year)
    if own:   # subtracted only where the query's own paper is among those counted
        lab = nindex._row.get(q.id)
        if lab is None or not nindex.years[lab] <= year:
            own = {}
    rows = []
    years, published, venues, kinds = (pool.column(k) for k in ("year", "published", "venue", "kind"))
    has_abstract = pool.has_abstract
    for c in cands:
        f = own.get(c.paper_id)
        cc = cite_count.get(c.paper_id, 0) - (f is not None)
        mc = must_count.get(c.paper_id, 0) - bool(f and f["must_cite"])
        # a cited work's age is its publication year's (its pool year is when queries may see it)
        r = c.row
        cand_year = published[r] if published[r] is not None else years[r]
        rows.append(feature_row(c, query_year=year, cand_year=cand_year,
                                venue=venues[r] or "", has_abstract=bool(has_abstract[r]),
                                query_terms=qt, title_terms=title_terms[r], cite_count=cc, must_count=mc,
                                kind=kinds[r] if is_work_id(c.paper_id) else None))
    X = as_matrix(rows)
    masked = [FEATURES.index(f) for sig in disable for f in ABLATABLE[sig]]
    if masked:
        X[:, masked] = 0.0
    return X
