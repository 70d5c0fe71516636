"""Term handling shared by the recommender's features and evidence: stemmed content words."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

#: a word: two or more letters, digits or hyphens, starting with a letter
WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]{1,}")


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
    words = [w for w in WORD.findall(text or "") if w.lower() not in stop]
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
    from ..corpus.records import normalize_title

    return same_normalised_title(normalize_title(a), normalize_title(b))


def same_normalised_title(x: str, y: str) -> bool:
    """:func:`same_paper_title` for titles already passed through ``normalize_title``."""
    from rapidfuzz import fuzz

    if not x or not y:
        return False
    if x == y:
        return True
    short, long_ = sorted((x, y), key=len)
    if len(short.split()) >= 4 and long_.startswith(short):
        return True
    return fuzz.ratio(x, y) >= 92


class PoolTerms:
    """The title stems of every pool paper (``titles``) and how many pool papers have each stem
    (``doc_freq``: from the BM25 index's postings over title + abstract, else from the titles)."""

    def __init__(self, pool: list[dict[str, Any]], bm25: Any = None):
        self.pool = pool
        self.titles = [set(terms(p.get("title") or "")) for p in pool]
        self.doc_freq = _doc_freq(bm25, self.titles)

    def shared(self, query_terms: dict[str, str], row: int) -> list[str]:
        """Query words (``{stem: word}``) the pool paper at ``row`` shares, title words first, then
        by rarity in the pool; words in over 8% of the pool say little and are left out."""
        p = self.pool[row]
        title_terms = self.titles[row]
        cand = terms(f"{p.get('title') or ''} {p.get('abstract') or ''}")
        common = max(20, len(self.pool) // 12)

        def df(stem: str) -> int:   # the BM25 tokenizer splits hyphenated words: use the rarest known part
            known = [self.doc_freq[part] for part in stem.split("-") if part in self.doc_freq]
            return min(known) if known else 0
        shared = [(s, w) for s, w in query_terms.items() if s in cand and df(s) <= common]
        shared.sort(key=lambda sw: (sw[0] not in title_terms, df(sw[0]), sw[1]))
        return [w for _, w in shared]


def _doc_freq(bm25: Any, titles: list[set[str]]) -> dict[str, int]:
    """Stem -> number of pool papers whose title + abstract has it (from the BM25 index; titles
    only if that index does not expose its postings)."""
    import numpy as np

    try:
        b = bm25._bm25
        indptr = np.asarray(b.scores["indptr"])
        return {tok: int(indptr[i + 1] - indptr[i]) for tok, i in b.vocab_dict.items() if i + 1 < len(indptr)}
    except (AttributeError, KeyError, TypeError, IndexError):
        df: dict[str, int] = {}
        for ts in titles:
            for t in ts:
                df[t] = df.get(t, 0) + 1
        return df
