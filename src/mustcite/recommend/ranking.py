"""Turning candidate scores into a ranked list: the deterministic top-k, and what to say when a
query has no candidate at all."""

from __future__ import annotations

import numpy as np

from .features import Candidate
from .text import WORD, english_stop_words


def has_searchable_words(text: str) -> bool:
    """Whether ``text`` has a word to search by: a word of two or more letters or digits, starting
    with a letter, that is not an English stopword. A query without one (``"the of and"``) gets no
    results: whatever the encoder or the popularity prior puts forward for it is not a ranking."""
    stop = english_stop_words()
    return any(w.lower() not in stop for w in WORD.findall(text or ""))


def top_indices(score: np.ndarray, cands: list[Candidate], top: int) -> list[int]:
    """Indices of the ``top`` best-scored candidates; ties broken by paper id (deterministic)."""
    return sorted(range(len(cands)), key=lambda j: (-float(score[j]), cands[j].paper_id))[:top]


def empty_notice(text: str, year: int) -> str:
    """Why a query got no results: no searchable word (only stopwords, numbers or symbols, see
    :func:`has_searchable_words`), or nothing of its year or earlier matched."""
    if not has_searchable_words(text):
        return ("no results: the query has no searchable words (only stopwords, numbers or symbols); "
                "give a title or abstract with content words")
    return f"no paper of {year} or earlier matched the query"
