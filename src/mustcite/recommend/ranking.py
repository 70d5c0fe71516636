"""Turning candidate scores into a ranked list: the deterministic top-k, and what to say when a
query has no candidate at all."""

from __future__ import annotations

import numpy as np

from .features import Candidate
from .text import terms


def top_indices(score: np.ndarray, cands: list[Candidate], top: int) -> list[int]:
    """Indices of the ``top`` best-scored candidates; ties broken by paper id (deterministic)."""
    return sorted(range(len(cands)), key=lambda j: (-float(score[j]), cands[j].paper_id))[:top]


def empty_notice(text: str, year: int) -> str:
    """Why a query got no candidate: no searchable word (only stopwords, numbers or symbols), or
    nothing of its year or earlier matched."""
    if not terms(text):
        return "no paper matched: the query has no searchable words (only stopwords, numbers or symbols)"
    return f"no paper of {year} or earlier matched the query"
