"""Lexical evidence shared by the SCIDOCA floors (:mod:`.floors`) and the learned systems
(:mod:`.discovery`, :mod:`.masked`, :mod:`.sentences`).

* :data:`MASK` finds the ``[MASKn]`` slots of a Task 2 paragraph, :data:`SENTENCE_END` the
  sentence boundaries of a paragraph;
* :func:`bm25_tokenizer` tokenises as :mod:`mustcite.retrieval.bm25` does (bm25s English stop
  words + PyStemmer English stemmer), :func:`bm25_text` is the text a candidate is indexed by
  (``title + abstract``), :class:`ParagraphBM25` scores queries against one paragraph's candidates
  (the paragraph's own candidate list is the collection for IDF and length normalisation);
* :func:`window_query` is the words either side of a slot;
* :func:`ranks` and :func:`relative` turn a column of scores into ranks (1 = best) and into
  shares of the best score, as features.
"""

from __future__ import annotations

import re

import bm25s
import numpy as np
import Stemmer

MASK = re.compile(r"\[MASK\d+\]")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


def bm25_tokenizer():
    """A function ``texts -> token lists`` (bm25s English stop words, PyStemmer English stemmer)."""
    stemmer = Stemmer.Stemmer("english")

    def tokenize(texts: list[str]) -> list[list[str]]:
        if not texts:
            return []
        return bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)

    return tokenize


def bm25_text(c) -> str:
    """The text a candidate is scored by: its title and abstract."""
    return f"{c.title} {c.abstract}".strip()


class ParagraphBM25:
    """BM25 over one paragraph's candidates (bm25s); ``scores(query_tokens)`` -> one per candidate."""

    def __init__(self, doc_tokens: list[list[str]], k1: float, b: float, method: str):
        self.n = len(doc_tokens)
        # bm25s cannot index an all-empty collection; such candidates all score 0
        self._empty = not any(doc_tokens)
        if not self._empty:
            self._bm25 = bm25s.BM25(k1=k1, b=b, method=method)
            self._bm25.index([t or ["\x00"] for t in doc_tokens], show_progress=False)
            self._vocab = self._bm25.vocab_dict

    def scores(self, query: list[str]) -> np.ndarray:
        if self._empty:
            return np.zeros(self.n, dtype=np.float32)
        q = [t for t in query if t in self._vocab]
        if not q:
            return np.zeros(self.n, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(q), dtype=np.float32)


def window_query(text: str, mask: str, k: int) -> str:
    """The ``k`` words either side of each occurrence of ``mask`` (other masks removed)."""
    words = text.split()
    parts = []
    for i, w in enumerate(words):
        if mask in w:
            parts.extend(words[max(0, i - k):i] + [w.replace(mask, " ")] + words[i + 1:i + 1 + k])
    return MASK.sub(" ", " ".join(parts))


def ranks(scores: np.ndarray) -> np.ndarray:
    """The rank of each score (1 = highest; ties in order), as float32."""
    order = np.argsort(-scores, kind="stable")
    rank = np.empty(len(scores), dtype=np.float32)
    rank[order] = np.arange(1, len(scores) + 1)
    return rank


def relative(scores: np.ndarray) -> np.ndarray:
    """Each score divided by the highest (all zeros when none is above 0)."""
    top = float(scores.max()) if len(scores) else 0.0
    return scores / top if top > 0 else np.zeros_like(scores)
