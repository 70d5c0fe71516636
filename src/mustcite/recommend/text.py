"""Term handling shared by the recommender's features and evidence: stemmed content words."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]{1,}")


@lru_cache(maxsize=1)
def _stop() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    extra = {"paper", "propose", "proposed", "method", "methods", "approach", "show", "results", "use",
             "using", "based", "new", "novel", "model", "models", "learning", "task", "tasks", "work"}
    return frozenset(ENGLISH_STOP_WORDS | extra)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def terms(text: str) -> dict[str, str]:
    """``{stem: first surface form}`` of the content words of ``text``."""
    stop = _stop()
    out: dict[str, str] = {}
    words = [w for w in _WORD.findall(text or "") if w.lower() not in stop]
    stems = _stemmer().stemWords([w.lower() for w in words])
    for w, s in zip(words, stems):
        out.setdefault(s, w.lower())
    return out


def overlap(a: set[str], b: set[str]) -> float:
    """Jaccard overlap of two term sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def same_paper_title(a: str, b: str) -> bool:
    """True when two titles name the same paper: equal after normalisation, one a truncation of the
    other (at least four words), or nearly equal (rapidfuzz ratio >= 92). Used to keep a query's own
    paper out of its neighbours and its recommendations."""
    from rapidfuzz import fuzz

    from ..corpus.records import normalize_title

    x, y = normalize_title(a), normalize_title(b)
    if not x or not y:
        return False
    if x == y:
        return True
    short, long_ = sorted((x, y), key=len)
    if len(short.split()) >= 4 and long_.startswith(short):
        return True
    return fuzz.ratio(x, y) >= 92
