"""Nearest labelled neighbours of a query and the votes they cast for the papers they cite.

A query's similarity to a labelled paper is the mean of BM25 over title + abstract (divided by
the query's best score) and, when the recommender has a dense encoder, the cosine similarity.
Each of the ``k`` nearest votes for every pool paper it cites with ``similarity x tier weight``
(:meth:`CitedPaper.weight`), so must-cite citations count more.
Beyond the nearest ``k``, :meth:`NeighbourIndex.citer_similarity` says how close the query is to
*any* labelled paper citing a candidate (item-based collaborative filtering).

Time order: given the query's year ``Y`` (``years=`` of :meth:`NeighbourIndex.similarities`), a
labelled paper of a later year, or of no known year, gets similarity -1 like the query's own paper,
so it is never a neighbour, a voter, a citer or a co-citer; :meth:`NeighbourIndex.counts` counts
citations among the labelled papers of ``Y`` or earlier only. Papers of the same year ``Y`` are
allowed (a 2024 paper may have read another 2024 paper).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix

from ..io import load_pickle
from ..labels.papers import LabelledPaper
from ..retrieval.base import Doc
from ..retrieval.bm25 import BM25Retriever
from .text import same_paper_title

#: The year array's value for "unknown": later than any query year, so never eligible.
UNKNOWN_YEAR = np.iinfo(np.int32).max


def year_array(years) -> np.ndarray:
    """``years`` (ints, numeric strings or None) as an int32 array, unknown as :data:`UNKNOWN_YEAR`."""
    out = np.full(len(years), UNKNOWN_YEAR, dtype=np.int32)
    for i, y in enumerate(years):
        if y is None or isinstance(y, bool):
            continue
        try:
            v = int(y)
        except (TypeError, ValueError):
            continue
        if 0 < v < UNKNOWN_YEAR:
            out[i] = v
    return out


@dataclass
class Vote:
    """What the neighbours say about one candidate paper."""

    score: float = 0.0            # sum of similarity x weight
    must_score: float = 0.0       # the same, counting must-cite citations only
    count: int = 0                # neighbours citing it
    must_count: int = 0           # neighbours must-citing it
    baseline_count: int = 0       # neighbours citing it as a baseline or dataset (Type I)
    best_sim: float = 0.0
    by: list[tuple[str, float, bool]] = field(default_factory=list)   # (labelled id, sim, must-cite)


class NeighbourIndex:
    """Search labelled papers by title + abstract and turn the nearest into votes."""

    def __init__(self, labelled: list[LabelledPaper], vectors: np.ndarray | None = None):
        self.labelled = labelled
        self.by_id = {p.id: p for p in labelled}
        self._row = {p.id: i for i, p in enumerate(labelled)}
        self._versions = self.version_rows(labelled)
        self.vectors = vectors
        self.years = year_array([p.year for p in labelled])     # for the time order (see the module doc)
        self._counts_cache: dict[int, tuple[dict[str, int], dict[str, int]]] = {}
        self._bm25 = BM25Retriever()
        self._bm25.index([Doc(p.id, p.title, p.abstract) for p in labelled])
        # how often each pool paper is cited / must-cited among all labelled papers
        self.cite_count: dict[str, int] = {}
        self.must_count: dict[str, int] = {}
        citers: dict[str, list[int]] = {}
        must: dict[str, list[bool]] = {}
        #: per labelled paper, what it votes for: (cited pool paper, vote weight, must-cite, Type I)
        self._ballots: dict[str, list[tuple[str, float, bool, bool]]] = {}
        # one string object per cited id, however many papers cite it: the saved index (a pickle)
        # then holds, and a loaded one keeps, each id once
        shared: dict[str, str] = {}
        for row, p in enumerate(labelled):
            ballot = self._ballots.setdefault(p.id, [])
            for c in p.cites:
                pid = shared.setdefault(c.paper_id, c.paper_id)
                self.cite_count[pid] = self.cite_count.get(pid, 0) + 1
                f = c.flags()
                m = bool(f["must_cite"])
                if m:
                    self.must_count[pid] = self.must_count.get(pid, 0) + 1
                citers.setdefault(pid, []).append(row)
                must.setdefault(pid, []).append(m)
                ballot.append((pid, c.weight(f), m, bool(f["type1"])))
        # labelled paper x cited pool paper, 1 where it cites it (for co-citation)

        self.cited_ids = sorted(citers)
        self._col = {pid: j for j, pid in enumerate(self.cited_ids)}
        # labelled rows citing each pool paper, and which of them must-cite it, one flat array in
        # ``cited_ids`` order: the citers of column ``j`` are ``[_citer_start[j], _citer_start[j+1])``
        self._citer_rows = np.asarray([r for pid in self.cited_ids for r in citers[pid]], dtype=np.int64)
        self._citer_must = np.asarray([m for pid in self.cited_ids for m in must[pid]], dtype=bool)
        self._citer_start = np.zeros(len(self.cited_ids) + 1, dtype=np.int64)
        np.cumsum([len(citers[pid]) for pid in self.cited_ids], out=self._citer_start[1:])
        rows_, cols_ = [], []
        for row, p in enumerate(labelled):
            for pid in {c.paper_id for c in p.cites}:
                rows_.append(row)
                cols_.append(self._col[pid])
        self.matrix = csr_matrix((np.ones(len(rows_), dtype=np.float32), (rows_, cols_)),
                                 shape=(len(labelled), len(self.cited_ids)))
        self.matrix_t = self.matrix.T.tocsr()
        mrows, mcols = [], []
        for row, p in enumerate(labelled):
            for pid in {c.paper_id for c in p.cites if c.flags()["must_cite"]}:
                mrows.append(row)
                mcols.append(self._col[pid])
        self.must_matrix_t = csr_matrix((np.ones(len(mrows), dtype=np.float32), (mcols, mrows)),
                                        shape=(len(self.cited_ids), len(labelled)))
        self.degree = np.asarray(self.matrix_t.sum(axis=1), dtype=np.float32).ravel()   # labelled citers

    #: what :meth:`save` leaves out: the labelled papers and vectors (saved with the model) and caches
    _NOT_SAVED = ("labelled", "by_id", "vectors", "_bm25", "_counts_cache", "_versions")

    @staticmethod
    def version_rows(labelled: list[LabelledPaper]) -> dict[str, list[int]]:
        """Other id of a paper (the corpus paper a bibliography is a version of) -> the labelled
        rows that are versions of it."""
        out: dict[str, list[int]] = {}
        for row, p in enumerate(labelled):
            for v in p.versions:
                out.setdefault(v, []).append(row)
        return out

    def own_rows(self, paper_id: str | None) -> list[int]:
        """The labelled rows that are the paper ``paper_id`` under any of its ids: its own row, the
        rows that are versions of it, and the versions of the paper it is a version of."""
        if not paper_id:
            return []
        rows = set(self._versions.get(paper_id, ()))
        if paper_id in self._row:
            row = self._row[paper_id]
            rows.add(row)
            for v in self.labelled[row].versions:
                if v in self._row:
                    rows.add(self._row[v])
                rows.update(self._versions.get(v, ()))
        return sorted(rows)

    def save(self, folder: str | Path) -> None:
        """Write the index's arrays and tables into ``folder`` (read back by :meth:`load`)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self._bm25.save(folder / "bm25")
        with open(folder / "state.pickle", "wb") as fh:
            pickle.dump({k: v for k, v in self.__dict__.items() if k not in self._NOT_SAVED}, fh, protocol=5)

    @classmethod
    def load(cls, folder: str | Path, labelled: list[LabelledPaper],
             vectors: np.ndarray | None = None) -> NeighbourIndex:
        """The index :meth:`save` wrote for these ``labelled`` papers (in the same order)."""
        folder = Path(folder)
        state = load_pickle(folder / "state.pickle")
        if list(state["_row"]) != [p.id for p in labelled]:
            raise ValueError("the saved neighbour index is of other labelled papers")
        new = object.__new__(cls)
        new.__dict__.update(state)
        new.labelled, new.by_id, new.vectors = labelled, {p.id: p for p in labelled}, vectors
        new._versions = cls.version_rows(labelled)
        new._bm25 = BM25Retriever.load(folder / "bm25", mmap=True)
        new._counts_cache = {}
        return new

    def eligible(self, year: int | None) -> np.ndarray | None:
        """Labelled papers a query of ``year`` may use (year <= ``year``; unknown years never);
        None when ``year`` is None (no time order: all of them)."""
        return None if year is None else self.years <= year

    def similarities(self, queries: list[Doc], qvecs: np.ndarray | None,
                     exclude: list[str | None] | None = None,
                     years: list[int | None] | None = None) -> np.ndarray:
        """Similarity of every query to every labelled paper, ``(len(queries), len(labelled))``.

        The mean of BM25 (divided by the query's best score) and, with vectors, the cosine (floored
        at 0). A query's own paper (``exclude``, or the same title) gets -1 and is left out *before*
        BM25 is normalised; so are its other versions (:meth:`own_rows`: a bibliography imported
        under the paper's arXiv id is the query's own reference list too). Under leave-one-out a
        training query's best BM25 hit is itself, and dividing by that score would shrink every
        other similarity (training and serving features would then differ). Likewise, with
        ``years``, the labelled papers a query may not see (later than its year, or of unknown
        year) get -1 and are left out before normalising.
        """
        n = len(self.labelled)
        out = np.zeros((len(queries), n), dtype=np.float32)
        bm = self._bm25.search(queries, k=n)
        use_dense = qvecs is not None and self.vectors is not None
        for i, q in enumerate(queries):
            raw = np.zeros(n, dtype=np.float32)
            hits = bm.get(q.id, [])
            if hits:
                raw[[self._row[pid] for pid, _ in hits]] = [sc for _, sc in hits]
            cos = np.maximum(self.vectors @ qvecs[i], 0.0) if use_dense else None
            ok = self.eligible(years[i]) if years is not None else None
            if ok is not None and not ok.all():
                raw[~ok] = 0.0
                if cos is not None:
                    cos[~ok] = 0.0
            else:
                ok = None
            own = self.own_rows(exclude[i]) if exclude else []
            # the same paper under another id (a draft already labelled): top hits with the same title
            close = raw if cos is None else cos
            for j in np.argsort(-close, kind="stable")[:5]:
                if close[j] > 0 and same_paper_title(self.labelled[int(j)].title, q.title):
                    own.append(int(j))
            raw[own] = 0.0
            top = raw.max()
            out[i] = raw / top if top > 0 else raw
            if cos is not None:
                out[i] = (out[i] + cos) / 2
            out[i, own] = -1.0
            if ok is not None:
                out[i, ~ok] = -1.0
        return out

    def neighbours(self, queries: list[Doc], qvecs: np.ndarray | None, k: int,
                   exclude: list[str | None] | None = None, sims: np.ndarray | None = None,
                   years: list[int | None] | None = None) -> list[list[tuple[str, float]]]:
        """Top ``k`` labelled neighbours per query as ``(labelled id, similarity)``, best first
        (only labelled papers of the query's year or earlier when ``years`` is given)."""
        sims = self.similarities(queries, qvecs, exclude, years) if sims is None else sims
        out = []
        for row in sims:
            top = np.flatnonzero(row > 0)
            top = top[np.lexsort((top, -row[top]))][:k]
            out.append([(self.labelled[int(j)].id, float(row[j])) for j in top])
        return out

    def citer_similarity(self, sims: np.ndarray, paper_id: str) -> tuple[float, float, float]:
        """(best, mean of the best 3, best must-citing) similarity of the query to the labelled
        papers that cite ``paper_id`` (its own paper excluded through ``sims``)."""
        best, top3, must = self.citer_similarities(sims, [paper_id])[0]
        return float(best), float(top3), float(must)

    def citer_similarities(self, sims: np.ndarray, paper_ids: list[str]) -> np.ndarray:
        """:meth:`citer_similarity` of every paper in ``paper_ids`` at once: ``(len(paper_ids), 3)``
        float32, zeros for a paper no usable labelled paper cites."""
        out = np.zeros((len(paper_ids), 3), dtype=np.float32)
        cols = np.fromiter((self._col.get(pid, -1) for pid in paper_ids), dtype=np.int64, count=len(paper_ids))
        have = np.flatnonzero(cols >= 0)
        if not len(have):
            return out
        start, end = self._citer_start[cols[have]], self._citer_start[cols[have] + 1]
        sizes = end - start
        group = np.repeat(np.arange(len(have)), sizes)
        at = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes) + np.repeat(start, sizes)
        s = sims[self._citer_rows[at]].astype(np.float32)
        keep = s >= 0                      # -1: the query's own paper (leave-one-out), or too late
        group, s, must = group[keep], s[keep], self._citer_must[at][keep]
        if not len(s):
            return out
        order = np.lexsort((s, group))      # by candidate, then similarity ascending
        group, s, must = group[order], s[order], must[order]
        last = np.flatnonzero(np.r_[group[1:] != group[:-1], True])          # each group's best
        first = np.r_[0, last[:-1] + 1]
        n = np.minimum(last - first + 1, 3)
        zero = np.float32(0)
        second = np.where(n >= 2, s[np.maximum(last - 1, 0)], zero)
        third = np.where(n >= 3, s[np.maximum(last - 2, 0)], zero)
        rows = have[group[last]]
        out[rows, 0] = s[last]
        # the mean of the best 3, summed smallest first in float32 as numpy.mean sums a sorted array
        out[rows, 1] = ((third + second) + s[last]) / n
        if must.any():
            mrows, ms = group[must], s[must]
            mlast = np.flatnonzero(np.r_[mrows[1:] != mrows[:-1], True])
            out[have[mrows[mlast]], 2] = ms[mlast]
        return out

    def cocitation(self, seeds: list[str], sims: np.ndarray) -> CoCitation:
        """Papers the labelled papers cite together with ``seeds`` (a query's likeliest citations).

        Each labelled paper counts as many times as it cites seeds; the query's own paper (``sims``
        below 0, see :meth:`similarities`) is left out. Per co-cited pool paper: (co-citation count,
        that count over the square root of its labelled citers, labelled papers citing it with at
        least one seed); a seed's co-citation with itself is not counted.
        """
        cols = [self._col[pid] for pid in dict.fromkeys(seeds) if pid in self._col]
        if not cols:
            zero = np.zeros(len(self.cited_ids), dtype=np.float32)
            return CoCitation(self, zero, self.degree, zero)
        per_paper = np.asarray(self.matrix_t[cols].sum(axis=0)).ravel()   # seeds each labelled paper cites
        own = np.flatnonzero(sims < 0)      # its own paper and, under the time order, later papers
        per_paper[own] = 0.0
        co = self.matrix_t @ per_paper
        papers = self.matrix_t @ (per_paper > 0).astype(np.float32)
        degree = self.degree
        if len(own):   # labelled citers the query may use
            degree = self.matrix_t @ (sims >= 0).astype(np.float32)
        co[cols] -= degree[cols]                       # a seed is not co-cited with itself
        papers[cols] = (self.matrix_t @ (per_paper > 1).astype(np.float32))[cols]
        return CoCitation(self, co, degree, papers)

    def counts(self, year: int | None) -> tuple[dict[str, int], dict[str, int]]:
        """(cited, must-cited) counts per pool paper among the labelled papers a query of ``year``
        may use (all of them when ``year`` is None); cached per year."""
        ok = self.eligible(year)
        if ok is None or ok.all():
            return self.cite_count, self.must_count
        got = self._counts_cache.get(year)
        if got is None:
            w = ok.astype(np.float32)
            cite, must = self.matrix_t @ w, self.must_matrix_t @ w
            got = ({self.cited_ids[j]: int(cite[j]) for j in np.flatnonzero(cite)},
                   {self.cited_ids[j]: int(must[j]) for j in np.flatnonzero(must)})
            if len(self._counts_cache) >= 16:
                self._counts_cache.clear()
            self._counts_cache[year] = got
        return got

    def votes(self, neighbours: list[tuple[str, float]]) -> dict[str, Vote]:
        out: dict[str, Vote] = {}
        for nid, sim in neighbours:
            for pid, weight, must, baseline in self._ballots[nid]:
                v = out.setdefault(pid, Vote())
                v.score += sim * weight
                v.count += 1
                if must:
                    v.must_score += sim
                    v.must_count += 1
                v.baseline_count += baseline
                v.best_sim = max(v.best_sim, sim)
                v.by.append((nid, sim, must))
        return out


class CoCitation(Mapping):
    """The co-citation of a query's seeds (:meth:`NeighbourIndex.cocitation`): a read-only mapping
    pool paper id -> (count, count over the square root of its labelled citers, citing papers)
    over the papers with a count above 0, kept as arrays (a query co-cites thousands of papers; only
    its candidates are ever looked up)."""

    def __init__(self, index: NeighbourIndex, co: np.ndarray, degree: np.ndarray, papers: np.ndarray):
        self._ids, self._col = index.cited_ids, index._col
        self._co, self._degree, self._papers = co, degree, papers
        self._nonzero: np.ndarray | None = None

    def _rows(self) -> np.ndarray:
        if self._nonzero is None:
            self._nonzero = np.flatnonzero(self._co > 0)
        return self._nonzero

    def __getitem__(self, paper_id: str) -> tuple[float, float, float]:
        j = self._col.get(paper_id)
        if j is None or not self._co[j] > 0:
            raise KeyError(paper_id)
        co = float(self._co[j])
        return co, float(self._co[j] / np.sqrt(max(self._degree[j], 1.0))), float(self._papers[j])

    def __contains__(self, paper_id: object) -> bool:
        j = self._col.get(paper_id)   # type: ignore[arg-type]
        return j is not None and bool(self._co[j] > 0)

    def __iter__(self) -> Iterator[str]:
        return (self._ids[j] for j in self._rows())

    def __len__(self) -> int:
        return len(self._rows())

    def best(self, k: int, keep: Callable[[str], bool]) -> list[str]:
        """The ``k`` papers with the highest count that ``keep`` accepts; ties by paper id."""
        rows = self._rows()
        out: list[str] = []
        for j in rows[np.lexsort((rows, -self._co[rows]))]:   # column order is paper-id order
            pid = self._ids[j]
            if keep(pid):
                out.append(pid)
                if len(out) == k:
                    break
        return out
