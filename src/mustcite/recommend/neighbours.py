"""Nearest labelled neighbours of a query and the votes they cast for the papers they cite.

Neighbours are found by BM25 over the labelled papers' title + abstract (scores divided by the
query's best score) and, when the recommender has a dense encoder, by cosine similarity; a
neighbour's similarity is the mean of the two. Each neighbour votes for every pool paper it cites
with ``similarity x tier weight`` (:meth:`CitedPaper.weight`), so must-cite citations count more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..retrieval.base import Doc
from ..retrieval.bm25 import BM25Retriever
from .labelled import LabelledPaper
from .text import same_paper_title


@dataclass
class Vote:
    """What the neighbours say about one candidate paper."""

    score: float = 0.0            # sum of similarity x weight
    must_score: float = 0.0       # the same, counting must-cite citations only
    count: int = 0                # neighbours citing it
    must_count: int = 0           # neighbours must-citing it
    best_sim: float = 0.0
    by: list[tuple[str, float, bool]] = field(default_factory=list)   # (labelled id, sim, must-cite)


class NeighbourIndex:
    """Search labelled papers by title + abstract and turn the nearest into votes."""

    def __init__(self, labelled: list[LabelledPaper], vectors: np.ndarray | None = None):
        self.labelled = labelled
        self.by_id = {p.id: p for p in labelled}
        self._row = {p.id: i for i, p in enumerate(labelled)}
        self.vectors = vectors
        self._bm25 = BM25Retriever()
        self._bm25.index([Doc(p.id, p.title, p.abstract) for p in labelled])
        # how often each pool paper is cited / must-cited among all labelled papers
        self.cite_count: dict[str, int] = {}
        self.must_count: dict[str, int] = {}
        for p in labelled:
            for c in p.cites:
                self.cite_count[c.paper_id] = self.cite_count.get(c.paper_id, 0) + 1
                if c.flags()["must_cite"]:
                    self.must_count[c.paper_id] = self.must_count.get(c.paper_id, 0) + 1

    def neighbours(self, queries: list[Doc], qvecs: np.ndarray | None, k: int,
                   exclude: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        """Top ``k`` labelled neighbours per query as ``(labelled id, similarity)``, best first."""
        depth = min(len(self.labelled), 3 * k + 1)
        bm = self._bm25.search(queries, k=depth)
        out = []
        for i, q in enumerate(queries):
            sims: dict[str, list[float]] = {}
            hits = bm.get(q.id, [])
            top = hits[0][1] if hits else 0.0
            for pid, s in hits:
                sims.setdefault(pid, [0.0, 0.0])[0] = s / top if top > 0 else 0.0
            if qvecs is not None and self.vectors is not None:
                cos = self.vectors @ qvecs[i]
                for j in np.argsort(-cos, kind="stable")[:depth]:
                    sims.setdefault(self.labelled[int(j)].id, [0.0, 0.0])[1] = max(0.0, float(cos[j]))
                for pid, v in sims.items():   # exact cosine for BM25-only hits as well
                    v[1] = max(0.0, float(cos[self._row[pid]]))
                scored = {pid: (v[0] + v[1]) / 2 for pid, v in sims.items()}
            else:
                scored = {pid: v[0] for pid, v in sims.items()}
            skip = exclude[i] if exclude else None
            ranked = sorted(((p, s) for p, s in scored.items()
                             if p != skip and s > 0 and not same_paper_title(self.by_id[p].title, q.title)),
                            key=lambda kv: (-kv[1], kv[0]))
            out.append(ranked[:k])
        return out

    def votes(self, neighbours: list[tuple[str, float]]) -> dict[str, Vote]:
        out: dict[str, Vote] = {}
        for nid, sim in neighbours:
            for c in self.by_id[nid].cites:
                v = out.setdefault(c.paper_id, Vote())
                must = bool(c.flags()["must_cite"])
                v.score += sim * c.weight()
                v.count += 1
                if must:
                    v.must_score += sim
                    v.must_count += 1
                v.best_sim = max(v.best_sim, sim)
                v.by.append((nid, sim, must))
        return out
