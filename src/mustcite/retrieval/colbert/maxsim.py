"""MaxSim scoring: PyLate's (:func:`maxsim`, :func:`rerank_candidates`) and the exhaustive exact
search over every document's token vectors (:class:`FlatTokenIndex`)."""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from ... import lazy_libs
from .model import require_pylate


def maxsim(query: np.ndarray, docs: list[np.ndarray]) -> np.ndarray:
    """PyLate's MaxSim (``scores.colbert_scores``): per doc, the sum over query tokens of the best
    dot product with a doc token (vectors are normalised, so dot = cosine). Docs are padded to one
    length and, as in PyLate, a padded (masked) position scores 0, not minus infinity."""
    colbert_scores = require_pylate().scores.colbert_scores
    torch = lazy_libs.torch("ColBERT")
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
    rank = require_pylate().rank
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
                raise ValueError(f"document {i}: {len(a)} token vectors, "
                                 f"{self.offsets[i + 1] - self.offsets[i]} expected")
            self.matrix[self.offsets[i]:self.offsets[i + 1]] = a

    @classmethod
    def from_arrays(cls, arrays: list[np.ndarray], dim: int) -> FlatTokenIndex:
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
        torch = lazy_libs.torch("ColBERT")
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

