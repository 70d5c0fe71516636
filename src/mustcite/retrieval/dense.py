"""Dense retrieval with any sentence-transformers model (default: the shipped all-MiniLM-L6-v2),
the same model exported to ONNX with int8 weights (``model_path="onnx-int8:minilm"``, made by
:mod:`mustcite.retrieval.onnx_export`: ~1.5-2x faster on CPU, vectors within cos 0.99 of MiniLM's),
a static model2vec model distilled from it (``model_path="static:minilm"``, see
:mod:`mustcite.retrieval.static`: ~100x faster, much weaker),
or a folder that already holds an ONNX encoder (``model_path="onnx:FOLDER"``, or the bare folder:
``model.onnx`` + ``tokenizer.json``, run as it is, mean-pooled unless ``pooling="cls"``), such as
inCite's citation-tuned MiniLM (``make incite-model``, then ``onnx:.models/incite-minilm-onnx``
with ``max_seq_length=512`` as inCite encodes).

Title + abstract are encoded (L2-normalised, so inner product = cosine) through the on-disk
:class:`~mustcite.retrieval.embeddings.EmbeddingCache`, keyed by the model's content, so MiniLM
and a static model never share cached vectors. Search is exact (faiss ``IndexFlatIP``)
unless ``ann="hnsw"`` or ``ann="ivf"`` asks for an approximate faiss index.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import lazy_libs
from ..engine import current_engine
from ..errors import MustciteError, UsageError
from ..io import read_json
from .base import Results, as_docs
from .embeddings import EmbeddingCache, model_key, model_name
from .index_meta import read_meta
from .onnx_export import ONNX_FILE, ONNX_MANIFEST, ensure_onnx_int8, is_onnx_model, is_onnx_spec, onnx_source
from .static import DEFAULT_MAX_TOKENS, StaticEncoder, ensure_static_model, is_static_model, is_static_spec
from .static import read_manifest as read_static_manifest
from .vectors import ANN, build_faiss_index, default_cache_root, default_model_path, load_index, save_index

#: fewer texts to encode than this are encoded in this process (a worker pool costs a second or two
#: to start and load the encoder in)
LOCAL_POOL_MIN_TEXTS = 2000


class DenseRetriever:
    """Bi-encoder retrieval; embeddings cached per model key and text sha.

    ``model_path``: a sentence-transformers folder (default: the shipped MiniLM), a model2vec
    folder, a static spec such as ``static:minilm`` (distilled on first use into
    ``<cache>/static/``, about a minute on 2 CPU cores), or ``onnx-int8:minilm`` (exported and
    quantised on first use into ``<cache>/onnx/``, a few seconds), or ``onnx:FOLDER`` / a bare
    folder holding ``model.onnx`` + ``tokenizer.json`` and no torch weights (run as it is, fp32;
    ``pooling="mean"`` by default or ``"cls"``). ``max_seq_length`` and ``batch_size`` default to
    256 and 32 for transformers (256 for ONNX), 512 and 1024 for static."""

    def __init__(self, model_path: str | None = None, *, batch_size: int | None = None,
                 max_seq_length: int | None = None, device: str | None = None, ann: str | None = None,
                 cache_dir: str | Path | None = None, pooling: str | None = None):
        if ann not in ANN:
            raise UsageError(f"unknown ANN index {ann!r}", hint="use hnsw or ivf")
        cache_root = Path(cache_dir) if cache_dir else default_cache_root()
        self.spec = (str(model_path) if is_static_spec(model_path) or is_onnx_spec(model_path)
                     or is_onnx_folder_spec(model_path) else None)
        if is_static_spec(self.spec):
            self.model_path = str(ensure_static_model(self.spec, cache_root))
        elif is_onnx_spec(self.spec):
            self.model_path = str(ensure_onnx_int8(onnx_source(self.spec), cache_root))
        elif self.spec:
            self.model_path = onnx_folder_from_spec(self.spec)
        else:
            self.model_path = str(model_path or default_model_path())
        if not Path(self.model_path).is_dir():
            raise MustciteError("model folder not found", path=self.model_path)
        self.static = is_static_model(self.model_path)
        # an ONNX encoder folder used as it is (fp32, e.g. inCite's MiniLM); the int8 export has a manifest
        self.onnx_file = (None if is_onnx_model(self.model_path)
                          else onnx_folder_file(self.model_path, explicit=is_onnx_folder_spec(self.spec)))
        if self.spec is None and self.onnx_file:
            self.spec = ONNX_FOLDER_PREFIX + self.model_path
        elif is_onnx_folder_spec(self.spec) and not self.onnx_file:
            raise MustciteError("not an ONNX encoder folder: it needs model.onnx (or onnx/model.onnx) and "
                                "tokenizer.json", path=self.model_path,
                                hint="for inCite's MiniLM run `make incite-model`")
        self.onnx = is_onnx_model(self.model_path) or bool(self.onnx_file)
        if pooling not in (None, "mean", "cls"):
            raise UsageError(f"unknown pooling {pooling!r}", hint="use cls or mean")
        if pooling and not self.onnx_file and pooling != "mean":
            raise UsageError(f"pooling {pooling!r} applies to ONNX folders and Hugging Face folders only")
        self.pooling = pooling or "mean"
        if max_seq_length is None:
            max_seq_length = DEFAULT_MAX_TOKENS if self.static else 256
        if batch_size is None:
            batch_size = 1024 if self.static else 256 if self.onnx else 32
        self.batch_size, self.max_seq_length, self.device, self.ann = batch_size, max_seq_length, device, ann
        self.key = model_key(self.model_path, max_seq_length=max_seq_length, normalize=True)
        self.name = model_name(self.model_path)
        info = {"model": self.name, "normalize": True, "max_seq_length": max_seq_length}
        if self.static or self.onnx:
            info["encoder"] = "static" if self.static else "onnx" if self.onnx_file else "onnx-int8"
        if self.onnx_file:
            # model_key reads the int8 file only: key the folder by its ONNX weights and pooling too
            self.key = onnx_folder_key(self.model_path, self.onnx_file, max_seq_length=max_seq_length,
                                       pooling=self.pooling)
            info.update(onnx_file=self.onnx_file, pooling=self.pooling)
        self.cache = EmbeddingCache(cache_root, self.key, info=info)
        self._model = None
        self.engine = None             # None: mustcite.engine.current_engine()
        self._ids: list[str] = []
        self._vectors: np.ndarray | None = None
        self._index = None

    @property
    def model(self):
        if self._model is None:
            self._model = self.spec_for_workers().load()
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.spec_for_workers().encode_with(self.model, texts)

    def spec_for_workers(self, threads: int | None = None) -> EncoderSpec:
        """What a worker process needs to encode like this retriever (pickles; no model inside);
        ``threads``: the ONNX encoder's threads in each worker (default: every CPU it may use)."""
        return EncoderSpec(self.model_path, self.static, self.onnx, self.max_seq_length, self.batch_size,
                           self.device, self.onnx_file, self.pooling, threads)

    def embed(self, texts: list[str], desc: str = "encoding") -> np.ndarray:
        """Vectors through the embedding cache; the missing ones are encoded here, or on the
        workers of a distributed engine (``self.engine``, default the process-wide one)."""
        engine = self.engine or current_engine()
        if not engine.local:
            return self.cache.embed(texts, self.spec_for_workers(), batch_size=self.batch_size, desc=desc,
                                    engine=engine)
        if self.onnx and engine.workers() > 1 and self.cache.missing_count(texts) >= LOCAL_POOL_MIN_TEXTS:
            # onnxruntime's int8 kernels gain little from a second thread: one single-threaded
            # encoder per CPU encodes about 1.65 times as many texts per second on 2 cores
            return self.cache.embed(texts, self.spec_for_workers(threads=1), batch_size=self.batch_size,
                                    desc=desc, engine=engine)
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
        meta = {"method": "dense", "model": self.name, "model_path": self.model_path, "model_key": self.key,
                "max_seq_length": self.max_seq_length, "normalize": True, "search": self.ann or "exact",
                "fields": "title + abstract", "docs": len(self._ids)}
        if self.static:
            # the spec lets a loader re-distil when the cached folder is gone (another machine)
            meta.update(encoder="static", spec=self.spec, static=read_static_manifest(self.model_path))
        elif self.onnx_file:
            meta.update(encoder="onnx", spec=self.spec, onnx_file=self.onnx_file, pooling=self.pooling)
        elif self.onnx:
            meta.update(encoder="onnx-int8", spec=self.spec, onnx=self._onnx_manifest())
        return meta

    def _onnx_manifest(self) -> Any:
        """The int8 export's manifest, recorded in the metadata ({} when it is gone)."""
        try:
            return read_json(Path(self.model_path) / ONNX_MANIFEST, missing_ok=True) or {}
        except MustciteError:
            # provenance only: a damaged manifest must not fail a run whose encoder loaded and ran
            return {}

    def save(self, path: str | Path) -> None:
        save_index(path, self._ids, self._vectors, self.metadata())

    @classmethod
    def load(cls, path: str | Path, *, cache_dir: str | Path | None = None) -> DenseRetriever:
        path = Path(path)
        meta = read_meta(path / "meta.json")
        ann = None if meta.get("search") == "exact" else meta.get("search")
        r = cls(_saved_model(meta), max_seq_length=meta["max_seq_length"], ann=ann, cache_dir=cache_dir,
                pooling=meta.get("pooling"))
        r._ids, r._vectors = load_index(path)
        r._index = build_faiss_index(r._vectors, ann)
        return r


_WORKER_MODELS: dict[tuple, Any] = {}     # per worker process: EncoderSpec -> loaded model


@dataclass(frozen=True)
class EncoderSpec:
    """A dense encoder by reference: called on a batch of texts it loads the model once per process
    (a Ray worker keeps it across tasks) and returns its L2-normalised vectors."""

    model_path: str
    static: bool
    onnx: bool
    max_seq_length: int
    batch_size: int
    device: str | None = None
    onnx_file: str | None = None       # an ONNX folder's model file (None: the int8 export's)
    pooling: str = "mean"
    threads: int | None = None         # the ONNX encoder's threads (None: every CPU it may use)

    def load(self):
        if self.static:
            return StaticEncoder(self.model_path, max_length=self.max_seq_length)
        if self.onnx:
            return OnnxEncoder(self.model_path, max_length=self.max_seq_length, onnx_file=self.onnx_file,
                               pooling=self.pooling, threads=self.threads)
        SentenceTransformer = lazy_libs.sentence_transformers("the dense encoder").SentenceTransformer
        model = SentenceTransformer(self.model_path, device=self.device or ("cuda" if _cuda() else "cpu"))
        model.max_seq_length = self.max_seq_length
        return model

    def encode_with(self, model, texts: list[str]) -> np.ndarray:
        if self.static or self.onnx:
            return model.encode(texts)
        return model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)

    def __call__(self, texts: list[str]) -> np.ndarray:
        key = astuple(self)
        if key not in _WORKER_MODELS:
            _WORKER_MODELS.clear()          # one model per worker at a time
            _WORKER_MODELS[key] = self.load()
        return np.asarray(self.encode_with(_WORKER_MODELS[key], texts), dtype=np.float32)


def _saved_model(meta: dict[str, Any]) -> str | None:
    """The model a saved :meth:`DenseRetriever.metadata` names: its folder if still there, else its
    static spec (re-distilled from the shipped weights), else the folder (which then fails loudly)."""
    path = meta.get("model_path")
    if is_onnx_folder_spec(meta.get("spec")) and path and Path(path).is_dir():
        return meta["spec"]            # an ONNX folder run as such, even if it also holds torch weights
    if path and Path(path).is_dir():
        return path
    if is_static_spec(meta.get("spec")) or is_onnx_spec(meta.get("spec")):
        return meta["spec"]
    return path


def dense_from_meta(meta: dict[str, Any] | None, *, cache_dir: str | Path | None = None,
                    **options: Any) -> DenseRetriever:
    """A :class:`DenseRetriever` that encodes like the one whose :meth:`~DenseRetriever.metadata`
    was saved (model or static spec, max_seq_length); the default MiniLM when ``meta`` is empty."""
    meta = meta or {}
    kw: dict[str, Any] = {"cache_dir": cache_dir, **options}
    model = _saved_model(meta)
    if model:
        kw["model_path"] = model
    if meta.get("max_seq_length"):
        kw["max_seq_length"] = meta["max_seq_length"]
    if meta.get("pooling") and meta.get("encoder") == "onnx":
        kw["pooling"] = meta["pooling"]
    return DenseRetriever(**kw)


# ------------------------------------------------------------------------------ ONNX encoder folders

ONNX_FOLDER_PREFIX = "onnx:"
#: where an ONNX encoder folder keeps its model, in the order looked for (optimum and
#: sentence-transformers exports use onnx/model.onnx)
ONNX_FOLDER_FILES = ("model.onnx", "onnx/model.onnx")


def is_onnx_folder_spec(spec: Any) -> bool:
    return isinstance(spec, str) and spec.startswith(ONNX_FOLDER_PREFIX)


def onnx_folder_from_spec(spec: str) -> str:
    rest = spec[len(ONNX_FOLDER_PREFIX):].strip()
    if not rest:
        raise UsageError(f"ONNX model spec {spec!r} names no folder",
                         hint="use onnx:FOLDER (a folder with model.onnx and tokenizer.json)")
    path = Path(rest).expanduser()
    if not path.is_dir():
        hint = "run `make incite-model`" if "incite" in rest else "give a folder with model.onnx and tokenizer.json"
        raise MustciteError("ONNX model folder not found", path=str(path), hint=hint)
    return str(path)


def onnx_folder_file(path: str | Path, *, explicit: bool = False) -> str | None:
    """The ONNX file of a ready-made ONNX encoder folder (relative to it), or None if it is not one.
    A folder that also holds torch weights (a sentence-transformers model shipping an ``onnx/``
    export) counts only when asked for ``explicit``-ly (``onnx:FOLDER``)."""
    path = Path(path)
    if not (path / "tokenizer.json").is_file():
        return None
    if not explicit and any((path / w).is_file() for w in ("model.safetensors", "pytorch_model.bin")):
        return None
    return next((f for f in ONNX_FOLDER_FILES if (path / f).is_file()), None)


def onnx_folder_key(path: str | Path, onnx_file: str, *, max_seq_length: int, pooling: str) -> str:
    """Embedding-cache key of an ONNX encoder folder: its configs and tokenizer (as
    :func:`~mustcite.retrieval.embeddings.model_key`), the size and first and last MiB of its ONNX
    file, the pooling and the max length; same model and settings, same key on any machine."""
    base = model_key(path, max_seq_length=max_seq_length, normalize=True)
    f = Path(path) / onnx_file
    size = f.stat().st_size
    h = hashlib.sha256(f"{base};{onnx_file}:{size};pooling={pooling}".encode())
    with open(f, "rb") as fh:
        h.update(fh.read(1 << 20))
        fh.seek(max(0, size - (1 << 20)))
        h.update(fh.read(1 << 20))
    return f"{base.rsplit('-', 1)[0]}-onnx-{h.hexdigest()[:12]}"


class OnnxEncoder:
    """Mean- (or CLS-) pooled, L2-normalised sentence vectors from an ONNX encoder (onnxruntime,
    CPU): mustcite's int8 export (``onnx_file=None``) or a ready-made folder's ``model.onnx`` whose
    first output is the last hidden state (or an already pooled ``[batch, dim]`` vector)."""

    SUB_BATCH = 32

    def __init__(self, path: str | Path, *, max_length: int = 256, onnx_file: str | None = None,
                 pooling: str = "mean", threads: int | None = None):
        ort = lazy_libs.onnxruntime("the ONNX encoder")
        Tokenizer = lazy_libs.tokenizers("the ONNX encoder").Tokenizer
        path = Path(path)
        if pooling not in ("mean", "cls"):
            raise UsageError(f"unknown pooling {pooling!r}", hint="use cls or mean")
        self.pooling = pooling
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length)
        pad = self.tokenizer.token_to_id("[PAD]")
        self.tokenizer.enable_padding(pad_id=pad if pad is not None else 0, pad_token="[PAD]")
        options = ort.SessionOptions()
        # onnxruntime's default counts physical cores (1 on a 2-vCPU VM); use every CPU we may run on,
        # as torch does
        options.intra_op_num_threads = threads or _cpus()
        options.log_severity_level = 3          # errors only: the runtime's start-up notes are not the user's
        try:
            self.session = ort.InferenceSession(str(path / (onnx_file or ONNX_FILE)), options,
                                                providers=["CPUExecutionProvider"])
        except Exception as exc:       # onnxruntime raises its own exception types for a bad file
            raise MustciteError(f"cannot load the ONNX model: {exc}",
                                path=str(path / (onnx_file or ONNX_FILE))) from None
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str]) -> np.ndarray:
        out: list[np.ndarray | None] = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))    # little padding per batch
        for b in range(0, len(order), self.SUB_BATCH):
            idx = order[b:b + self.SUB_BATCH]
            enc = self.tokenizer.encode_batch([texts[i] for i in idx])
            feed = {"input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
                    "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64)}
            hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
            vec = pool_hidden(hidden, feed["attention_mask"], self.pooling)
            vec /= np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
            for j, i in enumerate(idx):
                out[i] = vec[j]
        if not texts:
            return np.zeros((0, int(self.session.get_outputs()[0].shape[-1] or 0)), dtype=np.float32)
        return np.stack(out).astype(np.float32)


def pool_hidden(hidden: np.ndarray, attention_mask: np.ndarray, pooling: str = "mean") -> np.ndarray:
    """Sentence vectors from token states ``[batch, seq, dim]``: the first ([CLS]) token's, or
    the mean over the attention mask; ``[batch, dim]`` input is already pooled and passes through."""
    hidden = np.asarray(hidden, dtype=np.float32)
    if hidden.ndim == 2:
        return hidden.copy()
    if pooling == "cls":
        return hidden[:, 0].copy()
    mask = np.asarray(attention_mask)[..., None].astype(np.float32)
    return (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)


def _cpus() -> int:
    """Threads for the encoder: ``OMP_NUM_THREADS`` when set (a server worker's share), else the CPUs
    this process may run on."""
    if os.environ.get("OMP_NUM_THREADS", "").isdigit() and int(os.environ["OMP_NUM_THREADS"]) > 0:
        return int(os.environ["OMP_NUM_THREADS"])
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _cuda() -> bool:
    try:
        return bool(lazy_libs.torch().cuda.is_available())
    except Exception:
        return False
