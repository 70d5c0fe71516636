"""Citation-context evidence: how labelled papers describe a pool paper where they cite it.

Every (labelled paper, cited pool paper) pair with an extracted citation context is one document:
the sentences around that paper's in-text citations (MasterSet's three-sentence windows). A query
(title + abstract) is matched against all of them with BM25 and the hits are grouped by the cited
paper, so a pool paper scores high when the papers that cite it *describe it* in words like the
query's. This is the classic context-based citation-recommendation signal, and it finds cited
papers whose own title and abstract share few words with the query.

Leave-one-out: a query that is itself a labelled paper never sees its own contexts. Time order:
the contexts of a labelled paper newer than the query (or of unknown year, when the query has a
year) never count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io import atomic_write_json, read_json
from ..labels.papers import LabelledPaper
from ..retrieval.base import Doc
from ..retrieval.bm25 import BM25Retriever
from .neighbours import year_array


@dataclass
class ContextMatch:
    """What the citation contexts say about one candidate for one query."""

    best: float = 0.0       # best context score, divided by the query's best context score
    top3: float = 0.0       # sum of the three best, divided likewise
    citers: int = 0         # labelled papers whose contexts of it matched
    rank: int = 0           # rank of the candidate by ``best`` among the query's context hits (1 = top)


class ContextIndex:
    """BM25 over citation contexts, grouped by cited paper."""

    def __init__(self, labelled: list[LabelledPaper], *, hits: int = 3000):
        self.hits = hits
        row_of = {p.id: i for i, p in enumerate(labelled)}
        docs, citer, cited = [], [], []
        for p in labelled:
            for pid, text in sorted(p.contexts.items()):
                if text:
                    docs.append(Doc(f"{len(docs)}", "", text))
                    citer.append(row_of[p.id])
                    cited.append(pid)
        self.size = len(docs)
        self.ids = [p.id for p in labelled]
        self.citer = np.asarray(citer, dtype=np.int64)
        self.cited = cited
        # the neighbours' year rule: an unknown year is later than any query's
        self.citer_year = year_array([p.year for p in labelled])[self.citer]
        self._row_of = row_of
        self._bm25: BM25Retriever | None = None
        if docs:
            self._bm25 = BM25Retriever()
            self._bm25.index(docs)

    def save(self, folder: str | Path) -> None:
        """Write the index into ``folder`` (read back by :meth:`load`)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "citer.npy", self.citer)
        np.save(folder / "citer_year.npy", self.citer_year)
        atomic_write_json(folder / "meta.json", {"hits": self.hits, "ids": self.ids, "cited": self.cited}, indent=None)
        if self._bm25 is not None:
            self._bm25.save(folder / "bm25")

    @classmethod
    def load(cls, folder: str | Path) -> ContextIndex:
        """An index written by :meth:`save`, its BM25 scores memory-mapped."""
        folder = Path(folder)
        meta = read_json(folder / "meta.json")
        new = object.__new__(cls)
        new.hits, new.ids, new.cited = int(meta["hits"]), list(meta["ids"]), list(meta["cited"])
        new.size = len(new.cited)
        new.citer = np.load(folder / "citer.npy")
        new.citer_year = np.load(folder / "citer_year.npy")
        new._row_of = {pid: i for i, pid in enumerate(new.ids)}
        new._bm25 = BM25Retriever.load(folder / "bm25", mmap=True) if (folder / "bm25").is_dir() else None
        return new

    def search(self, queries: list[Doc], *, exclude: list[str | None] | None = None,
               years: list[int | None] | None = None) -> list[dict[str, ContextMatch]]:
        """Per query, the cited papers whose contexts match it (an empty dict when none do)."""
        if self._bm25 is None or not queries:
            return [{} for _ in queries]
        keyed = [Doc(str(i), q.title, q.abstract) for i, q in enumerate(queries)]
        found = self._bm25.search(keyed, k=min(self.hits, self.size))
        out = []
        for i in range(len(queries)):
            own = self._row_of.get(exclude[i]) if exclude and exclude[i] else None
            year = years[i] if years else None
            scores: dict[str, list[float]] = {}
            for doc_id, s in found.get(str(i), []):
                j = int(doc_id)
                if own is not None and self.citer[j] == own:
                    continue
                if year is not None and self.citer_year[j] > year:
                    continue
                scores.setdefault(self.cited[j], []).append(s)
            out.append(_matches(scores))
        return out


def _matches(scores: dict[str, list[float]]) -> dict[str, ContextMatch]:
    if not scores:
        return {}
    top = max(max(v) for v in scores.values()) or 1.0
    best = {pid: max(v) for pid, v in scores.items()}
    order = sorted(best, key=lambda pid: (-best[pid], pid))
    return {pid: ContextMatch(best[pid] / top, sum(sorted(scores[pid])[-3:]) / top, len(scores[pid]), r)
            for r, pid in enumerate(order, 1)}
