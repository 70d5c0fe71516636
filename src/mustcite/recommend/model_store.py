"""Saving and loading a recommender's parts (:class:`ModelParts`): one folder per model.

``pool.parquet`` (the pool papers), ``labelled.jsonl`` (the labelled papers), ``bm25/`` (the BM25
index), ``pool_vectors.npy`` and ``labelled_vectors.npy`` (dense models only), ``tiers.joblib``
(the per-tier models), ``cross_encoder/`` (the optional cross-encoder), ``config.json`` (format
version, settings, feature names, tier statistics, encoder) and ``indexes/``: what a load would
otherwise build, built once from the others (the pool as a memory-mapped Arrow file, the labelled
papers without their context texts, the citation-context, neighbour, name and title indexes, numpy
copies of the tier models' trees; pickles, read faster than their sources) and rebuilt when
``pool.parquet``, ``labelled.jsonl`` or ``tiers.joblib`` changes. A folder of another :data:`FORMAT_VERSION` is refused.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..corpus.pool import POOL_COLUMNS, WORK_COLUMNS
from ..errors import DataMissingError, MustciteError
from ..io import atomic_write_json, iter_jsonl, load_pickle, read_json, remove_stale_temps, write_jsonl
from ..labels.papers import LabelledPaper
from ..retrieval.bm25 import BM25Retriever
from ..retrieval.cross_encoder import CrossEncoderReranker
from .candidates import CandidateGenerator, dense_encoder
from .config import RecommenderConfig
from .contexts import ContextIndex
from .draft_indexes import DraftIndexes
from .features import FEATURES
from .name_index import NameIndex
from .neighbours import NeighbourIndex
from .pool_table import PoolTable
from .tiers import TierModels

FORMAT_VERSION = 6
CROSS_DIR = "cross_encoder"
#: the folder of indexes built from the saved parts (:func:`_write_indexes`), and its layout version
#: (raise it whenever what an index file holds changes: a folder of another version is rebuilt)
INDEX_DIR = "indexes"
#: the temporary folder :func:`_write_indexes` renames into place (``.indexes-<pid>``)
_TEMP_INDEXES = re.compile(rf"\.{INDEX_DIR}-(?P<pid>\d+)")
INDEX_VERSION = 10    # 10: citations pickled as arguments, cited ids shared (a smaller loaded model)

T = TypeVar("T")


@dataclass
class ModelParts:
    """What a recommender is made of, each part with its own save and load."""

    #: the pool table and its indexes: BM25, the dense encoder and vectors, the labelled papers'
    #: neighbour, citation-context and name indexes (:class:`~.candidates.CandidateGenerator`)
    candidates: CandidateGenerator
    #: the labelled papers the neighbour votes and the tier models learn from
    labelled: list[LabelledPaper]
    #: the per-tier models (untrained until fitted)
    tiers: TierModels
    #: the optional cross-encoder re-scoring the top candidates
    cross: CrossEncoderReranker | None = None
    #: what training recorded (queries, rows, tuning)
    info: dict[str, Any] = field(default_factory=dict)
    #: the folder of indexes prebuilt for this model, when it was loaded with them
    index_dir: Path | None = None

    @property
    def config(self) -> RecommenderConfig:
        return self.candidates.config


def save(rec: ModelParts, folder: str | Path) -> Path:
    """Write the parts ``rec`` into ``folder`` (created if needed); returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    columns = _pool_columns(rec.candidates.pool)
    table = pa.Table.from_pylist([{k: p.get(k) for k in columns} for p in rec.candidates.pool])
    pq.write_table(table, folder / "pool.parquet")
    write_jsonl(folder / "labelled.jsonl", [p.to_dict() for p in rec.labelled])
    gen = rec.candidates
    gen.bm25.save(folder / "bm25")
    if gen.pool_vecs is not None:
        np.save(folder / "pool_vectors.npy", gen.pool_vecs)
        np.save(folder / "labelled_vectors.npy", gen.nindex.vectors)
    save_learned(rec, folder)
    _write_indexes(folder, rec)
    return folder


def save_learned(rec: ModelParts, folder: str | Path) -> Path:
    """Write what training changes into a model ``folder``: the tier models, the cross-encoder
    (a stale one is removed when ``rec`` has none) and ``config.json``. Adding a cross-encoder to
    a saved model rewrites only these; the pool, indexes and vectors stay as they are."""
    import joblib  # ~45 ms: the recommender imports this module at start-up

    folder = Path(folder)
    joblib.dump(rec.tiers.compiled(), folder / "tiers.joblib")     # scikit-learn's models, never the numpy copies
    if rec.cross is not None:
        rec.cross.save(folder / CROSS_DIR)
    elif (folder / CROSS_DIR).exists():
        shutil.rmtree(folder / CROSS_DIR)
    atomic_write_json(folder / "config.json", {
        "format": FORMAT_VERSION, "config": asdict(rec.config), "features": list(FEATURES),
        "tiers": sorted(rec.tiers.models), "main_tier": rec.tiers.main, "tier_stats": rec.tiers.stats,
        "pool": len(rec.candidates.pool), "labelled": len(rec.labelled), "info": rec.info,
        "encoder": None if rec.candidates.encoder is None else rec.candidates.encoder.metadata(),
        "cross_encoder": None if rec.cross is None else rec.cross.info,
    })
    return folder


def load(folder: str | Path, *, cache_dir: str | Path | None = None, cache_queries: bool = False) -> ModelParts:
    """The parts of the recommender saved in ``folder``. ``cache_queries``: keep query embeddings
    in the embedding cache (for repeated benchmark runs); by default every query is encoded afresh."""
    folder = Path(folder)
    meta = read_config(folder)
    try:
        return _load_parts(folder, meta, cache_dir, cache_queries)
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


def _load_parts(folder: Path, meta: dict[str, Any], cache_dir, cache_queries: bool) -> ModelParts:
    import joblib  # ~45 ms: the recommender imports this module at start-up

    # saved before `disable` existed: none; keys of older formats (query_year) are dropped
    known = {f.name for f in fields(RecommenderConfig)}
    config = RecommenderConfig(**{"disable": (), **{k: v for k, v in meta["config"].items() if k in known}})
    remove_stale_temps(folder, _TEMP_INDEXES)    # left by a load killed while it wrote the indexes
    saved = _saved_indexes(folder)
    pool = _from_saved(saved, lambda d: PoolTable.open(d / "pool.arrow"),
                       lambda: PoolTable.from_records(_read_parquet(folder / "pool.parquet")))
    labelled = _from_saved(saved, lambda d: load_pickle(d / "labelled.pickle"),
                           lambda: _read_labelled(folder / "labelled.jsonl"))
    encoder = pool_vecs = lab_vecs = None
    if config.dense and (folder / "pool_vectors.npy").exists():
        encoder = dense_encoder(cache_dir, meta.get("encoder", {}) or {})
        pool_vecs = np.load(folder / "pool_vectors.npy", mmap_mode="r")   # read as queries need it
        lab_vecs = np.load(folder / "labelled_vectors.npy")
    nindex = _from_saved(saved, lambda d: NeighbourIndex.load(d / "neighbours", labelled, lab_vecs),
                         lambda: NeighbourIndex(labelled, lab_vecs))
    gen = CandidateGenerator(
        pool, config, bm25=BM25Retriever.load(folder / "bm25", mmap=True), encoder=encoder, pool_vecs=pool_vecs,
        nindex=nindex,
        cindex=_from_saved(saved, lambda d: ContextIndex.load(d / "contexts"), lambda: ContextIndex(labelled)),
        names=_from_saved(saved, lambda d: NameIndex.load(d / "names.pickle", pool),
                          lambda: NameIndex(pool, labelled, nindex.years)),
        cache_queries=cache_queries)
    tiers = _from_saved(saved, lambda d: TierModels.load_arrays(d / "tiers", folder / "tiers.joblib"),
                        lambda: joblib.load(folder / "tiers.joblib"))
    cross = CrossEncoderReranker.load(folder / CROSS_DIR) if (folder / CROSS_DIR).is_dir() else None
    parts = ModelParts(gen, labelled, tiers, cross, meta.get("info", {}))
    if saved is None:     # built here: kept for the next load
        _write_indexes(folder, parts)
    parts.index_dir = _saved_indexes(folder)
    for p in labelled:
        p.contexts = {}       # read by the context index only
    return parts


# ---- indexes built once per model, read back at load --------------------------------------------

def _index_key(folder: Path) -> dict[str, Any]:
    """What the saved indexes were built from: the pool, labelled papers and tier models' files
    (size and modification time of each) and the index layout's version."""
    def stamp(name: str) -> list[int]:
        st = (folder / name).stat()
        return [st.st_size, st.st_mtime_ns]
    return {"version": INDEX_VERSION, "pool": stamp("pool.parquet"), "labelled": stamp("labelled.jsonl"),
            "tiers": stamp("tiers.joblib")}


def _write_indexes(folder: Path, rec: ModelParts) -> None:
    """Write ``<folder>/indexes``: the pool as an uncompressed Arrow file (mapped from disk at load),
    the labelled papers without their context texts (only the context index reads those), and the
    context, neighbour and name indexes. Written into a temporary folder and renamed, so a reader
    sees all of it or none; a folder that cannot be written is left as it is (the next load builds
    the indexes in memory again)."""
    final = folder / INDEX_DIR
    tmp = folder / f".{INDEX_DIR}-{os.getpid()}"
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        gen = rec.candidates
        gen.pool.write(tmp / "pool.arrow", _pool_columns(gen.pool))
        with open(tmp / "labelled.pickle", "wb") as fh:     # a pickle reads 5x faster than the JSON lines
            pickle.dump(_without_contexts(rec.labelled), fh, protocol=5)
        gen.cindex.save(tmp / "contexts")
        gen.nindex.save(tmp / "neighbours")
        gen.names.save(tmp / "names.pickle")
        rec.tiers.save_arrays(tmp / "tiers")
        DraftIndexes.write(tmp, gen.pool, gen.nindex)
        atomic_write_json(tmp / "key.json", _index_key(folder))
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
    except OSError:
        pass       # read-only model folder, or another process wrote the same indexes first
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _without_contexts(labelled: list[LabelledPaper]) -> list[LabelledPaper]:
    """Copies of the labelled papers without their context texts, every cited id one shared string
    object: the pickle holds each id once, and a loaded model one string per cited paper instead of
    one per citation."""
    ids: dict[str, str] = {}
    return [replace(p, contexts={}, cites=[replace(c, paper_id=ids.setdefault(c.paper_id, c.paper_id))
                                           for c in p.cites]) for p in labelled]


def _pool_columns(pool) -> tuple[str, ...]:
    """The columns a saved pool keeps: :data:`POOL_COLUMNS`, and the :data:`WORK_COLUMNS` some entry has."""
    return POOL_COLUMNS + tuple(c for c in WORK_COLUMNS if any(v is not None for v in pool.column(c)))


def _saved_indexes(folder: Path) -> Path | None:
    """``<folder>/indexes`` when it was built from this folder's pool and labelled papers."""
    saved = folder / INDEX_DIR
    return saved if read_json(saved / "key.json", missing_ok=True) == _index_key(folder) else None


def _from_saved(saved: Path | None, load: Callable[[Path], T], build: Callable[[], T]) -> T:
    """``load(saved)`` when the saved indexes are current and readable, else ``build()``."""
    if saved is not None:
        try:
            return load(saved)
        except (MustciteError, OSError, EOFError, KeyError, ValueError, AttributeError, pickle.UnpicklingError):
            pass     # damaged or of another version: build it again
    return build()


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    return pq.read_table(path).to_pylist()


def _read_labelled(path: Path) -> list[LabelledPaper]:
    return [LabelledPaper.from_dict(obj) for _, obj in iter_jsonl(path)]
