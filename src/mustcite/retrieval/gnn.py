"""AR-GNN/LitFM-like retrieval: an inductive heterogeneous GNN over the bibliographic graph (:mod:`.graph`).

Architecture (SeHGNN-style: neighbour aggregation precomputed, transformation learnt). Each paper is
described by mean aggregations of MiniLM text vectors along metapaths of the graph, computed with
``torch_geometric.nn.SimpleConv(aggr="mean")``: the cited (candidate) side by its own text ``x``,
its text neighbours ``S`` (incoming ``similar`` edges: the ``similar_k`` nearest papers by text),
its keywords ``K`` (paper-keyword-paper), authors ``A`` (paper-author-paper), venue ``V`` and its
citers ``C`` (the labelled papers citing it); the citing (query) side by ``x``, ``S``, ``K`` and
``SR``, the references of its text neighbours (query-similar-paper-cites-paper). Author, venue and
keyword nodes carry the mean vector of their papers, so nothing is an id embedding and a new paper
needs only its text. Per side: one linear map per metapath, semantic attention over the metapaths,
``layers`` residual MLP layers, L2 norm; scores are cosines over a temperature.

Cold start, inductive: a query is a NEW paper whose only relations are its text neighbours and
keywords; it never has a citation edge. Training views each labelled paper the same way (itself
excluded from its neighbours), and the citers ``C`` of the candidates are computed without the
citation edges of the training fold the batch comes from (5 folds), so a paper never sees its own
citations among the features. Objective: sampled softmax cross-entropy (each cited pool paper a
positive; the batch's positives plus ``negatives`` random pool papers of its year or earlier as
candidates; its own node masked), Adam. Trained on the graph's labelled papers (benchmark TRAIN
queries + labelled papers of earlier years), nothing else. Time order: features, candidates and
neighbours of a query of year ``Y`` use papers of year <= ``Y`` only.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from .. import lazy_libs
from ..errors import MustciteError
from ..io import atomic_write_json
from .base import Results, as_docs
from .graph import MODEL_FILE, BiblioGraph, encoder_for, query_year, read_model, text_neighbours
from .memory import peak_rss_mb

#: metapaths of each side (see the module doc)
QUERY_PATHS = ("x", "S", "K", "SR")
POOL_PATHS = ("x", "S", "K", "A", "V", "C")
FOLDS = 5


def require_pyg():
    """torch (torch_geometric imported), or a MissingLibraryError saying how to install them."""
    torch = lazy_libs.torch("the GNN retriever")
    lazy_libs.torch_geometric("the GNN retriever")
    return torch


@dataclass
class GNNParams:
    hidden: int = 128
    layers: int = 2
    similar_k: int = 10
    epochs: int = 10
    batch: int = 128
    negatives: int = 4096
    lr: float = 2e-3
    weight_decay: float = 1e-5
    temperature: float = 0.05
    seed: int = 13


def knn_edges(graph: BiblioGraph, k: int, chunk: int = 2048) -> np.ndarray:
    """``similar`` edges (neighbour, paper): each graph paper's ``k`` nearest papers of its year or earlier."""
    nodes = np.arange(graph.n_papers)
    src, dst = [], []
    for b in tqdm(range(0, graph.n_papers, chunk), desc="graph: text kNN edges", disable=graph.n_papers <= chunk):
        idx = nodes[b:b + chunk]
        hits = text_neighbours(graph, graph.vectors[idx], [int(graph.years[i]) for i in idx], k, nodes=nodes,
                               exclude=[int(i) for i in idx])
        for i, h in zip(idx, hits):
            src += [n for n, _ in h]
            dst += [int(i)] * len(h)
    return np.array([src, dst], dtype=np.int64).reshape(2, -1)


class GraphTensors:
    """Metapath features of the graph's papers (per query year and training fold) and of new queries."""

    def __init__(self, graph: BiblioGraph, similar: np.ndarray):
        torch = require_pyg()
        SimpleConv = lazy_libs.torch_geometric_nn("the GNN retriever").SimpleConv
        self.torch, self.graph = torch, graph
        self.conv = SimpleConv(aggr="mean", combine_root=None)
        self.x = torch.from_numpy(graph.vectors.astype(np.float32))
        self.similar = similar
        self.fold = np.zeros(graph.n_papers, dtype=np.int64)          # fold of each citing paper
        citing = np.unique(graph.edges["cites"][0])
        rng = np.random.default_rng(0)
        self.fold[citing] = rng.permutation(len(citing)) % FOLDS
        self._cache: dict[Any, Any] = {}

    def mean(self, xs, edges: np.ndarray, n_dst: int):
        """Mean of ``xs[src]`` over the edges into each of ``n_dst`` nodes (zeros where none)."""
        torch = self.torch
        xd = torch.zeros(n_dst, xs.shape[1])
        if not edges.shape[1]:
            return xd
        return self.conv((xs, xd), torch.from_numpy(np.ascontiguousarray(edges)))

    def _keep(self, edges: np.ndarray, ok: np.ndarray, sides=(0, 1)) -> np.ndarray:
        keep = np.ones(edges.shape[1], dtype=bool)
        for s in sides:
            keep &= ok[edges[s]]
        return edges[:, keep]

    def base(self, year: int | None) -> dict[str, Any]:
        """Year-restricted edges and the fold-independent features of every paper."""
        key = ("base", year)
        if key in self._cache:
            return self._cache[key]
        g, ok = self.graph, self.graph.upto(year)
        e = g.edges
        n = g.n_papers
        writes = self._keep(e["writes"], ok, (1,))
        venue = self._keep(e["venue"], ok, (0,))
        kw = self._keep(e["keyword"], ok, (0,))
        cites = self._keep(e["cites"], ok)
        sim = self._keep(self.similar, ok)
        author_x = self.mean(self.x, writes[::-1], len(g.authors))
        venue_x = self.mean(self.x, venue, len(g.venues))
        kw_x = self.mean(self.x, kw, len(g.keywords))
        refs = self.mean(self.x, cites[::-1], n)                      # what each paper cites
        out = {"ok": ok, "cites": cites, "sim": sim, "kw_x": kw_x, "refs": refs,
               "x": self.x, "S": self.mean(self.x, sim, n), "K": self.mean(kw_x, kw[::-1], n),
               "A": self.mean(author_x, writes, n), "V": self.mean(venue_x, venue[::-1], n)}
        self._cache[key] = out
        return out

    def pool_features(self, year: int | None, fold: int | None = None):
        """``(pool papers, len(POOL_PATHS), dim)``; ``fold``: citers of that training fold left out."""
        key = ("pool", year, fold)
        if key in self._cache:
            return self._cache[key]
        b = self.base(year)
        cites = b["cites"]
        if fold is not None:
            cites = cites[:, self.fold[cites[0]] != fold]
        n_pool = self.graph.n_pool
        c = self.mean(self.x, cites, self.graph.n_papers)
        feats = {"x": b["x"], "S": b["S"], "K": b["K"], "A": b["A"], "V": b["V"], "C": c}
        out = self.torch.stack([feats[p][:n_pool] for p in POOL_PATHS], dim=1)
        if len(self._cache) > 16:
            self._cache = {k: v for k, v in self._cache.items() if k[0] == "base"}
        self._cache[key] = out
        return out

    def query_features(self, year: int | None, qvecs: np.ndarray, qsim: list[list[int]], qkw: list[np.ndarray]):
        """``(queries, len(QUERY_PATHS), dim)`` of new papers from their text neighbours and keywords."""
        torch = self.torch
        b = self.base(year)
        nq = len(qvecs)
        sim = np.array([[s for row in qsim for s in row], [i for i, row in enumerate(qsim) for _ in row]],
                       dtype=np.int64).reshape(2, -1)
        kw = np.array([[k for row in qkw for k in row], [i for i, row in enumerate(qkw) for _ in row]],
                      dtype=np.int64).reshape(2, -1)
        feats = {"x": torch.from_numpy(np.asarray(qvecs, dtype=np.float32)), "S": self.mean(self.x, sim, nq),
                 "K": self.mean(b["kw_x"], kw, nq), "SR": self.mean(b["refs"], sim, nq)}
        return torch.stack([feats[p] for p in QUERY_PATHS], dim=1)


def make_model(in_dim: int, params: GNNParams):
    torch = require_pyg()

    class Side(torch.nn.Module):
        def __init__(self, paths: int):
            super().__init__()
            h = params.hidden
            self.proj = torch.nn.ModuleList([torch.nn.Linear(in_dim, h) for _ in range(paths)])
            self.att = torch.nn.Linear(h, 1)
            self.mlp = torch.nn.ModuleList([torch.nn.Linear(h, h) for _ in range(max(0, params.layers - 1))])
            self.out = torch.nn.Linear(h, h)

        def forward(self, feats):                                  # (n, paths, in_dim)
            h = torch.stack([p(feats[:, i]) for i, p in enumerate(self.proj)], dim=1).relu()
            a = torch.softmax(self.att(h).squeeze(-1), dim=1)
            z = (a.unsqueeze(-1) * h).sum(1)
            for lin in self.mlp:
                z = z + lin(z).relu()
            return torch.nn.functional.normalize(self.out(z), dim=-1)

    class SemanticHGNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.query = Side(len(QUERY_PATHS))
            self.paper = Side(len(POOL_PATHS))

    return SemanticHGNN()


@dataclass
class TrainResult:
    seconds: float
    loss_per_epoch: list[float]
    steps: int
    examples: int


def train_gnn(graph: BiblioGraph, tensors: GraphTensors, params: GNNParams, *,
              on_epoch: Callable[[int, Any], None] | None = None, progress: bool = True):
    """Train on the graph's labelled papers (citation edges as positives). ``on_epoch(epoch, model)``
    is called after each epoch (the benchmark script scores dev there). Returns ``(model, TrainResult)``."""
    torch = require_pyg()

    rng = np.random.default_rng(params.seed)
    torch.manual_seed(params.seed)
    t0 = time.perf_counter()
    cites = graph.edges["cites"]
    by_citing = graph.cites_of()
    citing = np.array(sorted(n for n in by_citing if graph.years[n] < np.iinfo(np.int32).max), dtype=np.int64)
    if not len(citing):
        raise MustciteError("no labelled paper with a citation edge: nothing to train the GNN on")
    all_nodes = np.arange(graph.n_papers)
    sims = text_neighbours(graph, graph.vectors[citing], [int(graph.years[n]) for n in citing], params.similar_k,
                           nodes=all_nodes, exclude=[int(n) for n in citing])
    kw = graph.edges["keyword"]
    kw_of = {int(n): kw[1][kw[0] == n] for n in citing}
    qfeat = {}
    for year in np.unique(graph.years[citing]):
        rows = np.flatnonzero(graph.years[citing] == year)
        f = tensors.query_features(int(year), graph.vectors[citing[rows]], [[m for m, _ in sims[r]] for r in rows],
                                   [kw_of[int(citing[r])] for r in rows])
        for r, v in zip(rows, f):
            qfeat[int(citing[r])] = v
    model = make_model(graph.vectors.shape[1], params)
    opt = torch.optim.Adam(model.parameters(), lr=params.lr, weight_decay=params.weight_decay)
    n_pool = graph.n_pool
    losses = []
    steps = 0
    for epoch in range(1, params.epochs + 1):
        batches = []
        for year in np.unique(graph.years[citing]):
            for fold in range(FOLDS):
                group = citing[(graph.years[citing] == year) & (tensors.fold[citing] == fold)].copy()
                rng.shuffle(group)
                batches += [(int(year), fold, group[i:i + params.batch]) for i in range(0, len(group), params.batch)]
        model.train()
        total = 0.0
        for bi in tqdm(rng.permutation(len(batches)), desc=f"GNN epoch {epoch}/{params.epochs}", disable=not progress):
            year, fold, nodes = batches[bi]
            pool_ok = np.flatnonzero(graph.upto(year)[:n_pool])
            pos = [cites[1][by_citing[int(n)]] for n in nodes]
            neg = rng.choice(pool_ok, size=min(params.negatives, len(pool_ok)), replace=False)
            cand = np.unique(np.concatenate(pos + [neg]))
            col = {int(c): j for j, c in enumerate(cand)}
            q = model.query(torch.stack([qfeat[int(n)] for n in nodes]))
            p = model.paper(tensors.pool_features(year, fold)[torch.from_numpy(cand)])
            logits = q @ p.T / params.temperature
            own = [(i, col[int(n)]) for i, n in enumerate(nodes) if int(n) in col]
            if own:
                logits[[i for i, _ in own], [j for _, j in own]] = float("-inf")
            rows = np.concatenate([np.full(len(x), i) for i, x in enumerate(pos)])
            cols = np.array([col[int(c)] for x in pos for c in x], dtype=np.int64)
            loss = (torch.logsumexp(logits, dim=1)[rows] - logits[rows, cols]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(nodes)
            steps += 1
        losses.append(round(total / len(citing), 4))
        if on_epoch is not None:
            model.eval()
            on_epoch(epoch, model)
    model.eval()
    return model, TrainResult(round(time.perf_counter() - t0, 1), losses, steps, int(len(citing)))


class GNNRetriever:
    """The trained GNN of a model folder (:func:`save_gnn`) as a retriever."""

    name = "hetero-gnn"

    def __init__(self, model_dir: str | Path, *, cache_dir: str | Path | None = None, model=None,
                 graph: BiblioGraph | None = None, tensors: GraphTensors | None = None,
                 params: GNNParams | None = None):
        torch = require_pyg()
        self.model_dir = Path(model_dir) if model_dir else None
        if model is None:
            meta = read_model(self.model_dir, "gnn")
            params = GNNParams(**meta.get("params", {}))
            graph = BiblioGraph.load(self.model_dir)
            similar = np.load(self.model_dir / "similar.npy")
            tensors = GraphTensors(graph, similar)
            model = make_model(graph.vectors.shape[1], params)
            try:
                model.load_state_dict(torch.load(self.model_dir / "model.pt", map_location="cpu", weights_only=True))
            except (OSError, RuntimeError) as exc:
                raise MustciteError(f"cannot load the GNN weights: {exc}", path=self.model_dir / "model.pt") from None
        self.model, self.graph, self.tensors, self.params = model.eval(), graph, tensors, params
        self._encoder, self._cache_dir = None, cache_dir
        self.candidates = np.arange(graph.n_pool)
        self.seconds = 0.0

    @property
    def encoder(self):
        """The graph's text encoder (made on first use)."""
        if self._encoder is None:
            self._encoder = encoder_for(self.graph.config, self._cache_dir)
        return self._encoder

    def index(self, pool) -> None:
        self.candidates = self.graph.pool_nodes(pool, self.model_dir, "mustcite benchmark train-graph --kind gnn")

    def search_vectors(self, ids: list[str], texts: list[str], qvecs: np.ndarray, years: list[int | None],
                       k: int = 100) -> Results:
        """Top ``k`` pool papers for new papers given by their texts (keywords), vectors and years."""
        torch = require_pyg()
        cand = self.candidates
        k = max(1, min(int(k), len(cand)))
        qkw = self.graph.query_keywords(texts)
        all_nodes = np.arange(self.graph.n_papers)
        groups: dict[Any, list[int]] = {}
        for i, y in enumerate(years):
            groups.setdefault(y, []).append(i)
        out: Results = {}
        with torch.no_grad():
            for year, rows in groups.items():
                p = self.model.paper(self.tensors.pool_features(year)[torch.from_numpy(cand)]).numpy()
                ok = self.graph.upto(year)[cand]
                for b in range(0, len(rows), 512):
                    sub = rows[b:b + 512]
                    hits = text_neighbours(self.graph, qvecs[sub], [year] * len(sub), self.params.similar_k,
                                           nodes=all_nodes)
                    q = self.model.query(self.tensors.query_features(
                        year, qvecs[sub], [[n for n, _ in h] for h in hits], [qkw[i] for i in sub])).numpy()
                    scores = q @ p.T
                    for j, i in enumerate(sub):
                        s = np.where(ok, scores[j], -np.inf)
                        kk = min(k, int(ok.sum()))
                        top = np.argpartition(-s, kk - 1)[:kk] if kk else np.zeros(0, np.int64)
                        top = top[np.argsort(-s[top], kind="stable")]
                        out[ids[i]] = [(self.graph.paper_ids[cand[t]], float(s[t])) for t in top]
        return out

    def search(self, queries, k: int = 100) -> Results:
        t0 = time.perf_counter()
        qs = as_docs(queries, id_key="id")
        texts = [q.text for q in qs]
        qvecs = self.encoder.embed(texts, desc="encoding queries")
        out = self.search_vectors([q.id for q in qs], texts, qvecs, [query_year(q) for q in queries], k)
        self.seconds = time.perf_counter() - t0
        return out

    def save(self, path: str | Path) -> None:
        save_gnn(self.model, self.graph, self.tensors, self.params, path, card={"copied_from": str(self.model_dir)})

    def metadata(self) -> dict[str, Any]:
        return {"method": "gnn", "name": self.name, "model": str(self.model_dir), "params": asdict(self.params),
                "graph": self.graph.sizes(), "encoder": self.graph.config.encoder,
                "max_seq_length": self.graph.config.max_seq_length, "fields": "title + abstract (query cold start)",
                "docs": int(len(self.candidates))}


def save_gnn(model, graph: BiblioGraph, tensors: GraphTensors, params: GNNParams, folder: str | Path,
             card: dict[str, Any] | None = None) -> Path:
    torch = require_pyg()
    folder = Path(folder)
    graph.save(folder)
    np.save(folder / "similar.npy", tensors.similar)
    torch.save(model.state_dict(), folder / "model.pt")
    atomic_write_json(folder / MODEL_FILE, {"kind": "gnn", "params": asdict(params), "card": card or {},
                                            "graph": graph.sizes()})
    return folder


def read_card(folder: str | Path) -> dict[str, Any]:
    return json.loads((Path(folder) / MODEL_FILE).read_text(encoding="utf-8")).get("card", {})


def train_gnn_model(graph: BiblioGraph, params: GNNParams, out: str | Path, *, note: str = "",
                    progress: bool = True) -> dict[str, Any]:
    """Train the GNN on ``graph`` and save it with its card (returned)."""
    t0 = time.perf_counter()
    similar = knn_edges(graph, params.similar_k)
    tensors = GraphTensors(graph, similar)
    model, result = train_gnn(graph, tensors, params, progress=progress)
    card = {"method": "AR-GNN/LitFM-like heterogeneous GNN (SeHGNN-style metapath aggregation)",
            "trained_on": note or graph.info.get("benchmark", ""),
            "graph": graph.sizes(), "similar_edges": int(similar.shape[1]), "params": asdict(params),
            "train": asdict(result), "seconds": round(time.perf_counter() - t0, 1),
            "peak_rss_mb": peak_rss_mb()}
    save_gnn(model, graph, tensors, params, out, card)
    return card
