"""Candidate generation: the pool papers considered for each query, with the raw signals of each.

For a query of year ``Y`` (its effective year, :func:`.query.effective_year`):

1. BM25 and (optionally) dense retrieval over the pool papers of year <= ``Y``, fused by reciprocal
   rank (:mod:`.fusion`);
2. its nearest labelled papers (:mod:`.neighbours`) vote for the pool papers they cite; the voted
   papers join the candidates, and so do the papers whose citation contexts in labelled papers
   match the query (:mod:`.contexts`), the papers and works the query names (:mod:`.name_index`:
   "we evaluate on HDTF"), the ``popular_k`` most-cited ones and the papers the labelled papers
   cite together with the likeliest candidates (co-citation);
3. the cited works (no abstract, so step 1 rarely finds one) that a wider circle of nearest
   labelled papers (``work_neighbours``) votes for: the ``work_vote_k`` best not yet candidates.

Every source applies the time order described in :mod:`.method`.
"""

from __future__ import annotations

import heapq
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus.records import normalize_title
from ..extract.works import is_work_id
from ..labels.papers import LabelledPaper
from ..retrieval.base import Doc
from ..retrieval.bm25 import BM25Retriever
from .config import RecommenderConfig
from .contexts import ContextIndex
from .dense_scores import dense_scores
from .features import Candidate
from .fusion import rrf
from .name_index import NameIndex
from .neighbours import NeighbourIndex, year_array
from .pool_table import PoolTable
from .query import effective_year
from .text import same_normalised_title


class CandidateGenerator:
    """The pool and its indexes (BM25, dense vectors, labelled neighbours, citation contexts,
    names), and the candidates they give a query; :meth:`index` builds the indexes, a saved model
    passes them in.

    A copy (``copy.copy``) shares the indexes but not the per-year caches, so a copy's
    ``pool_years`` or ``nindex`` can be replaced."""

    def __init__(self, pool: list[dict[str, Any]] | PoolTable, config: RecommenderConfig, *,
                 bm25: BM25Retriever | None = None, encoder=None, pool_vecs: np.ndarray | None = None,
                 nindex: NeighbourIndex | None = None, cindex: ContextIndex | None = None,
                 names: NameIndex | None = None, cache_queries: bool = True):
        self.config = config
        self.pool = PoolTable.from_records(pool)
        self.row = {pid: i for i, pid in enumerate(self.pool.ids)}
        self.pool_years = year_array(self.pool.column("year"))   # unknown: never eligible
        self.bm25 = bm25
        self.encoder = encoder
        self.pool_vecs = pool_vecs
        self.nindex = nindex
        self.cindex = cindex
        self.names = names
        #: whether query embeddings go to the embedding cache (a model loaded for serving: no)
        self.cache_queries = cache_queries
        self._masks: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
        self._popular_ids: dict[int, list[str]] = {}
        self._titles: dict[int, str] = {}      # row -> normalised title, on first use

    @classmethod
    def index(cls, pool: list[dict[str, Any]] | PoolTable, labelled: list[LabelledPaper], config: RecommenderConfig,
              *, cache_dir: str | Path | None = None) -> CandidateGenerator:
        """Index ``pool`` (BM25; dense vectors when ``config.dense``) and the ``labelled`` papers
        (neighbours, citation contexts, names)."""
        pool = PoolTable.from_records(pool)
        bm25 = BM25Retriever()
        bm25.index([Doc(pid, title or "", abstract or "")
                    for pid, title, abstract in zip(pool.ids, pool.titles, pool.column("abstract"))])
        encoder = pool_vecs = lab_vecs = None
        if config.dense:
            encoder = dense_encoder(cache_dir, {"spec": config.encoder or None,
                                                "max_seq_length": config.max_tokens or None})
            pool_vecs = encoder.embed([Doc(pid, title or "", abstract or "").text
                                       for pid, title, abstract in zip(pool.ids, pool.titles, pool.column("abstract"))],
                                      desc="encoding pool").astype(np.float32)
            if labelled:
                lab_vecs = encoder.embed([Doc(p.id, p.title, p.abstract).text for p in labelled],
                                         desc="encoding labelled papers").astype(np.float32)
        nindex = NeighbourIndex(labelled, lab_vecs)
        return cls(pool, config, bm25=bm25, encoder=encoder, pool_vecs=pool_vecs, nindex=nindex,
                   cindex=ContextIndex(labelled), names=NameIndex(pool, labelled, nindex.years))

    def normalised_title(self, row: int) -> str:
        """The pool paper's title after ``normalize_title`` (worked out on first use, then kept)."""
        got = self._titles.get(row)
        if got is None:
            got = self._titles[row] = normalize_title(self.pool.titles[row] or "")
        return got

    def __copy__(self) -> CandidateGenerator:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._masks, new._popular_ids = {}, {}
        return new

    # ------------------------------------------------------------------ time order
    def pool_mask(self, year: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(pool papers a query of ``year`` may see, the same as float32 BM25 weights or None when
        every pool paper is eligible); cached per year."""
        got = self._masks.get(year)
        if got is None:
            ok = self.pool_years <= year
            got = (ok, None if ok.all() else ok.astype(np.float32))
            if len(self._masks) >= 16:
                self._masks.clear()
            self._masks[year] = got
        return got

    def bm25_search(self, queries: list[Doc], years: list[int], k: int) -> dict[str, list[tuple[str, float]]]:
        """BM25 hits per query among the pool papers of its year or earlier: the scores of later
        papers are zeroed before the top ``k`` is taken (bm25s ``weight_mask``), so every query
        gets up to ``k`` eligible hits. Queries are searched in groups of the same year."""
        by_year: dict[int, list[Doc]] = {}
        for q, y in zip(queries, years):
            by_year.setdefault(y, []).append(q)
        out: dict[str, list[tuple[str, float]]] = {}
        for y, qs in by_year.items():
            out.update(self.bm25.search(qs, k=k, mask=self.pool_mask(y)[1]))
        return out

    def popular(self, year: int) -> list[str]:
        """The ``popular_k`` pool papers of ``year`` or earlier most cited by the labelled papers
        of ``year`` or earlier (generic must-cites: optimisers, architectures, datasets), always
        considered."""
        if year not in self._popular_ids:
            counts = self.nindex.counts(year)[0]
            ok = self.pool_mask(year)[0]
            ids = [pid for pid in counts if pid in self.row and ok[self.row[pid]]]
            self._popular_ids[year] = sorted(ids, key=lambda pid: (-counts[pid], pid))[: self.config.popular_k]
        return self._popular_ids[year]

    # ------------------------------------------------------------------ candidates
    def generate(self, queries: list[Doc], exclude: list[str | None] | None = None,
                 years: list[int | None] | None = None, extra: list[list[str]] | None = None,
                 ) -> tuple[list[list[Candidate]], list[list[tuple[str, float]]], np.ndarray | None]:
        """(candidates, labelled neighbours ``(id, similarity)``, query vectors or None) per query,
        from the papers of its year (``years``; None: today's) or earlier. ``exclude``: each
        query's own labelled paper (leave-one-out), left out of its neighbours. ``extra``: more pool
        paper ids per query to consider (source ``"references"``: what an audited draft's
        bibliography points to), under the same time order."""
        cfg = self.config
        years = [effective_year(y) for y in (years or [None] * len(queries))]
        bm = self.bm25_search(queries, years, cfg.first_k) if "bm25" not in cfg.disable else {}
        qvecs = None
        if self.pool_vecs is not None:
            texts = [q.text for q in queries]
            # training and evaluation reuse cached query embeddings; a served model encodes every
            # query afresh (honest latency, and users' drafts do not pile up in the cache)
            vecs = self.encoder.embed(texts, desc="encoding queries") if self.cache_queries else \
                self.encoder.encode(texts)
            qvecs = np.asarray(vecs, dtype=np.float32)
        sims = self.nindex.similarities(queries, qvecs, exclude, years)
        neigh = self.nindex.neighbours(queries, qvecs, cfg.neighbours, exclude, sims=sims)
        wide = self.nindex.neighbours(queries, qvecs, cfg.work_neighbours, exclude, sims=sims) \
            if cfg.work_vote_k and "neighbours" not in cfg.disable else [[] for _ in queries]
        ctx = self.cindex.search(queries, exclude=exclude, years=years) \
            if self.cindex is not None and "contexts" not in cfg.disable else [{} for _ in queries]
        dense = dense_scores(self.pool_vecs, qvecs) if qvecs is not None else None
        out = []
        for i, q in enumerate(queries):
            ok, weights = self.pool_mask(years[i])   # weights None: every pool paper is eligible
            runs: dict[str, list[tuple[str, float]]] = {}
            if "bm25" not in cfg.disable:
                runs["bm25"] = bm.get(q.id, [])
            cos = None
            if dense is not None:
                cos = next(dense)
                masked = cos if weights is None else np.where(ok, cos, -np.inf)   # later papers never rank
                k = min(cfg.first_k, len(cos) if weights is None else int(ok.sum()))
                top = np.argpartition(-masked, min(k, len(cos) - 1))[:k]
                top = top[np.lexsort((top, -masked[top]))]
                ids = self.pool.ids
                runs["dense"] = [(ids[int(j)], float(cos[j])) for j in top]
            cands: dict[str, Candidate] = {}
            for name, ranked in runs.items():
                for rank, (pid, s) in enumerate(ranked, 1):
                    c = cands.setdefault(pid, Candidate(pid, self.row[pid]))
                    setattr(c, name, (s, rank))
                    c.sources.append(name)
            for pid, s in rrf(runs, k=cfg.rrf_k):
                cands[pid].rrf = s
            votes = self.nindex.votes(neigh[i]) if "neighbours" not in cfg.disable else {}
            votes = {pid: v for pid, v in votes.items() if ok[self.row[pid]]}   # a later paper never joins
            for pid, _ in heapq.nsmallest(cfg.vote_k, votes.items(), key=lambda kv: (-kv[1].score, kv[0])):
                c = cands.setdefault(pid, Candidate(pid, self.row[pid]))
                c.sources.append("neighbours")
            for pid in ([] if "popularity" in cfg.disable else self.popular(years[i])):
                cands.setdefault(pid, Candidate(pid, self.row[pid])).sources.append("popular")
            matches = ctx[i]
            for pid in heapq.nsmallest(cfg.context_k, (p for p in matches if ok[self.row[p]]),
                                       key=lambda p: matches[p].rank):
                cands.setdefault(pid, Candidate(pid, self.row[pid])).sources.append("contexts")
            named = self.names.named(q.text, years[i], self.pool_years, exclude=exclude[i] if exclude else None) \
                if self.names is not None and "names" not in cfg.disable else {}
            for pid, hit in named.items():
                c = cands.setdefault(pid, Candidate(pid, self.row[pid]))
                c.sources.append("names")
                c.named = hit
            if cfg.cocite_seeds and "cocitation" not in cfg.disable:
                self._add_cocited(cands, self._seeds(cands, votes), sims[i], ok)
            if wide[i]:
                self._add_voted_works(cands, wide[i], ok)
            for pid in (extra[i] if extra else ()):
                if pid in self.row and ok[self.row[pid]]:
                    cands.setdefault(pid, Candidate(pid, self.row[pid])).sources.append("references")
            total_sim = sum(sim for _, sim in neigh[i]) or 1.0
            citer = self.nindex.citer_similarities(sims[i], list(cands)).tolist()
            for (pid, c), cs in zip(cands.items(), citer):
                if pid in votes:
                    c.vote = votes[pid]
                    c.vote_share = votes[pid].score / total_sim
                if cos is not None:
                    c.dense_cos = float(cos[c.row])
                if pid in matches:
                    c.context = matches[pid]
                c.citer = tuple(cs)
            # the query's own paper (a draft already in the corpus) is never its own must-cite; the
            # year check is a safety net (every source above is already restricted)
            own_title = normalize_title(q.title)
            out.append([c for c in cands.values() if ok[c.row]
                        and not same_normalised_title(self.normalised_title(c.row), own_title)])
        return out, neigh, qvecs

    def _seeds(self, cands: dict[str, Candidate], votes: dict[str, Any]) -> list[str]:
        """The query's likeliest citations by the untrained score (fused rank + votes): no learned
        model is involved, so the features built on them need no cross-fitting in training."""
        cheap = {pid: c.rrf * 30 + (votes[pid].score if pid in votes else 0.0) for pid, c in cands.items()}
        seeds = heapq.nsmallest(self.config.cocite_seeds, cheap, key=lambda pid: (-cheap[pid], pid))
        for rank, pid in enumerate(seeds, 1):
            cands[pid].seed_rank = rank
        return seeds

    def _add_voted_works(self, cands: dict[str, Candidate], wide: list[tuple[str, float]], ok: np.ndarray) -> None:
        """Add the cited works (of the query's year or earlier: ``ok``) the labelled papers ``wide``
        vote for (summed similarity x tier weight), the ``work_vote_k`` best not yet candidates."""
        votes = self.nindex.votes(wide)
        works = ((pid, v.score) for pid, v in votes.items()
                 if pid not in cands and is_work_id(pid) and ok[self.row[pid]])
        for pid, _ in heapq.nsmallest(self.config.work_vote_k, works, key=lambda kv: (-kv[1], kv[0])):
            cands[pid] = Candidate(pid, self.row[pid], sources=["work votes"])

    def _add_cocited(self, cands: dict[str, Candidate], seeds: list[str], sims: np.ndarray,
                     ok: np.ndarray) -> None:
        """Add and annotate the papers (of the query's year or earlier: ``ok``) the labelled papers
        (of the query's year or earlier: ``sims`` >= 0) cite together with ``seeds``."""
        co = self.nindex.cocitation(seeds, sims)
        for pid in co.best(self.config.cocite_k, lambda p: p not in cands and ok[self.row[p]]):
            cands[pid] = Candidate(pid, self.row[pid], sources=["cocitation"])
        for pid, c in cands.items():
            if pid in co:
                c.cocite = co[pid]


def dense_encoder(cache_dir: str | Path | None, meta: dict[str, Any] | None = None):
    """The dense encoder a saved model's metadata (or a config's spec) names; MiniLM by default."""
    from ..retrieval.dense import dense_from_meta  # the dense retrieval modules load only when asked for

    meta = dict(meta or {})
    if meta.get("model_path") and not Path(meta["model_path"]).is_dir() and not meta.get("spec"):
        meta.pop("model_path")    # the shipped MiniLM of another environment: use this one's
    return dense_from_meta(meta, cache_dir=cache_dir)
