"""Late interaction (ColBERT) over the shipped MiniLM through PyLate: token embeddings, MaxSim.

Two models, one encoder:

* ``colbert`` (zero-shot): PyLate's ``models.ColBERT`` over MiniLM with an *identity* 384 -> 384
  projection (PyLate would otherwise add an untrained random 384 -> 128 layer), no [Q]/[D] marker
  tokens (they would be new, untrained vocabulary rows) and no [MASK] query expansion: MaxSim over
  MiniLM's own L2-normalised token embeddings. Documents drop PyLate's punctuation skiplist.
* ``colbert:FOLDER`` (ColBERT-NTX, ``mustcite benchmark train-colbert``): the same encoder plus
  a 384 -> 128 PyLate ``Dense`` projection trained with PyLate's ``losses.Contrastive`` (NT-Xent
  over MaxSim scores with in-batch negatives) on the train queries; the folder may also hold a
  fine-tuned transformer (``0_Transformer/``) when trained with ``train_encoder=True``.

Because the projection has no bias, ``normalize(normalize(h) @ W) == normalize(h @ W)``: the
normalised MiniLM token embeddings are encoded ONCE into an on-disk cache (:class:`TokenCache`,
float16, keyed by the transformer's content, the length limits and each text's sha256) and every
projection is applied on the fly. A trained transformer gets its own cache key.

Search, three modes (``mode``):

* ``index``: the pool's token embeddings in PyLate's Voyager HNSW index (``indexes.Voyager``,
  cosine, float32, M=64, ef 200; fast-plaid/PLAID is not installable here), candidate generation
  by token kNN and exact MaxSim re-scoring with ``retrieve.ColBERT`` -- a full-index run;
* ``exact`` (``colbert-exact[:FOLDER]``): exhaustive MaxSim of every query against every pool
  paper (:class:`FlatTokenIndex`: the projected token vectors in one float16 matrix, scored in
  blocks) -- a full-index run with no approximation and no build step beyond the token cache
  (Voyager's HNSW build took 28-82 s per 1,000 papers here at 128-384 dimensions, 0.3-0.9 h for
  the benchmark pool, and its queries 0.4-1.3 s each: ``benchmarks/results/colbert.json``);
* ``rerank``: BM25 top-``rerank_k`` per query re-scored by exact MaxSim (``pylate.rank.rerank``)
  -- a re-ranking run: its recall@K equals BM25's at ``rerank_k``.

PyLate 1.6.0 pins sentence-transformers 5.3; mustcite runs it on sentence-transformers 6 with two
small shims (:func:`_patch_pylate`) and builds the model from its modules (PyLate's own
``ColBERT(path)`` loader fails on sentence-transformers 6).
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataMissingError, MustciteError, UsageError
from ..io import atomic_write_json
from .base import Results, as_docs, peak_rss_mb, read_meta

PYLATE_HINT = ("pip install --no-deps pylate==1.6.0 && pip install ujson==5.12.0 voyager==2.1.0 "
               "datasets==5.2.0 (mustcite[colbert]; never a plain `pip install pylate`: it pulls CUDA torch)")
COLBERT_CONFIG = "colbert.json"
DENSE_DIR = "1_Dense"
TRANSFORMER_DIR = "0_Transformer"
MODES = ("index", "exact", "rerank")


def require_pylate():
    """The ``pylate`` module, or a clear error saying how to install it."""
    try:
        import pylate
        from pylate import indexes, losses, models, rank, retrieve  # noqa: F401  (fail here, not later)
    except ImportError as exc:
        raise MustciteError(f"ColBERT needs PyLate, which is not installed ({exc.name} is missing)",
                            hint=PYLATE_HINT) from None
    _patch_pylate()
    return pylate


_PATCHED = False


def _patch_pylate() -> None:
    """PyLate 1.6.0 on sentence-transformers 6: ``_text_length`` and ``_model_config`` are gone."""
    global _PATCHED
    if _PATCHED:
        return
    from pylate.models import ColBERT

    if not hasattr(ColBERT, "_text_length"):
        def _text_length(self, text):
            if isinstance(text, str):
                return len(text)
            if isinstance(text, dict):
                return len(next(iter(text.values()), ""))
            try:
                return sum(len(t) for t in text)
            except TypeError:
                return 1
        ColBERT._text_length = _text_length
    _PATCHED = True


@dataclass(frozen=True)
class ColbertSettings:
    """Token limits and batch size of the encoder (kept in a trained folder's ``colbert.json``)."""

    query_length: int = 128
    document_length: int = 180
    batch_size: int = 32


# ------------------------------------------------------------------------------ model


@dataclass
class ColbertModel:
    """A PyLate ColBERT = transformer + projection; ``projection`` None is the identity (zero-shot)."""

    transformer_path: str
    projection: Any = None              # pylate.models.Dense (384 -> dim, no bias) or None
    settings: ColbertSettings = field(default_factory=ColbertSettings)
    folder: str | None = None           # the trained folder it was loaded from
    _pylate: Any = None                 # the identity-projection pylate ColBERT that encodes

    @property
    def dim(self) -> int:
        return int(self.projection.out_features) if self.projection is not None else 384

    @property
    def name(self) -> str:
        return "colbert-ntx" if self.projection is not None else "colbert"

    def encoder(self):
        """PyLate ``models.ColBERT`` with an identity projection: normalised transformer token vectors."""
        if self._pylate is None:
            self._pylate = build_pylate(self.transformer_path, None, self.settings)
        return self._pylate

    def cache_key(self) -> str:
        return token_cache_key(self.transformer_path, self.settings)

    def project(self, vectors: np.ndarray) -> np.ndarray:
        """Token vectors (n, 384) -> this model's normalised (n, dim) vectors, float32."""
        v = np.asarray(vectors, dtype=np.float32)
        if self.projection is not None:
            w = self.projection.linear.weight.detach().cpu().numpy().astype(np.float32)   # (dim, 384)
            v = v @ w.T
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.maximum(n, 1e-12)


def build_pylate(transformer_path: str, projection, settings: ColbertSettings):
    """PyLate ``models.ColBERT`` from its modules: transformer + projection (identity when None)."""
    require_pylate()
    import torch
    from pylate import models
    from sentence_transformers.models import Transformer

    tr = Transformer(str(transformer_path), max_seq_length=max(settings.document_length, settings.query_length))
    dense = projection
    if dense is None:
        hidden = tr.get_word_embedding_dimension() if hasattr(tr, "get_word_embedding_dimension") \
            else tr.auto_model.config.hidden_size
        dense = models.Dense(in_features=hidden, out_features=hidden, bias=False, init_weight=torch.eye(hidden))
    m = models.ColBERT(modules=[tr, dense], device="cpu", query_length=settings.query_length,
                       document_length=settings.document_length, query_prefix="", document_prefix="",
                       do_query_expansion=False)
    m._model_config = getattr(m, "_model_config", None) or {}
    return m


def load_colbert(folder: str | Path | None = None) -> ColbertModel:
    """The zero-shot model (``folder`` None) or a trained ColBERT-NTX folder."""
    from .dense import default_model_path

    if folder is None:
        return ColbertModel(default_model_path())
    folder = Path(folder).expanduser()
    cfg_file = folder / COLBERT_CONFIG
    if not cfg_file.is_file():
        raise DataMissingError(f"{folder} is not a ColBERT model folder (no {COLBERT_CONFIG})",
                               hint="train one with `mustcite benchmark train-colbert`")
    require_pylate()
    try:
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        settings = ColbertSettings(**cfg["settings"])
    except (ValueError, KeyError, TypeError) as exc:
        raise MustciteError(f"bad ColBERT config: {exc}", path=cfg_file) from None
    transformer = folder / TRANSFORMER_DIR if (folder / TRANSFORMER_DIR).is_dir() else None
    if transformer is None:
        base = cfg.get("base_model") or ""
        transformer = Path(base) if base and Path(base).is_dir() else Path(default_model_path())
    projection = _load_dense(folder / DENSE_DIR) if (folder / DENSE_DIR).is_dir() else None
    return ColbertModel(str(transformer), projection, settings, folder=str(folder))


def _load_dense(folder: Path):
    """A saved PyLate ``Dense`` (its own ``Dense.load`` chokes on sentence-transformers 6 config keys)."""
    from pylate import models
    from safetensors.torch import load_file

    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        dense = models.Dense(in_features=int(cfg["in_features"]), out_features=int(cfg["out_features"]),
                             bias=bool(cfg.get("bias", False)), use_residual=bool(cfg.get("use_residual", False)))
        dense.load_state_dict(load_file(str(folder / "model.safetensors")))
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise MustciteError(f"cannot load the ColBERT projection: {exc}", path=folder) from None
    return dense.eval()


def save_colbert(model: ColbertModel, folder: str | Path, *, extra: dict[str, Any] | None = None) -> None:
    """``colbert.json`` + ``1_Dense/`` (PyLate Dense) [+ ``0_Transformer/`` when it was trained]."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if model.projection is not None:
        (folder / DENSE_DIR).mkdir(parents=True, exist_ok=True)
        model.projection.save(str(folder / DENSE_DIR))
    from .dense import default_model_path

    base = default_model_path()
    atomic_write_json(folder / COLBERT_CONFIG, {
        "library": "pylate", "pylate_version": _pylate_version(), "base_model": base,
        "dim": model.dim, "projection": DENSE_DIR if model.projection is not None else None,
        "transformer": TRANSFORMER_DIR if (folder / TRANSFORMER_DIR).is_dir() else "base_model",
        "settings": asdict(model.settings), "query_prefix": "", "document_prefix": "",
        "do_query_expansion": False, "similarity": "MaxSim", **(extra or {})})


def _pylate_version() -> str | None:
    try:
        import pylate

        return pylate.__version__
    except ImportError:
        return None


# ------------------------------------------------------------------------------ token cache


def token_cache_key(transformer_path: str | Path, settings: ColbertSettings) -> str:
    from .embeddings import model_key

    base = model_key(transformer_path, max_seq_length=0, normalize=True)
    h = hashlib.sha256(f"{base};q={settings.query_length};d={settings.document_length};"
                       f"pylate-identity-noprefix-noexpansion-v1".encode()).hexdigest()[:12]
    return f"{base.rsplit('-', 1)[0]}-colbert-{h}"


class TokenCache:
    """Normalised token embeddings (float16) per text sha256 and side (query/doc), on disk.

    ``<cache>/colbert/<key>/{doc,query}/shard-NNNNN.{keys,offsets,vecs}.npy``: ``keys`` (n, 32)
    uint8 text digests, ``offsets`` (n + 1) int64 row offsets into ``vecs`` (tokens, 384) float16.
    A shard is complete when its ``keys`` file exists (written last, by rename)."""

    def __init__(self, root: str | Path, key: str, side: str, shard_size: int = 2000):
        self.dir = Path(root) / "colbert" / key / side
        self.shard_size = shard_size
        self._index: dict[str, tuple[int, int]] = {}
        self._shards: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for f in sorted(self.dir.glob("shard-*.keys.npy")):
            s = int(f.name.split(".")[0].split("-")[1])
            keys = np.load(f)
            for row, k in enumerate(keys):
                self._index.setdefault(k.tobytes().hex(), (s, row))

    def __len__(self) -> int:
        return len(self._index)

    def _shard(self, s: int) -> tuple[np.ndarray, np.ndarray]:
        if s not in self._shards:
            self._shards[s] = (np.load(self.dir / f"shard-{s:05d}.offsets.npy"),
                               np.load(self.dir / f"shard-{s:05d}.vecs.npy", mmap_mode="r"))
        return self._shards[s]

    def release(self) -> None:
        """Unmap the shards read so far (their pages stop counting in this process's memory)."""
        self._shards.clear()

    def length(self, key: str) -> int:
        """The number of token vectors of a cached text (read from the offsets only)."""
        s, row = self._index[key]
        off, _ = self._shard(s)
        return int(off[row + 1] - off[row])

    def get(self, key: str) -> np.ndarray:
        s, row = self._index[key]
        off, vecs = self._shard(s)
        return np.asarray(vecs[off[row]:off[row + 1]], dtype=np.float32)

    def add(self, keys: list[str], arrays: list[np.ndarray]) -> None:
        if not keys:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        existing = [int(f.name.split(".")[0].split("-")[1]) for f in self.dir.glob("shard-*.keys.npy")]
        s = max(existing) + 1 if existing else 0
        lens = np.array([len(a) for a in arrays], dtype=np.int64)
        off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        vecs = np.concatenate([np.asarray(a, dtype=np.float16) for a in arrays]) if arrays else np.zeros((0, 384), np.float16)
        karr = np.frombuffer(b"".join(bytes.fromhex(k) for k in keys), dtype=np.uint8).reshape(-1, 32)
        for suffix, arr in (("offsets", off), ("vecs", vecs), ("keys", karr)):
            tmp = self.dir / f".shard-{s:05d}.{suffix}.npy.tmp"
            with open(tmp, "wb") as fh:
                np.save(fh, arr)
            tmp.replace(self.dir / f"shard-{s:05d}.{suffix}.npy")
        for row, k in enumerate(keys):
            self._index.setdefault(k, (s, row))

    def bytes_on_disk(self) -> int:
        return sum(f.stat().st_size for f in self.dir.glob("shard-*.npy")) if self.dir.is_dir() else 0


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class EncodeStats:
    encoded: int = 0
    seconds: float = 0.0


class TokenEncoder:
    """Token embeddings of texts through the cache; only missing texts are encoded (progress bar)."""

    def __init__(self, model: ColbertModel, cache_root: str | Path | None = None):
        self.model = model
        root = Path(cache_root) if cache_root else _default_cache()
        self.caches = {side: TokenCache(root, model.cache_key(), side) for side in ("doc", "query")}
        self.stats = EncodeStats()

    def raw(self, texts: list[str], *, is_query: bool, desc: str = "ColBERT encoding",
            progress: bool = True) -> list[np.ndarray]:
        """Normalised transformer token vectors (identity projection), float32, one array per text."""
        keys = self.ensure(texts, is_query=is_query, desc=desc, progress=progress)
        cache = self.caches["query" if is_query else "doc"]
        return [cache.get(k) for k in keys]

    def ensure(self, texts: list[str], *, is_query: bool, desc: str = "ColBERT encoding",
               progress: bool = True) -> list[str]:
        """Encode the texts missing from the cache (progress bar); returns every text's cache key."""
        from tqdm.auto import tqdm

        cache = self.caches["query" if is_query else "doc"]
        keys = [text_key(t) for t in texts]
        todo: dict[str, str] = {}
        for k, t in zip(keys, texts):
            if k not in cache._index and k not in todo:
                todo[k] = t
        if todo:
            enc = self.model.encoder()
            items = list(todo.items())
            bs = self.model.settings.batch_size
            t0 = time.perf_counter()
            bar = tqdm(total=len(items), desc=desc, unit="doc", disable=not progress or len(items) < 64)
            for start in range(0, len(items), cache.shard_size):
                chunk = sorted(items[start:start + cache.shard_size], key=lambda kt: len(kt[1]))
                out: list[np.ndarray] = []
                for b in range(0, len(chunk), bs):
                    batch = [t for _, t in chunk[b:b + bs]]
                    vecs = enc.encode(batch, is_query=is_query, batch_size=bs, show_progress_bar=False,
                                      convert_to_numpy=True)
                    out += [np.asarray(v, dtype=np.float32) for v in vecs]
                    bar.update(len(batch))
                cache.add([k for k, _ in chunk], out)
            bar.close()
            self.stats.encoded += len(items)
            self.stats.seconds += time.perf_counter() - t0
        return keys

    def encode(self, texts: list[str], *, is_query: bool, desc: str = "ColBERT encoding",
               progress: bool = True) -> list[np.ndarray]:
        """This model's normalised token vectors (projected), float32."""
        return [self.model.project(v) for v in self.raw(texts, is_query=is_query, desc=desc, progress=progress)]


def _default_cache() -> Path:
    from ..config import Workspace

    return Workspace.resolve().cache


# ------------------------------------------------------------------------------ scoring


def maxsim(query: np.ndarray, docs: list[np.ndarray]) -> np.ndarray:
    """PyLate's MaxSim (``scores.colbert_scores``): per doc, the sum over query tokens of the best
    dot product with a doc token (vectors are normalised, so dot = cosine). Docs are padded to one
    length and, as in PyLate, a padded (masked) position scores 0, not minus infinity."""
    require_pylate()
    import torch
    from pylate.scores import colbert_scores

    if not docs:
        return np.zeros(0, dtype=np.float32)
    dmax = max(len(d) for d in docs)
    dim = query.shape[1]
    pad = np.zeros((len(docs), dmax, dim), dtype=np.float32)
    mask = np.zeros((len(docs), dmax), dtype=np.float32)
    for i, d in enumerate(docs):
        pad[i, :len(d)] = d
        mask[i, :len(d)] = 1
    s = colbert_scores(torch.from_numpy(np.asarray(query, dtype=np.float32))[None], torch.from_numpy(pad),
                       documents_mask=torch.from_numpy(mask))
    return s[0].numpy()


def rerank_candidates(query_vecs: list[np.ndarray], candidates: list[list[str]],
                      doc_vecs: dict[str, np.ndarray], k: int) -> list[list[tuple[str, float]]]:
    """Exact MaxSim re-ranking of each query's candidates with ``pylate.rank.rerank``."""
    require_pylate()
    from pylate import rank

    out = []
    for qv, cands in zip(query_vecs, candidates):
        cands = [c for c in dict.fromkeys(cands) if c in doc_vecs]
        if not cands:
            out.append([])
            continue
        res = rank.rerank(documents_ids=[cands], queries_embeddings=[qv],
                          documents_embeddings=[[doc_vecs[c] for c in cands]], device="cpu")[0]
        out.append([(r["id"], float(r["score"])) for r in res[:k]])
    return out


class FlatTokenIndex:
    """Every document's token vectors in one float16 matrix with row offsets: exhaustive MaxSim.

    MaxSim here is the true one: the best doc token per query token over the document's real tokens
    (no padding positions), summed over the query's tokens. Documents are scored in blocks of about
    ``block_tokens`` token rows against chunks of about ``chunk_tokens`` query token rows, so memory
    stays at the matrix plus one (chunk x block) float32 product."""

    def __init__(self, lengths: list[int] | np.ndarray, dim: int):
        """An empty index for documents of these token counts; fill it with :meth:`put`."""
        self.offsets = np.concatenate([[0], np.cumsum(np.asarray(lengths, dtype=np.int64))]).astype(np.int64)
        self.matrix = np.zeros((int(self.offsets[-1]), dim), dtype=np.float16)

    def put(self, first: int, arrays: list[np.ndarray]) -> None:
        """The token vectors of documents ``first, first + 1, ...``."""
        for i, a in enumerate(arrays, first):
            if len(a) != self.offsets[i + 1] - self.offsets[i]:
                raise ValueError(f"document {i}: {len(a)} token vectors, {self.offsets[i + 1] - self.offsets[i]} expected")
            self.matrix[self.offsets[i]:self.offsets[i + 1]] = a

    @classmethod
    def from_arrays(cls, arrays: list[np.ndarray], dim: int) -> "FlatTokenIndex":
        index = cls([len(a) for a in arrays], dim)
        index.put(0, arrays)
        return index

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes + self.offsets.nbytes)

    def scores(self, query_vecs: list[np.ndarray], *, block_tokens: int = 131072, chunk_tokens: int = 2048,
               progress: bool = False) -> np.ndarray:
        """(queries, documents) MaxSim scores; an empty query or document scores minus infinity."""
        import torch
        from tqdm.auto import tqdm

        n_docs = len(self)
        out = np.full((len(query_vecs), n_docs), -np.inf, dtype=np.float32)
        chunks: list[list[int]] = []
        size = 0
        for i, q in enumerate(query_vecs):
            if len(q) == 0:
                continue
            if chunks and size + len(q) <= chunk_tokens:
                chunks[-1].append(i)
                size += len(q)
            else:
                chunks.append([i])
                size = len(q)
        stacked = []
        for idx in chunks:
            lens = [len(query_vecs[i]) for i in idx]
            q = torch.from_numpy(np.concatenate([np.asarray(query_vecs[i], dtype=np.float32) for i in idx]))
            stacked.append((np.array(idx), q, np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)))
        lens = np.diff(self.offsets)
        bar = tqdm(total=n_docs, desc="ColBERT exhaustive MaxSim", unit="doc", disable=not progress)
        d0 = 0
        while d0 < n_docs:
            d1 = int(np.searchsorted(self.offsets, self.offsets[d0] + block_tokens, side="right")) - 1
            d1 = min(max(d1, d0 + 1), n_docs)
            docs = d0 + np.nonzero(lens[d0:d1] > 0)[0]
            if len(docs):
                t0 = self.offsets[d0]
                block = torch.from_numpy(self.matrix[t0:self.offsets[d1]].astype(np.float32))
                starts = self.offsets[docs] - t0
                for idx, q, qstarts in stacked:
                    sims = (q @ block.T).numpy()                              # (query tokens, doc tokens)
                    best = np.maximum.reduceat(sims, starts, axis=1)          # best doc token per query token
                    out[np.ix_(idx, docs)] = np.add.reduceat(best, qstarts, axis=0)
            bar.update(d1 - d0)
            d0 = d1
        bar.close()
        return out

    def search(self, query_vecs: list[np.ndarray], k: int, **kw) -> list[list[tuple[int, float]]]:
        """Top ``k`` (document row, score) per query, best first."""
        scores = self.scores(query_vecs, **kw)
        k = max(1, min(int(k), len(self)))
        out = []
        for row in scores:
            top = np.argpartition(-row, k - 1)[:k]
            top = top[np.lexsort((top, -row[top]))]                      # ties: earlier document first
            out.append([(int(i), float(row[i])) for i in top if np.isfinite(row[i])])
        return out


# ------------------------------------------------------------------------------ retriever


class ColbertRetriever:
    """Late-interaction retrieval (see the module doc): ``mode="index"`` (PyLate Voyager index over
    every pool paper) or ``mode="rerank"`` (BM25 top-``rerank_k`` re-scored by MaxSim)."""

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
        self.cache_root = Path(cache_dir) if cache_dir else _default_cache()
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
            from .bm25 import BM25Retriever

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
        from pylate import indexes

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
        from pylate import retrieve

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
        return {"method": self.name, "library": f"pylate {_pylate_version()}", "mode": self.mode,
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
    def load(cls, path: str | Path, *, cache_dir: str | Path | None = None) -> "ColbertRetriever":
        path = Path(path)
        meta = read_meta(path / "meta.json")
        r = cls(meta.get("model_folder"), mode=meta.get("mode", "index"), rerank_k=meta.get("rerank_k") or 100,
                cache_dir=cache_dir, index_dir=path)
        r._ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
        r._docs = json.loads((path / "docs.json").read_text(encoding="utf-8"))
        if r.mode == "exact":
            r._flat = r._build_flat([r._docs[i] for i in r._ids])
        elif r.mode == "index":
            from pylate import indexes

            r._voyager = indexes.Voyager(index_folder=str(path), index_name="voyager", override=False,
                                         embedding_size=r.model.dim)
        else:
            from .bm25 import BM25Retriever

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


# ------------------------------------------------------------------------------ training


@dataclass
class ColbertTrainConfig:
    temperature: float = 1.0          # PyLate Contrastive default: MaxSim sums over ~100 query tokens
    epochs: int = 1
    batch_size: int = 16
    lr: float = 1e-3                  # projection only; 2e-5 is used for the transformer
    encoder_lr: float = 2e-5
    dim: int = 128
    seed: int = 13
    max_pairs: int | None = 3000
    train_encoder: bool = False       # False: frozen MiniLM, train the 384->dim projection only
    query_length: int = 128
    document_length: int = 180


def _pad(arrs: list[np.ndarray]):
    import torch

    n = max(len(a) for a in arrs)
    x = np.zeros((len(arrs), n, arrs[0].shape[1]), dtype=np.float32)
    m = np.zeros((len(arrs), n), dtype=np.int64)
    for i, a in enumerate(arrs):
        x[i, :len(a)] = a
        m[i, :len(a)] = 1
    return torch.from_numpy(x), torch.from_numpy(m)


class _CachedProjection:
    """What PyLate's ``losses.Contrastive`` calls as ``model(features)``: the cached normalised token
    vectors through the trainable projection (the frozen-transformer variant)."""

    skiplist: list[int] = []          # documents in the cache already lack PyLate's skiplist tokens
    do_query_expansion = False

    def __init__(self, dense):
        self.dense = dense

    def __call__(self, features):
        return self.dense({"token_embeddings": features["hidden"]})


def train_colbert(pairs: list[tuple[str, str]], out_dir: str | Path, *, config: ColbertTrainConfig | None = None,
                  cache_dir: str | Path | None = None, data_note: str = "", progress: bool = True) -> dict[str, Any]:
    """ColBERT-NTX: PyLate ``losses.Contrastive`` (NT-Xent over MaxSim with in-batch negatives,
    query -> document) on (query text, positive text) pairs. Saves the folder and a training card."""
    require_pylate()
    import torch
    from pylate import losses, models
    from tqdm.auto import tqdm

    from .ntxent import _batches

    cfg = config or ColbertTrainConfig()
    if cfg.temperature <= 0:
        raise UsageError("temperature must be > 0")
    rng = random.Random(cfg.seed)
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    if cfg.max_pairs and len(pairs) > cfg.max_pairs:
        pairs = rng.sample(pairs, cfg.max_pairs)
    settings = ColbertSettings(cfg.query_length, cfg.document_length)
    base = load_colbert(None)
    base.settings = settings
    hidden = 384
    dense = models.Dense(in_features=hidden, out_features=cfg.dim, bias=False)
    epoch_batches = [_batches(pairs, cfg.batch_size, rng) for _ in range(cfg.epochs)]
    total = sum(len(b) for b in epoch_batches)
    if total == 0:
        raise MustciteError("not enough distinct pairs to form a batch of 2")
    t0 = time.time()
    enc_s = 0.0
    if cfg.train_encoder:
        model = build_pylate(base.transformer_path, dense, settings)
        model.train()
        params = [{"params": model[0].parameters(), "lr": cfg.encoder_lr}, {"params": model[1].parameters(), "lr": cfg.lr}]
        loss_fn = losses.Contrastive(model=model, temperature=cfg.temperature)

        def feats(batch):
            q = model.tokenize([a for a, _ in batch], is_query=True)
            d = model.tokenize([b for _, b in batch], is_query=False)
            return [q, d]
    else:
        enc = TokenEncoder(base, cache_dir)
        te = time.time()
        qtexts = list(dict.fromkeys(q for q, _ in pairs))
        dtexts = list(dict.fromkeys(d for _, d in pairs))
        qv = dict(zip(qtexts, enc.raw(qtexts, is_query=True, desc="ColBERT train queries", progress=progress)))
        dv = dict(zip(dtexts, enc.raw(dtexts, is_query=False, desc="ColBERT train documents", progress=progress)))
        enc_s = time.time() - te
        wrapper = _CachedProjection(dense)
        params = [{"params": dense.parameters(), "lr": cfg.lr}]
        loss_fn = losses.Contrastive(model=wrapper, temperature=cfg.temperature)

        def feats(batch):
            out = []
            for arrs in ([qv[a] for a, _ in batch], [dv[b] for _, b in batch]):
                x, m = _pad(arrs)
                out.append({"hidden": x, "attention_mask": m, "input_ids": torch.zeros_like(m)})
            return out
    opt = torch.optim.AdamW(params)
    warm = max(1, int(total * 0.1))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (total - s) / max(1, total - warm)))
    before = dense.linear.weight.detach().clone()
    losses_per_epoch = []
    bar = tqdm(total=total, desc="ColBERT NT-Xent", unit="batch", disable=not progress)
    for batches in epoch_batches:
        run = 0.0
        for batch in batches:
            loss = loss_fn(feats(batch))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for g in params for p in g["params"]] if not cfg.train_encoder
                                           else model.parameters(), 1.0)
            opt.step()
            sched.step()
            run += float(loss.detach())
            bar.update(1)
        losses_per_epoch.append(round(run / max(1, len(batches)), 5))
    bar.close()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    trained = ColbertModel(base.transformer_path, dense, settings)
    if cfg.train_encoder:
        model.eval()
        model[0].save(str(out / TRANSFORMER_DIR))
        trained.transformer_path = str(out / TRANSFORMER_DIR)
    save_colbert(trained, out)
    card = {"method": "ColBERT-NTX: PyLate losses.Contrastive (NT-Xent / InfoNCE over MaxSim scores, "
                      "in-batch negatives, query -> document, scores / temperature)",
            "library": f"pylate {_pylate_version()}", "base_model": base.transformer_path,
            "trained": "transformer + projection" if cfg.train_encoder else "384->%d projection (MiniLM frozen)" % cfg.dim,
            "config": asdict(cfg), "pairs": len(pairs), "batches_per_epoch": [len(b) for b in epoch_batches],
            "steps": total, "loss_per_epoch": losses_per_epoch,
            "weight_change_l2": float((dense.linear.weight.detach() - before).norm()),
            "encode_seconds": round(enc_s, 2), "seconds": round(time.time() - t0, 2), "peak_rss_mb": peak_rss_mb(),
            "data": data_note,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    atomic_write_json(out / "training_card.json", card)
    return card
