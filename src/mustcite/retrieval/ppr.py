"""KTR-like retrieval: personalised PageRank on the bibliographic graph (:mod:`.graph`).

A query has no edge into the graph (cold start). Its restart distribution is spread over its
``seeds`` nearest labelled papers by MiniLM cosine (weights proportional to the cosine), and, with
``pool_weight`` > 0, that share over its ``pool_seeds`` nearest pool papers. The walk follows the
undirected typed edges (``cites``, ``writes``, ``venue``, ``keyword``): from a node it first picks
an edge type in proportion to :attr:`PPRParams.weights` (among the types the node has), then an
edge of that type uniformly; it restarts with probability ``alpha``. Pool papers are ranked by
their stationary mass (power iteration on a scipy sparse matrix, all queries of a batch at once);
papers without mass follow by cosine. Nodes of a later year than the query are removed from the
walk and never scored. No training: the graph (built from TRAIN queries and earlier labelled
papers) and the parameters (chosen on dev) are the model, saved by :func:`save_ppr`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix, diags
from tqdm.auto import tqdm

from ..errors import UsageError
from ..io import atomic_write_json
from .base import Results, as_docs
from .graph import EDGE_TYPES, MODEL_FILE, BiblioGraph, encoder_for, query_year, read_model, text_neighbours
from .memory import peak_rss_mb


@dataclass
class PPRParams:
    alpha: float = 0.3                 # restart probability
    seeds: int = 20                    # nearest labelled papers in the restart distribution
    pool_seeds: int = 20               # nearest pool papers ...
    pool_weight: float = 0.0           # ... and their share of the restart mass
    iterations: int = 30
    weights: dict[str, float] = field(default_factory=lambda: {"cites": 1.0, "writes": 0.3, "venue": 0.05,
                                                                "keyword": 0.3})


class PPRWalk:
    """The transition matrix of a graph (per query year) and the power iteration."""

    def __init__(self, graph: BiblioGraph, weights: dict[str, float]):
        self.graph = graph
        self.weights = {t: float(weights.get(t, 0.0)) for t in EDGE_TYPES}
        c = graph.counts()
        self.offset = {"paper": 0, "author": c["paper"], "venue": c["paper"] + c["author"],
                       "keyword": c["paper"] + c["author"] + c["venue"]}
        self.n = sum(c.values())
        self._cache: dict[Any, Any] = {}

    def _edges(self, t: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Paper-side and other-side global node ids of edge type ``t``, and the paper node."""
        e = self.graph.edges[t]
        if t == "cites":
            return e[0], e[1], e[0]
        if t == "writes":
            return e[1], e[0] + self.offset["author"], e[1]
        return e[0], e[1] + self.offset[t], e[0]

    def transition_t(self, year: int | None):
        """``P^T`` (column-stochastic where a node has edges) for a query of ``year``."""
        key = year
        if key in self._cache:
            return self._cache[key]
        ok = self.graph.upto(year)
        total = None
        rowsum = np.zeros(self.n, dtype=np.float64)
        for t in EDGE_TYPES:
            w = self.weights[t]
            if w <= 0 or not self.graph.edges[t].shape[1]:
                continue
            a, b, paper = self._edges(t)
            keep = ok[paper] & (ok[b] if t == "cites" else True)
            a, b = a[keep], b[keep]
            rows = np.concatenate([a, b])
            cols = np.concatenate([b, a])
            adj = csr_matrix((np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(self.n, self.n))
            deg = np.asarray(adj.sum(axis=1)).ravel()
            has = deg > 0
            inv = np.where(has, w / np.maximum(deg, 1e-12), 0.0)
            part = diags(inv) @ adj
            total = part if total is None else total + part
            rowsum += np.where(has, w, 0.0)
        if total is None:
            raise UsageError("PPR: every edge type has weight 0")
        inv = np.where(rowsum > 0, 1.0 / np.maximum(rowsum, 1e-12), 0.0)
        pt = (diags(inv) @ total).T.tocsr().astype(np.float32)
        dangling = rowsum == 0
        self._cache[key] = (pt, dangling)
        return pt, dangling

    def run(self, restart: np.ndarray, year: int | None, alpha: float, iterations: int) -> np.ndarray:
        """Stationary mass ``(nodes, queries)`` for restart columns ``(nodes, queries)``."""
        pt, dangling = self.transition_t(year)
        x = restart.copy()
        for _ in range(iterations):
            lost = x[dangling].sum(axis=0, keepdims=True)
            x = alpha * restart + (1 - alpha) * (pt @ x + restart * lost)
        return x


class PPRRetriever:
    """The KTR-like retriever over a saved graph model folder (see :func:`save_ppr`)."""

    name = "ktr-ppr"

    def __init__(self, model_dir: str | Path, *, params: PPRParams | None = None,
                 cache_dir: str | Path | None = None, batch: int = 128):
        self.model_dir = Path(model_dir)
        meta = read_model(self.model_dir, "ppr")
        self.graph = BiblioGraph.load(self.model_dir)
        self.params = params or PPRParams(**meta.get("params", {}))
        self._encoder, self._cache_dir = None, cache_dir
        self.batch = batch
        self.walk = PPRWalk(self.graph, self.params.weights)
        self.candidates = np.arange(self.graph.n_pool)
        self.seconds = 0.0

    def index(self, pool) -> None:
        self.candidates = self.graph.pool_nodes(pool, self.model_dir, "mustcite benchmark train-graph")

    def restart(self, qvecs: np.ndarray, years: list[int | None]) -> np.ndarray:
        """Restart distributions ``(nodes, queries)``: nearest labelled (and pool) papers."""
        p, g = self.params, self.graph
        s = np.zeros((self.walk.n, len(qvecs)), dtype=np.float32)
        lab = text_neighbours(g, qvecs, years, p.seeds, nodes=np.unique(g.citing_node))
        pool = text_neighbours(g, qvecs, years, p.pool_seeds, nodes=self.candidates) if p.pool_weight > 0 else None
        for i in range(len(qvecs)):
            parts = [(lab[i], 1.0 - p.pool_weight)] + ([(pool[i], p.pool_weight)] if pool is not None else [])
            for hits, share in parts:
                w = np.array([max(sim, 0.0) for _, sim in hits], dtype=np.float64)
                if not len(w) or share <= 0:
                    continue
                w = w / w.sum() if w.sum() > 0 else np.full(len(w), 1.0 / len(w))
                for (n, _), wi in zip(hits, w):
                    s[n, i] += share * wi
            if s[:, i].sum() == 0:               # nothing of its year to start from
                s[:, i] = 0.0
        return s

    @property
    def encoder(self):
        """The graph's text encoder (made on first use: a query text not in the cache needs it)."""
        if self._encoder is None:
            self._encoder = encoder_for(self.graph.config, self._cache_dir)
        return self._encoder

    def search(self, queries, k: int = 100) -> Results:
        t0 = time.perf_counter()
        qs = as_docs(queries, id_key="id")
        qvecs = self.encoder.embed([q.text for q in qs], desc="encoding queries")
        out = self.search_vectors([q.id for q in qs], qvecs, [query_year(q) for q in queries], k)
        self.seconds = time.perf_counter() - t0
        return out

    def search_vectors(self, ids: list[str], qvecs: np.ndarray, years: list[int | None], k: int = 100) -> Results:
        """Top ``k`` pool papers for queries given by their text vectors and years."""
        out: Results = {}
        cand = self.candidates
        k = max(1, min(int(k), len(cand)))
        order = sorted(range(len(ids)), key=lambda i: (years[i] is None, years[i] or 0))
        for b in tqdm(range(0, len(order), self.batch), desc="personalised PageRank", disable=len(order) <= self.batch):
            idx = order[b:b + self.batch]
            for year in dict.fromkeys(years[i] for i in idx):
                sub = [i for i in idx if years[i] == year]
                s = self.restart(qvecs[sub], [year] * len(sub))
                # the walk's mass minus the restart share itself: a seed that is a pool paper (a labelled
                # paper of an earlier year) is not ranked first just for being a neighbour
                mass = (self.walk.run(s, year, self.params.alpha, self.params.iterations)
                        - self.params.alpha * s)[cand]
                cos = qvecs[sub] @ self.graph.vectors[cand].T
                ok = self.graph.upto(year)[cand]
                for j, i in enumerate(sub):
                    score = mass[:, j].astype(np.float64) + 1e-9 * cos[j]
                    score[~ok] = -np.inf
                    kk = min(k, int(ok.sum()))
                    top = np.argpartition(-score, kk - 1)[:kk] if kk else np.zeros(0, np.int64)
                    top = top[np.argsort(-score[top], kind="stable")]
                    out[ids[i]] = [(self.graph.paper_ids[cand[t]], float(score[t])) for t in top]
        return out

    def save(self, path: str | Path) -> None:
        save_ppr(self.graph, self.params, path, card={"copied_from": str(self.model_dir)})

    def metadata(self) -> dict[str, Any]:
        return {"method": "ppr", "name": self.name, "model": str(self.model_dir), "params": asdict(self.params),
                "graph": self.graph.sizes(), "encoder": self.graph.config.encoder,
                "max_seq_length": self.graph.config.max_seq_length, "fields": "title + abstract (query cold start)",
                "docs": int(len(self.candidates))}


def save_ppr(graph: BiblioGraph, params: PPRParams, folder: str | Path, card: dict[str, Any] | None = None) -> Path:
    folder = Path(folder)
    graph.save(folder)
    atomic_write_json(folder / MODEL_FILE, {"kind": "ppr", "params": asdict(params), "card": card or {},
                                            "graph": graph.sizes()})
    return folder


def train_ppr_model(graph: BiblioGraph, params: PPRParams, out: str | Path, *, note: str = "") -> dict[str, Any]:
    """Save the KTR-like model (the graph + the walk's parameters); returns its card."""

    card = {"method": "KTR-like personalised PageRank", "trained_on": note or graph.info.get("benchmark", ""),
            "graph": graph.sizes(), "graph_seconds": graph.info.get("seconds"), "params": asdict(params),
            "peak_rss_mb": peak_rss_mb()}
    save_ppr(graph, params, out, card)
    return card
