"""BM25 over title + abstract (bm25s, English stop words, PyStemmer Snowball stemmer).

``k1``/``b`` and the bm25s variant are recorded in :meth:`BM25Retriever.metadata`, which the run
writers store next to every run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import Stemmer

from ..errors import MustciteError
from ..io import atomic_write_json
from .base import Results, as_docs
from .index_meta import read_meta
from .memory import release_pages


def _stemmer():
    return Stemmer.Stemmer("english")


def _sorted_vocab(tokenized):
    """``tokenized`` with its vocabulary numbered in sorted token order. bm25s numbers the stems in
    the order of a Python set, which changes from process to process (string hashing is seeded per
    process), so the same texts would give a differently laid out, though equal, index; sorted, two
    builds write the same bytes."""
    from bm25s.tokenization import Tokenized  # ~25 ms with asyncio: not at the recommender's start-up

    vocab = {t: i for i, t in enumerate(sorted(tokenized.vocab))}
    remap = np.empty(len(vocab), dtype=np.int64)
    for token, old in tokenized.vocab.items():
        remap[old] = vocab[token]
    return Tokenized(ids=[remap[np.asarray(d, dtype=np.int64)].tolist() for d in tokenized.ids], vocab=vocab)


class BM25Retriever:
    """Sparse keyword retrieval (Robertson et al. 1995) as bm25s implements it (Lucene variant)."""

    name = "bm25"
    #: whether a mapped index's pages stay in this process once read (:meth:`read_into_memory`)
    _resident = False

    def __init__(self, k1: float = 1.5, b: float = 0.75, method: str = "lucene"):
        self.k1, self.b, self.method = float(k1), float(b), method
        self._bm25 = None
        self._ids: list[str] = []

    def _tokenize(self, texts: list[str], *, ids: bool):
        import bm25s  # ~25 ms with asyncio: not at the recommender's start-up

        got = bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer(), return_ids=ids, show_progress=False)
        return _sorted_vocab(got) if ids else got

    def index(self, pool) -> None:
        import bm25s  # ~25 ms with asyncio: not at the recommender's start-up

        docs = as_docs(pool)
        if not docs:
            raise MustciteError("cannot index an empty pool")
        self._ids = [d.id for d in docs]
        self._bm25 = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        # building takes a few seconds even for the whole corpus: no bar of its own
        self._bm25.index(self._tokenize([d.text for d in docs], ids=True), show_progress=False)

    def search(self, queries, k: int = 100, *, mask: np.ndarray | None = None) -> Results:
        """Top ``k`` per query; ``mask`` (one weight per indexed doc, 0 = never) restricts the
        search before the top ``k`` is taken (bm25s ``weight_mask``)."""
        if self._bm25 is None:
            raise MustciteError("BM25 index is empty: call index() or load() first")
        qs = as_docs(queries, id_key="id")
        k = max(1, min(int(k), len(self._ids)))
        tokens = self._tokenize([q.text for q in qs], ids=False)
        extra = {} if mask is None else {"weight_mask": np.asarray(mask, dtype=np.float32)}
        # a progress bar only for a search that takes seconds (2,000 queries of a 139K pool: about 4 s)
        docs, scores = self._bm25.retrieve(tokens, k=k, show_progress=len(qs) > 2000, n_threads=0, **extra)
        if not self._resident:
            # a one-shot command holds only what one search reads: the postings it touched leave
            # this process's memory (a draft's audit reads three such indexes; they stay in the page cache)
            for arr in getattr(self._bm25, "scores", {}).values():
                release_pages(arr)
        out: Results = {}
        for q, row, srow in zip(qs, np.asarray(docs), np.asarray(scores)):
            keep = srow > 0                     # in numpy: a query can have thousands of hits
            out[q.id] = list(zip([self._ids[i] for i in row[keep].tolist()], srow[keep].tolist()))
        return out

    def read_into_memory(self) -> None:
        """Read a memory-mapped index's pages now and keep them (a long-running server does, so that
        no request pays the first reads of the postings it touches)."""
        self._resident = True
        for arr in getattr(self._bm25, "scores", {}).values():
            if isinstance(arr, np.memmap):
                np.asarray(arr).view(np.uint8).sum()

    def metadata(self) -> dict[str, Any]:
        return {"method": self.name, "k1": self.k1, "b": self.b, "variant": self.method,
                "tokenizer": "bm25s en stopwords + PyStemmer english", "fields": "title + abstract",
                "docs": len(self._ids)}

    def save(self, path: str | Path) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self._bm25.save(str(path / "bm25s"))
        atomic_write_json(path / "ids.json", self._ids, indent=None)
        atomic_write_json(path / "meta.json", self.metadata())

    @classmethod
    def load(cls, path: str | Path, *, mmap: bool = False) -> BM25Retriever:
        """An index written by :meth:`save`; ``mmap``: map its score arrays from disk instead of
        reading them (a search touches only the query terms' pages)."""
        import bm25s  # ~25 ms with asyncio: not at the recommender's start-up

        path = Path(path)
        meta = read_meta(path / "meta.json")
        r = cls(k1=meta["k1"], b=meta["b"], method=meta.get("variant", "lucene"))
        r._bm25 = bm25s.BM25.load(str(path / "bm25s"), mmap=mmap)
        r._ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
        return r
