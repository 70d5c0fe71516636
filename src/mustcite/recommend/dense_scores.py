"""Cosine scores of queries against the pool's dense vectors.

A model loaded from disk maps the vectors from ``pool_vectors.npy`` (:mod:`.model_store`). Scoring one
query reads all of them; :func:`dense_scores` reads a memory-mapped array in slices of
:data:`SLICE_ROWS` rows and lets each slice's pages go once scored, so a one-shot command holds a
slice, not the whole array. The file stays in the page cache, so the next query (or command) reads
it again from memory. A server copies the vectors into memory once (``Recommender.read_into_memory``)
and scores straight from the array. Scores are the same either way: each row's dot product is
computed by the same matrix-vector product.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..retrieval.memory import release_pages

#: rows of vectors read per slice of a memory-mapped array (16,384 x 384 float32: 24 MB)
SLICE_ROWS = 16384
#: queries scored per pass over a memory-mapped array
QUERIES_PER_PASS = 64


def dense_scores(vecs: np.ndarray, qvecs: np.ndarray) -> Iterator[np.ndarray]:
    """Each query's cosine scores over every row of ``vecs`` (rows and queries unit-normalised), in
    query order, one array of ``len(vecs)`` float32 per query."""
    if not isinstance(vecs, np.memmap):
        for q in qvecs:
            yield vecs @ q
        return
    for start in range(0, len(qvecs), QUERIES_PER_PASS):
        block = qvecs[start:start + QUERIES_PER_PASS]
        out = np.empty((len(block), len(vecs)), dtype=np.float32)
        for lo in range(0, len(vecs), SLICE_ROWS):
            part = np.asarray(vecs[lo:lo + SLICE_ROWS])
            for j, q in enumerate(block):
                out[j, lo:lo + len(part)] = part @ q
            release_pages(vecs)
        yield from out
