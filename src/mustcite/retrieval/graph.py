"""The heterogeneous bibliographic graph shared by the graph-based retrievers (:mod:`.ppr`, :mod:`.gnn`).

Nodes: **paper** (the pool papers first, then the labelled papers that are not pool papers),
**author** (normalised names of at least two graph papers, from the corpus ``authors`` column),
**venue** (venue + year, e.g. ``NeurIPS 2021``) and **keyword** (each paper's top
:attr:`GraphConfig.keywords_per_paper` TF-IDF terms, unigrams and bigrams of title + abstract,
English stop words removed; a term becomes a node when it is the top term of two papers or more).
Edges: ``cites`` (labelled paper -> cited pool paper; the labelled papers are the recommender's:
the benchmark's TRAIN queries with their labels plus the labelled papers of earlier years, as
:func:`mustcite.benchmark.retrieval_training.graph_from_benchmark` gathers them; dev and test
queries never enter the graph),
``writes`` (author -> paper), ``venue`` (paper -> venue) and ``keyword`` (paper -> keyword).
Paper features are the cached MiniLM vectors of title + abstract (:mod:`.dense`), so a new paper
enters by its text alone (cold start): :func:`text_neighbours` finds its nearest graph papers and
:meth:`BiblioGraph.query_keywords` its keyword nodes; it never gets a citation edge.

Time order: every paper node has a year; :meth:`BiblioGraph.upto` says which a query of year ``Y``
may reach (year <= ``Y``; unknown never) and the retrievers drop the others' edges and scores.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from .. import lazy_libs
from ..corpus.records import normalize_title
from ..errors import DataMissingError, MustciteError, UsageError
from ..io import atomic_write_json
from .base import as_docs, doc_text
from .dense import DenseRetriever

#: node types and edge types, in the order the retrievers use them
NODE_TYPES = ("paper", "author", "venue", "keyword")
EDGE_TYPES = ("cites", "writes", "venue", "keyword")
#: the year of a paper of unknown year: later than any query, so never reachable
UNKNOWN_YEAR = np.iinfo(np.int32).max
#: the file of a graph model folder (:mod:`.ppr`, :mod:`.gnn`) that says its kind and parameters
MODEL_FILE = "graph_model.json"


@dataclass
class GraphConfig:
    """How the graph is built (saved with it)."""

    keywords_per_paper: int = 5
    keyword_min_df: int = 3
    keyword_max_df: float = 0.05
    keyword_max_features: int = 60000
    min_author_papers: int = 2
    encoder: str = "onnx-int8:minilm"      # the recommender's encoder; its pool vectors are cached
    max_seq_length: int = 64


@dataclass
class BiblioGraph:
    """Nodes and typed edges (``(2, E)`` int64 arrays of node indices within their types)."""

    paper_ids: list[str]
    n_pool: int
    years: np.ndarray                      # int32 per paper node (UNKNOWN_YEAR when unknown)
    vectors: np.ndarray                    # float32 (papers, dim), L2-normalised text vectors
    authors: list[str]
    venues: list[str]
    keywords: list[str]
    edges: dict[str, np.ndarray]           # cites: (citing paper, cited paper); writes: (author, paper);
    #                                        venue: (paper, venue); keyword: (paper, keyword)
    citing: list[str]                      # the labelled papers (citing side), by id
    citing_node: np.ndarray                # their paper node
    config: GraphConfig = field(default_factory=GraphConfig)
    keyworder: Any = None                  # the fitted TfidfVectorizer restricted to keyword terms
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def n_papers(self) -> int:
        return len(self.paper_ids)

    def counts(self) -> dict[str, int]:
        return {"paper": self.n_papers, "author": len(self.authors), "venue": len(self.venues),
                "keyword": len(self.keywords)}

    def sizes(self) -> dict[str, Any]:
        """Nodes per type (papers split into pool and labelled-only) and edges per type."""
        return {"nodes": {**self.counts(), "pool_papers": self.n_pool,
                          "labelled_only_papers": self.n_papers - self.n_pool, "citing_papers": len(self.citing)},
                "edges": {t: int(self.edges[t].shape[1]) for t in EDGE_TYPES}}

    def upto(self, year: int | None) -> np.ndarray:
        """Paper nodes a query of ``year`` may reach (all known years when ``year`` is None)."""
        return self.years <= (UNKNOWN_YEAR - 1 if year is None else int(year))

    def node_of(self) -> dict[str, int]:
        return {pid: i for i, pid in enumerate(self.paper_ids)}

    def pool_nodes(self, pool, model_dir: str | Path, command: str) -> np.ndarray:
        """The sorted pool-paper nodes of ``pool`` (what a graph method ranks); a clear error when a
        pool paper is not one (the model was built on another pool: ``command`` rebuilds it)."""
        ids = [d.id for d in as_docs(pool)]
        node = self.node_of()
        missing = [i for i in ids if i not in node or node[i] >= self.n_pool]
        if missing:
            raise MustciteError(f"{len(missing)} pool papers are not in the graph (e.g. {missing[0]!r}): the "
                                "model was built for another pool", path=model_dir,
                                hint=f"rebuild it with `{command}` on this pool")
        return np.asarray(sorted(node[i] for i in ids), dtype=np.int64)

    def cites_of(self) -> dict[int, np.ndarray]:
        """Citing paper node -> the column indices of its ``cites`` edges."""
        src = self.edges["cites"][0]
        order = np.argsort(src, kind="stable")
        bounds = np.searchsorted(src[order], np.arange(self.n_papers + 1))
        return {int(n): order[bounds[n]:bounds[n + 1]] for n in np.unique(src)}

    def query_keywords(self, texts: list[str]) -> list[np.ndarray]:
        """Keyword nodes of new texts (their top TF-IDF terms among the keyword nodes)."""
        if self.keyworder is None or not self.keywords:
            return [np.zeros(0, dtype=np.int64) for _ in texts]
        return _top_terms(self.keyworder.transform(texts), self.config.keywords_per_paper)

    # ------------------------------------------------------------------ persistence
    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(folder / "graph.npz", years=self.years, vectors=self.vectors.astype(np.float16),
                            citing_node=self.citing_node, **{f"edge_{t}": self.edges[t] for t in EDGE_TYPES})
        atomic_write_json(folder / "graph_nodes.json", {
            "paper_ids": self.paper_ids, "n_pool": self.n_pool, "authors": self.authors, "venues": self.venues,
            "keywords": self.keywords, "citing": self.citing}, indent=None)
        atomic_write_json(folder / "graph.json", {"config": asdict(self.config), "sizes": self.sizes(),
                                                  "info": self.info})
        joblib.dump(self.keyworder, folder / "keywords.joblib")

    @classmethod
    def load(cls, folder: str | Path) -> BiblioGraph:
        folder = Path(folder)
        for name in ("graph.npz", "graph_nodes.json", "graph.json", "keywords.joblib"):
            if not (folder / name).is_file():
                raise DataMissingError("graph model file missing", path=folder / name,
                                       hint="run `mustcite benchmark train-graph` first")
        try:
            arrays = np.load(folder / "graph.npz")
            nodes = json.loads((folder / "graph_nodes.json").read_text(encoding="utf-8"))
            meta = json.loads((folder / "graph.json").read_text(encoding="utf-8"))
            keyworder = joblib.load(folder / "keywords.joblib")
        except (OSError, ValueError, KeyError) as exc:
            raise MustciteError(f"cannot read the graph: {exc}", path=folder) from None
        return cls(nodes["paper_ids"], int(nodes["n_pool"]), arrays["years"], arrays["vectors"].astype(np.float32),
                   nodes["authors"], nodes["venues"], nodes["keywords"],
                   {t: arrays[f"edge_{t}"] for t in EDGE_TYPES}, nodes["citing"], arrays["citing_node"],
                   GraphConfig(**meta.get("config", {})), keyworder, meta.get("info", {}))


def _year(v: Any) -> int:
    try:
        y = int(v)
    except (TypeError, ValueError):
        return int(UNKNOWN_YEAR)
    return y if 0 < y < UNKNOWN_YEAR else int(UNKNOWN_YEAR)


def _author_key(name: str) -> str:
    return " ".join(str(name).lower().replace(".", " ").split())


def _top_terms(matrix, k: int) -> list[np.ndarray]:
    """The ``k`` highest entries of each row of a sparse matrix (column indices, best first)."""
    matrix = matrix.tocsr()
    out = []
    for i in range(matrix.shape[0]):
        lo, hi = matrix.indptr[i], matrix.indptr[i + 1]
        cols, vals = matrix.indices[lo:hi], matrix.data[lo:hi]
        top = np.lexsort((cols, -vals))[:k]
        out.append(cols[top].astype(np.int64))
    return out


def build_graph(pool: list[dict[str, Any]], labelled: list, pool_vectors: np.ndarray,
                labelled_vectors: np.ndarray, authors: dict[str, list[str]] | None = None,
                config: GraphConfig | None = None, progress: bool = True) -> BiblioGraph:
    """The graph of ``pool`` (dicts: paper_id, title, abstract, venue, year) and ``labelled``
    (:class:`~mustcite.labels.papers.LabelledPaper`; only their citations of pool papers become
    edges). A labelled paper that is a pool paper (same id, or same normalised title and year) is
    merged into the pool node. ``authors``: paper id -> author names (pool and labelled papers)."""
    TfidfVectorizer = lazy_libs.sklearn_feature_extraction_text("the graph").TfidfVectorizer
    config = config or GraphConfig()
    authors = authors or {}
    if len(pool_vectors) != len(pool) or len(labelled_vectors) != len(labelled):
        raise MustciteError("graph: one text vector per pool and labelled paper is needed")
    t0 = time.perf_counter()
    paper_ids = [str(p["paper_id"]) for p in pool]
    node = {pid: i for i, pid in enumerate(paper_ids)}
    if len(node) != len(paper_ids):
        raise MustciteError("graph: duplicate paper_id in the pool", field="paper_id")
    by_title = {(normalize_title(p.get("title")), _year(p.get("year"))): i for i, p in enumerate(pool)}
    years = [_year(p.get("year")) for p in pool]
    texts = [doc_text(p.get("title") or "", p.get("abstract") or "") for p in pool]
    vecs = [np.asarray(pool_vectors, dtype=np.float32)]
    extra_rows = []
    citing_node, citing = [], []
    merged = 0
    for row, lp in enumerate(labelled):
        n = node.get(lp.id)
        if n is None:
            n = by_title.get((normalize_title(lp.title), _year(lp.year)))
            merged += n is not None
        if n is None:
            n = len(paper_ids)
            paper_ids.append(lp.id)
            node[lp.id] = n
            years.append(_year(lp.year))
            texts.append(doc_text(lp.title, lp.abstract))
            extra_rows.append(row)
        citing.append(lp.id)
        citing_node.append(n)
    if extra_rows:
        vecs.append(np.asarray(labelled_vectors, dtype=np.float32)[extra_rows])
    vectors = np.concatenate(vecs) if len(vecs) > 1 else vecs[0]
    n_pool = len(pool)

    # cites: labelled -> pool paper (self-citations of a merged node dropped)
    src, dst = [], []
    for lp, n in zip(labelled, citing_node):
        for c in lp.cites:
            m = node.get(c.paper_id)
            if m is not None and m < n_pool and m != n:
                src.append(n)
                dst.append(m)
    cites = np.unique(np.array([src, dst], dtype=np.int64).reshape(2, -1), axis=1)

    # authors (at least min_author_papers graph papers)
    pairs: dict[str, set[int]] = {}
    for pid, n in node.items():
        for a in authors.get(pid) or ():
            key = _author_key(a)
            if key:
                pairs.setdefault(key, set()).add(n)
    for lp, n in zip(labelled, citing_node):           # a merged labelled paper may carry its own list
        for a in authors.get(lp.id) or ():
            key = _author_key(a)
            if key:
                pairs.setdefault(key, set()).add(n)
    author_names = sorted(a for a, ps in pairs.items() if len(ps) >= config.min_author_papers)
    a_src = [i for i, a in enumerate(author_names) for _ in pairs[a]]
    a_dst = [n for a in author_names for n in sorted(pairs[a])]
    writes = np.array([a_src, a_dst], dtype=np.int64).reshape(2, -1)

    # venues: venue + year of the pool papers
    venue_names: list[str] = []
    vidx: dict[str, int] = {}
    v_src, v_dst = [], []
    for i, p in enumerate(pool):
        v = str(p.get("venue") or "").strip()
        if not v:
            continue
        key = f"{v} {p.get('year')}" if p.get("year") else v
        if key not in vidx:
            vidx[key] = len(venue_names)
            venue_names.append(key)
        v_src.append(i)
        v_dst.append(vidx[key])
    venue = np.array([v_src, v_dst], dtype=np.int64).reshape(2, -1)

    # keywords: top TF-IDF terms per paper
    tfidf = TfidfVectorizer(stop_words="english", ngram_range=(1, 2), min_df=config.keyword_min_df,
                            max_df=config.keyword_max_df, max_features=config.keyword_max_features,
                            sublinear_tf=True, token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9\-]+\b", dtype=np.float32)
    it = tqdm(range(1), desc="graph: keywords", disable=not progress)
    for _ in it:
        m = tfidf.fit_transform(texts)
        top = _top_terms(m, config.keywords_per_paper)
    df = np.bincount(np.concatenate(top) if top else np.zeros(0, np.int64), minlength=m.shape[1])
    terms = np.flatnonzero(df >= 2)
    vocab = tfidf.get_feature_names_out()
    keyword_names = [str(vocab[j]) for j in terms]
    remap = np.full(m.shape[1], -1, dtype=np.int64)
    remap[terms] = np.arange(len(terms))
    k_src = [i for i, t in enumerate(top) for j in t if remap[j] >= 0]
    k_dst = [int(remap[j]) for t in top for j in t if remap[j] >= 0]
    keyword = np.array([k_src, k_dst], dtype=np.int64).reshape(2, -1)
    keyworder = TfidfVectorizer(stop_words="english", ngram_range=(1, 2), sublinear_tf=True,
                                token_pattern=tfidf.token_pattern, vocabulary=keyword_names, dtype=np.float32)
    keyworder.fit(texts[:1])                          # vocabulary fixed; idf set below
    keyworder.idf_ = tfidf.idf_[terms]
    info = {"merged_labelled_into_pool": merged, "seconds": round(time.perf_counter() - t0, 1),
            "keywords": f"top {config.keywords_per_paper} TF-IDF unigrams/bigrams of title + abstract per paper, "
                        "English stop words removed, kept when the top term of >= 2 papers"}
    return BiblioGraph(paper_ids, n_pool, np.asarray(years, dtype=np.int32), vectors, author_names, venue_names,
                       keyword_names, {"cites": cites, "writes": writes, "venue": venue, "keyword": keyword},
                       citing, np.asarray(citing_node, dtype=np.int64), config, keyworder, info)


def text_neighbours(graph: BiblioGraph, qvecs: np.ndarray, years: list[int | None], k: int, *,
                    nodes: np.ndarray, exclude: list[int | None] | None = None) -> list[list[tuple[int, float]]]:
    """The ``k`` most similar (cosine) paper nodes among ``nodes`` for each query vector, best first,
    only nodes of the query's year or earlier, and never the query's own node (``exclude``)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    if not len(nodes) or k <= 0:
        return [[] for _ in range(len(qvecs))]
    sims = np.asarray(qvecs, dtype=np.float32) @ graph.vectors[nodes].T
    out = []
    for i, row in enumerate(sims):
        ok = graph.upto(years[i])[nodes] if years else np.ones(len(nodes), bool)
        row = np.where(ok, row, -np.inf)
        if exclude and exclude[i] is not None:
            row[nodes == exclude[i]] = -np.inf
        kk = min(k, int(np.isfinite(row).sum()))
        if kk <= 0:
            out.append([])
            continue
        top = np.argpartition(-row, kk - 1)[:kk]
        top = top[np.lexsort((top, -row[top]))]
        out.append([(int(nodes[j]), float(row[j])) for j in top])
    return out


def corpus_authors(corpus: str | Path, ids: set[str]) -> dict[str, list[str]]:
    """Author lists of the papers ``ids`` from the corpus Parquet (``paper_id``, ``authors``)."""
    path = Path(corpus)
    if not path.is_file():
        raise DataMissingError("corpus file not found (it holds the authors)", path=path,
                               hint="build the corpus (`mustcite corpus build`) or pass --corpus")
    try:
        names = pq.read_schema(path).names
        if "authors" not in names or "paper_id" not in names:
            raise MustciteError("corpus Parquet needs columns paper_id and authors", path=path, field="authors")
        table = pq.read_table(path, columns=["paper_id", "authors"])
    except MustciteError:
        raise
    except Exception as exc:
        raise MustciteError(f"cannot read Parquet: {exc}", path=path) from None
    out = {}
    for pid, names in zip(table.column("paper_id").to_pylist(), table.column("authors").to_pylist()):
        if pid in ids and names:
            out[pid] = [str(a) for a in names if a]
    return out


def encoder_for(config: GraphConfig, cache_dir: str | Path | None = None):
    """The dense retriever whose cached vectors the graph uses (the recommender's encoder)."""
    return DenseRetriever(config.encoder, max_seq_length=config.max_seq_length, cache_dir=cache_dir)


#: default model folders (under ``<work>/models/``) of ``--method ppr`` and ``--method gnn``
DEFAULT_MODELS = {"ppr": "graph-ppr", "gnn": "graph-gnn"}


def read_model(folder: Path, kind: str) -> dict[str, Any]:
    """The ``graph_model.json`` of a graph model folder, checked to be of ``kind``."""
    f = Path(folder) / MODEL_FILE
    if not f.is_file():
        raise DataMissingError(f"no {kind} graph model here", path=f,
                               hint=f"run `mustcite benchmark train-graph --kind {kind}` first")
    try:
        meta = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MustciteError(f"cannot read the graph model: {exc}", path=f) from None
    if meta.get("kind") != kind:
        raise UsageError(f"{folder} is a {meta.get('kind')!r} graph model, not {kind!r}", path=f)
    return meta


def query_year(q: Any) -> int | None:
    """A query's year: ``year`` of a dict or object (None when absent)."""
    y = q.get("year") if isinstance(q, dict) else getattr(q, "year", None)
    try:
        return int(y) if y is not None else None
    except (TypeError, ValueError):
        return None
