"""Saving and loading a recommender: one folder per model.

``pool.parquet`` (the pool papers), ``labelled.jsonl`` (the labelled papers), ``bm25/`` (the BM25
index), ``pool_vectors.npy`` and ``labelled_vectors.npy`` (dense models only), ``tiers.joblib``
(the per-tier models), ``cross_encoder/`` (the optional cross-encoder) and ``config.json`` (format version, settings, feature names, tier statistics,
encoder). A folder of another :data:`FORMAT_VERSION` is refused.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..errors import DataMissingError, MustciteError
from ..io import atomic_write_json, iter_jsonl, read_json, write_jsonl
from ..corpus.pool import POOL_COLUMNS, WORK_COLUMNS
from ..retrieval.bm25 import BM25Retriever
from .candidates import dense_encoder
from .config import RecommenderConfig
from .contexts import ContextIndex
from .names import NameIndex
from ..retrieval.cross_encoder import CrossEncoderReranker
from ..labels.papers import LabelledPaper
from .neighbours import NeighbourIndex
from .features import FEATURES

if TYPE_CHECKING:
    from .method import Recommender

FORMAT_VERSION = 6
CROSS_DIR = "cross_encoder"

R = TypeVar("R", bound="Recommender")


def save(rec: "Recommender", folder: str | Path) -> Path:
    """Write ``rec`` into ``folder`` (created if needed); returns the folder."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    columns = POOL_COLUMNS + tuple(c for c in WORK_COLUMNS if any(c in p for p in rec.pool))
    table = pa.Table.from_pylist([{k: p.get(k) for k in columns} for p in rec.pool])
    pq.write_table(table, folder / "pool.parquet")
    write_jsonl(folder / "labelled.jsonl", [p.to_dict() for p in rec.labelled])
    rec.bm25.save(folder / "bm25")
    if rec.pool_vecs is not None:
        np.save(folder / "pool_vectors.npy", rec.pool_vecs)
        np.save(folder / "labelled_vectors.npy", rec.nindex.vectors)
    return save_learned(rec, folder)


def save_learned(rec: "Recommender", folder: str | Path) -> Path:
    """Write what training changes into a model ``folder``: the tier models, the cross-encoder
    (a stale one is removed when ``rec`` has none) and ``config.json``. Adding a cross-encoder to
    a saved model rewrites only these; the pool, indexes and vectors stay as they are."""
    import shutil

    import joblib

    folder = Path(folder)
    joblib.dump(rec.tiers, folder / "tiers.joblib")
    if rec.cross is not None:
        rec.cross.save(folder / CROSS_DIR)
    elif (folder / CROSS_DIR).exists():
        shutil.rmtree(folder / CROSS_DIR)
    atomic_write_json(folder / "config.json", {
        "format": FORMAT_VERSION, "config": asdict(rec.config), "features": list(FEATURES),
        "tiers": sorted(rec.tiers.models), "main_tier": rec.tiers.main, "tier_stats": rec.tiers.stats,
        "pool": len(rec.pool), "labelled": len(rec.labelled), "info": rec.info,
        "encoder": None if rec.encoder is None else rec.encoder.metadata(),
        "cross_encoder": None if rec.cross is None else rec.cross.info,
    })
    return folder


def load(cls: type[R], folder: str | Path, *, cache_dir: str | Path | None = None,
         cache_queries: bool = False) -> R:
    """The recommender (of class ``cls``) saved in ``folder``. ``cache_queries``: keep query
    embeddings in the embedding cache (for repeated benchmark runs); by default every query is
    encoded afresh."""
    folder = Path(folder)
    meta = read_config(folder)
    try:
        return _load_parts(cls, folder, meta, cache_dir, cache_queries)
    except MustciteError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged model folder: name it, never a traceback
        raise MustciteError(f"cannot load the model: {exc.__class__.__name__}: {exc}", path=folder,
                            hint="retrain with `mustcite train`") from exc


def read_config(folder: str | Path) -> dict[str, Any]:
    """The model's ``config.json``, checked (present, well-formed, of this format): a quick test that
    ``folder`` holds a model this version can load, naming the file when it does not."""
    folder = Path(folder)
    if not (folder / "config.json").exists():
        raise DataMissingError(f"no trained recommender in {folder}",
                               hint="run `mustcite train` first (it writes <work>/models/recommender)")
    meta = read_json(folder / "config.json")
    if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
        raise MustciteError("not a recommender config (no 'config' object)", path=folder / "config.json",
                            hint="retrain with `mustcite train`")
    if meta.get("format") != FORMAT_VERSION:
        raise DataMissingError(f"recommender in {folder} has format {meta.get('format')}, expected "
                               f"{FORMAT_VERSION}", hint="rerun `mustcite train`")
    return meta


def _load_parts(cls: type[R], folder: Path, meta: dict[str, Any], cache_dir, cache_queries: bool) -> R:
    import joblib
    import pyarrow.parquet as pq

    # saved before `disable` existed: none; keys of older formats (query_year) are dropped
    known = {f.name for f in fields(RecommenderConfig)}
    config = RecommenderConfig(**{"disable": (), **{k: v for k, v in meta["config"].items() if k in known}})
    pool = pq.read_table(folder / "pool.parquet").to_pylist()
    labelled = [LabelledPaper.from_dict(obj) for _, obj in iter_jsonl(folder / "labelled.jsonl")]
    rec = cls(pool, labelled, config)
    gen = rec.candidates
    gen.bm25 = BM25Retriever.load(folder / "bm25")
    lab_vecs = None
    if config.dense and (folder / "pool_vectors.npy").exists():
        gen.encoder = dense_encoder(cache_dir, meta.get("encoder", {}) or {})
        gen.pool_vecs = np.load(folder / "pool_vectors.npy")
        lab_vecs = np.load(folder / "labelled_vectors.npy")
    gen.nindex = NeighbourIndex(labelled, lab_vecs)
    gen.cindex = ContextIndex(labelled)
    gen.names = NameIndex(pool, labelled, gen.nindex.years)
    gen.cache_queries = cache_queries
    rec.tiers = joblib.load(folder / "tiers.joblib")
    rec.info = meta.get("info", {})
    if (folder / CROSS_DIR).is_dir():
        rec.cross = CrossEncoderReranker.load(folder / CROSS_DIR)
    return rec
