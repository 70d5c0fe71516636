"""The ColBERT retriever (:class:`ColbertRetriever`, modes ``index``, ``exact``, ``rerank``) and
the method names that pick it (:data:`METHOD_MODES`, :func:`colbert_retriever`)."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DataMissingError, MustciteError, UsageError
from ...io import atomic_write_json
from ..base import Results, as_docs
from ..bm25 import BM25Retriever
from ..index_meta import read_meta
from ..vectors import default_cache_root
from .maxsim import FlatTokenIndex, rerank_candidates
from .model import ColbertSettings, load_colbert, pylate_version, require_pylate
from .token_cache import TokenEncoder

MODES = ("index", "exact", "rerank")


class ColbertRetriever:
    """Late-interaction retrieval (see :mod:`mustcite.retrieval.colbert`): ``mode="index"`` (PyLate
    Voyager index over every pool paper) or ``mode="rerank"`` (BM25 top-``rerank_k`` re-scored by MaxSim)."""

    def __init__(self, model_folder: str | Path | None = None, *, mode: str = "index", rerank_k: int = 100,
                 cache_dir: str | Path | None = None, index_dir: str | Path | None = None,
                 batch_size: int | None = None, progress: bool = True):
        if mode not in MODES:
            raise UsageError(f"unknown ColBERT mode {mode!r}", hint="use index or rerank")
        require_pylate()
        self.model = load_colbert(model_folder)
        if batch_size:
            self.model.settings = ColbertSettings(self.model.settings.query_length,
                                                  self.model.settings.document_length, int(batch_size))
        self.mode, self.rerank_k, self.progress = mode, int(rerank_k), progress
        self.cache_root = Path(cache_dir) if cache_dir else default_cache_root()
        self.encoder = TokenEncoder(self.model, self.cache_root)
        self.index_dir = Path(index_dir) if index_dir else None
        self.name = self.model.name + ("" if mode == "index" else f"-{mode}")
        self._docs: dict[str, str] = {}
        self._ids: list[str] = []
        self._voyager = None
        self._flat: FlatTokenIndex | None = None
        self._bm25 = None
        self.timings: dict[str, float] = {}

    # -- index
    def index(self, pool) -> None:
        docs = as_docs(pool)
        if not docs:
            raise MustciteError("cannot index an empty pool")
        self._ids = [d.id for d in docs]
        self._docs = {d.id: d.text for d in docs}
        if self.mode == "rerank":
            self._bm25 = BM25Retriever()
            self._bm25.index(docs)
            return
        t0 = time.perf_counter()
        if self.mode == "exact":
            self._flat = self._build_flat([d.text for d in docs])
            self.timings["encode_s"] = time.perf_counter() - t0
            return
        vecs = self.encoder.encode([d.text for d in docs], is_query=False,
                                   desc=f"ColBERT token embeddings ({self.model.name})", progress=self.progress)
        self.timings["encode_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._voyager = self._build_voyager(self._ids, vecs)
        self.timings["index_s"] = time.perf_counter() - t0

    def _build_flat(self, texts: list[str], step: int = 2000) -> FlatTokenIndex:
        """Encode what the cache lacks, then copy the projected vectors into one float16 matrix,
        ``step`` documents at a time (memory: the matrix plus one step)."""
        keys = self.encoder.ensure(texts, is_query=False, desc=f"ColBERT token embeddings ({self.model.name})",
                                   progress=self.progress)
        cache = self.encoder.caches["doc"]
        flat = FlatTokenIndex([cache.length(k) for k in keys], self.model.dim)
        for i in range(0, len(keys), step):
            flat.put(i, [self.model.project(cache.get(k)) for k in keys[i:i + step]])
        cache.release()
        return flat

    def _voyager_dir(self) -> Path:
        if self.index_dir is None:
            h = hashlib.sha256((self.model.cache_key() + (self.model.folder or "") + "\n".join(self._ids))
                               .encode()).hexdigest()[:16]
            self.index_dir = self.cache_root / "colbert-index" / f"{self.model.name}-{h}"
        return self.index_dir

    def _build_voyager(self, ids: list[str], vecs: list[np.ndarray]):
        indexes = require_pylate().indexes
        d = self._voyager_dir()
        if d.exists():
            shutil.rmtree(d)
        idx = indexes.Voyager(index_folder=str(d), index_name="voyager", override=True,
                              embedding_size=self.model.dim)
        idx.add_documents(documents_ids=ids, documents_embeddings=vecs)
        return idx

    # -- search
    def search(self, queries, k: int = 100) -> Results:
        qs = as_docs(queries, id_key="id")
        if not self._ids:
            raise MustciteError("ColBERT index is empty: call index() or load() first")
        qv = self.encoder.encode([q.text for q in qs], is_query=True, desc="ColBERT queries", progress=self.progress)
        k = max(1, min(int(k), len(self._ids)))
        if self.mode == "rerank":
            first = self._bm25.search(qs, k=max(k, self.rerank_k))
            return self.rerank(qs, qv, {q.id: [pid for pid, _ in first.get(q.id, [])] for q in qs}, k)
        if self.mode == "exact":
            hits = self._flat.search(qv, k, progress=self.progress)
            return {q.id: [(self._ids[i], s) for i, s in h] for q, h in zip(qs, hits)}
        retrieve = require_pylate().retrieve
        ret = retrieve.ColBERT(index=self._voyager)
        res = ret.retrieve(queries_embeddings=qv, k=k, device="cpu")
        return {q.id: [(r["id"], float(r["score"])) for r in hits] for q, hits in zip(qs, res)}

    def rerank(self, qs, qv: list[np.ndarray], candidates: dict[str, list[str]], k: int) -> Results:
        """MaxSim re-ranking of given candidates per query id (pool ids only)."""
        need = list(dict.fromkeys(pid for q in qs for pid in candidates.get(q.id, []) if pid in self._docs))
        vecs = self.encoder.encode([self._docs[p] for p in need], is_query=False,
                                   desc=f"ColBERT candidates ({self.model.name})", progress=self.progress)
        doc_vecs = dict(zip(need, vecs))
        ranked = rerank_candidates(qv, [candidates.get(q.id, []) for q in qs], doc_vecs, k)
        return {q.id: r for q, r in zip(qs, ranked)}

    # -- persistence
    def metadata(self) -> dict[str, Any]:
        return {"method": self.name, "library": f"pylate {pylate_version()}", "mode": self.mode,
                "rerank_k": self.rerank_k if self.mode == "rerank" else None,
                "first_stage": {"rerank": "bm25", "exact": "none (exhaustive MaxSim over every document)",
                                "index": "voyager token kNN (HNSW, cosine)"}[self.mode],
                "model_folder": self.model.folder, "transformer": self.model.transformer_path,
                "dim": self.model.dim, "settings": asdict(self.model.settings), "similarity": "MaxSim",
                "token_cache_key": self.model.cache_key(), "fields": "title + abstract", "docs": len(self._ids),
                **({"token_vectors": int(self._flat.offsets[-1]), "index_bytes": self._flat.nbytes,
                    "storage": "float16 matrix in memory, built from the on-disk token cache"}
                   if self._flat is not None else {})}

    def save(self, path: str | Path) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path / "ids.json", self._ids, indent=None)
        atomic_write_json(path / "docs.json", self._docs, indent=None)
        if self.mode == "index" and self._voyager is not None:
            src = self._voyager_dir() / "voyager"
            dst = path / "voyager"
            if src.resolve() != dst.resolve():
                if dst.exists():
                    shutil.rmtree(dst)
                shutil.copytree(src, dst)
        if self.mode == "rerank" and self._bm25 is not None:
            self._bm25.save(path / "bm25")
        atomic_write_json(path / "meta.json", self.metadata())

    @classmethod
    def load(cls, path: str | Path, *, cache_dir: str | Path | None = None) -> ColbertRetriever:
        path = Path(path)
        meta = read_meta(path / "meta.json")
        r = cls(meta.get("model_folder"), mode=meta.get("mode", "index"), rerank_k=meta.get("rerank_k") or 100,
                cache_dir=cache_dir, index_dir=path)
        r._ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
        r._docs = json.loads((path / "docs.json").read_text(encoding="utf-8"))
        if r.mode == "exact":
            r._flat = r._build_flat([r._docs[i] for i in r._ids])
        elif r.mode == "index":
            indexes = require_pylate().indexes
            r._voyager = indexes.Voyager(index_folder=str(path), index_name="voyager", override=False,
                                         embedding_size=r.model.dim)
        else:
            r._bm25 = BM25Retriever.load(path / "bm25")
        return r


METHOD_MODES = {"colbert": "index", "colbert-exact": "exact", "colbert-rerank": "rerank"}


def colbert_retriever(method: str, **options: Any) -> ColbertRetriever:
    """``colbert[:FOLDER]`` (Voyager index) | ``colbert-exact[:FOLDER]`` (exhaustive MaxSim over the
    pool) | ``colbert-rerank[:FOLDER]`` (BM25 top-K)."""
    head, _, folder = method.partition(":")
    if head not in METHOD_MODES:
        raise UsageError(f"unknown ColBERT method {method!r}",
                         hint="use colbert[:FOLDER], colbert-exact[:FOLDER] or colbert-rerank[:FOLDER]")
    mode = METHOD_MODES[head]
    folder = folder.strip() or None
    if folder and not Path(folder).expanduser().is_dir():
        raise DataMissingError(f"ColBERT model folder {folder} not found",
                               hint="train one with `mustcite benchmark train-colbert`")
    kw = {k: v for k, v in options.items() if k in ("cache_dir", "rerank_k", "index_dir", "batch_size") and v}
    return ColbertRetriever(folder, mode=mode, **kw)

