"""Term handling shared by the recommender's features and evidence: stemmed content words."""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import Stemmer
from rapidfuzz import fuzz

from ..corpus.records import normalize_title
from .pool_table import PoolTable

#: a word: two or more letters, digits or hyphens, starting with a letter
WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]{1,}")


@lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop words (the Glasgow IR group's list), read from its file without
    importing scikit-learn, whose import costs a second on a command that answers in three."""
    spec = importlib.util.find_spec("sklearn")          # finds the package without running it
    folder = Path(next(iter(spec.submodule_search_locations)))
    words = importlib.util.spec_from_file_location("mustcite_stop_words",
                                                   folder / "feature_extraction" / "_stop_words.py")
    module = importlib.util.module_from_spec(words)
    words.loader.exec_module(module)
    return frozenset(module.ENGLISH_STOP_WORDS)


@lru_cache(maxsize=1)
def _stop() -> frozenset[str]:
    extra = {"paper", "propose", "proposed", "method", "methods", "approach", "show", "results", "use",
             "using", "based", "new", "novel", "model", "models", "learning", "task", "tasks", "work"}
    return frozenset(english_stop_words() | extra)


@lru_cache(maxsize=1)
def _stemmer():
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
    return same_normalised_title(normalize_title(a), normalize_title(b))


def same_normalised_title(x: str, y: str) -> bool:
    """:func:`same_paper_title` for titles already passed through ``normalize_title``."""
    if not x or not y:
        return False
    if x == y:
        return True
    short, long_ = sorted((x, y), key=len)
    if len(short.split()) >= 4 and long_.startswith(short):
        return True
    return fuzz.ratio(x, y) >= 92


class TitleTerms:
    """``titles[row]``: the title stems of the pool paper at ``row``, worked out on first use (a
    query looks at a few hundred of the pool's papers; stemming every title would cost seconds)."""

    def __init__(self, titles: list[str | None]):
        self.titles = titles
        self._stems: dict[int, set[str]] = {}

    def __len__(self) -> int:
        return len(self.titles)

    def __getitem__(self, row: int) -> set[str]:
        got = self._stems.get(row)
        if got is None:
            got = self._stems[row] = set(terms(self.titles[row] or ""))
        return got

    def __iter__(self):
        return (self[row] for row in range(len(self.titles)))


class PoolTerms:
    """The title stems of every pool paper (``titles``) and how many pool papers have each stem
    (``doc_freq``: from the BM25 index's postings over title + abstract, else from the titles)."""

    def __init__(self, pool: PoolTable, bm25: Any = None):
        self.pool = pool
        self.titles = TitleTerms(pool.titles)
        self.doc_freq = DocFreq(bm25, self.titles)

    def shared(self, query_terms: dict[str, str], row: int) -> list[str]:
        """Query words (``{stem: word}``) the pool paper at ``row`` shares, title words first, then
        by rarity in the pool; words in over 8% of the pool say little and are left out."""
        p = self.pool[row]
        title_terms = self.titles[row]
        cand = terms(f"{p.get('title') or ''} {p.get('abstract') or ''}")
        common = max(20, len(self.pool) // 12)

        def df(stem: str) -> int:   # the BM25 tokenizer splits hyphenated words: use the rarest known part
            known = [n for n in map(self.doc_freq.get, stem.split("-")) if n is not None]
            return min(known) if known else 0
        shared = [(s, w) for s, w in query_terms.items() if s in cand and df(s) <= common]
        shared.sort(key=lambda sw: (sw[0] not in title_terms, df(sw[0]), sw[1]))
        return [w for _, w in shared]


class DocFreq:
    """Stem -> number of pool papers whose title + abstract has it, looked up in the BM25 index's
    postings as asked (titles only, counted once, if that index does not expose its postings)."""

    def __init__(self, bm25: Any, titles: TitleTerms):
        try:
            b = bm25._bm25
            self._vocab, self._indptr = b.vocab_dict, b.scores["indptr"]
            self._counted: dict[str, int] | None = None
        except (AttributeError, KeyError, TypeError):
            self._vocab, self._indptr = None, None
            self._counted = {}
            for ts in titles:
                for t in ts:
                    self._counted[t] = self._counted.get(t, 0) + 1

    def get(self, stem: str) -> int | None:
        if self._counted is not None:
            return self._counted.get(stem)
        i = self._vocab.get(stem)
        if i is None or i + 1 >= len(self._indptr):
            return None
        return int(self._indptr[i + 1] - self._indptr[i])

    def __contains__(self, stem: str) -> bool:
        return self.get(stem) is not None

    def __getitem__(self, stem: str) -> int:
        got = self.get(stem)
        if got is None:
            raise KeyError(stem)
        return got
