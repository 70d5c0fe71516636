"""The on-disk cache of normalised transformer token vectors (:class:`TokenCache`) and the encoder
that fills it and projects what it holds (:class:`TokenEncoder`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ..embeddings import text_key
from ..vectors import default_cache_root
from .model import ColbertModel


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
        vecs = (np.concatenate([np.asarray(a, dtype=np.float16) for a in arrays]) if arrays
                else np.zeros((0, 384), np.float16))
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



@dataclass
class EncodeStats:
    encoded: int = 0
    seconds: float = 0.0


class TokenEncoder:
    """Token embeddings of texts through the cache; only missing texts are encoded (progress bar)."""

    def __init__(self, model: ColbertModel, cache_root: str | Path | None = None):
        self.model = model
        root = Path(cache_root) if cache_root else default_cache_root()
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

