"""A draft's bibliography as evidence: what the papers it already cites say it must also cite.

Two signals, both from the labelled papers a draft of year ``Y`` may use (year <= ``Y``; never the
draft's own labelled paper, found by title), for every pool paper:

* **co-citation**: the labelled papers citing a pool paper together with at least one of the
  draft's linked references (``cocited_by``), and with how many of those references it is co-cited
  (``references_cocited``: "co-cited with 4 of your references");
* **bibliographic coupling**: the labelled papers whose reference lists overlap the draft's most
  (cosine of the two lists, the ``coupled_k`` best) vote for what they cite, each vote weighted by
  that overlap and by the citation's tier (:meth:`~.labelled.CitedPaper.weight`); ``coupled_type1``
  counts how many of the three closest use the paper as a baseline (Type I).

And one signal from the draft's own words (:class:`~.name_index.NameIndex`): the pool papers and works
whose name (what citing papers call them, "HDTF [35]", or what their title starts with,
"SqueezeLLM: ...") the draft's text mentions (``named``): a draft that says "we fine-tune with
LoRA" and does not cite LoRA.

:class:`BibliographyIndex` holds the labelled papers' citation matrices (built once per recommender
from its :class:`~.neighbours.NeighbourIndex`); :meth:`BibliographyIndex.signals` is per draft.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix

from ..corpus.records import normalize_title
from ..io import load_pickle
from .neighbours import NeighbourIndex
from .text import same_normalised_title

#: how many of the closest bibliographies ``coupled_type1`` and the evidence name
CLOSEST_SHOWN = 3


@dataclass
class CoupledPaper:
    """A labelled paper whose references overlap the draft's."""

    id: str
    title: str
    shared: int            # references both cite
    similarity: float      # cosine of the two reference lists


@dataclass
class BibliographySignals:
    """The signals of one draft's references, over the labelled papers' cited pool papers
    (``ids``; a pool paper no labelled paper cites has every signal 0)."""

    references: list[str]                 # the draft's linked references the labelled papers cite
    col: dict[str, int]                   # pool paper id -> index into the arrays
    cocited_by: np.ndarray                # labelled papers citing it with >= 1 of the references
    references_cocited: np.ndarray        # of the draft's references co-cited with it
    coupling: np.ndarray                  # tier-weighted votes of the closest bibliographies, 0..3
    coupled_type1: np.ndarray             # of the CLOSEST_SHOWN closest using it as a baseline
    coupled: list[CoupledPaper] = field(default_factory=list)   # the closest bibliographies, best first
    named: dict[str, str] = field(default_factory=dict)         # pool paper id -> its name the text uses

    def value(self, name: str, paper_id: str) -> float:
        if name == "named":
            return float(paper_id in self.named)
        j = self.col.get(paper_id)
        return 0.0 if j is None else float(getattr(self, name)[j])

    def best(self, k: int, exclude: set[str]) -> list[str]:
        """Up to ``k`` pool papers by co-citation, up to ``k`` by coupling and up to ``k`` named in the
        text (ids not in ``exclude``)."""
        out: dict[str, None] = {}
        ids = list(self.col)
        for arr in (self.cocited_by, self.coupling):
            nz = np.flatnonzero(arr > 0)
            picked = 0
            for j in nz[np.lexsort((nz, -arr[nz]))]:
                pid = ids[j]
                if pid not in exclude:
                    out.setdefault(pid)
                    picked += 1
                    if picked == k:
                        break
        for pid in list(self.named)[:k]:
            if pid not in exclude:
                out.setdefault(pid)
        return list(out)


class BibliographyIndex:
    """The labelled papers' citations as sparse matrices: which pool papers each cites (``cites``),
    with what tier weight (``weights``) and as a baseline (``type1``)."""

    def __init__(self, nindex: NeighbourIndex):
        self.nindex = nindex
        col = nindex._col
        n, m = len(nindex.labelled), len(nindex.cited_ids)
        weight: dict[tuple[int, int], float] = {}
        type1: set[tuple[int, int]] = set()
        for row, p in enumerate(nindex.labelled):
            for c in p.cites:
                key = (row, col[c.paper_id])
                weight[key] = max(weight.get(key, 0.0), c.weight())
                if c.flags()["type1"]:
                    type1.add(key)
        rows = np.fromiter((k[0] for k in weight), dtype=np.int64, count=len(weight))
        cols = np.fromiter((k[1] for k in weight), dtype=np.int64, count=len(weight))
        self.cites = nindex.matrix                                   # labelled x cited, 0/1
        self.weights_t = csr_matrix((np.fromiter(weight.values(), dtype=np.float32), (cols, rows)), shape=(m, n))
        t_rows = np.array([k[0] for k in type1], dtype=np.int64)
        t_cols = np.array([k[1] for k in type1], dtype=np.int64)
        self.type1_t = csr_matrix((np.ones(len(type1), dtype=np.float32), (t_cols, t_rows)), shape=(m, n))
        self.lengths = np.asarray(self.cites.sum(axis=1), dtype=np.float32).ravel()
        self.titles = [normalize_title(p.title) for p in nindex.labelled]

    def eligible(self, year: int, title: str) -> np.ndarray:
        """0/1 per labelled paper a draft of ``year`` titled ``title`` may use (not later, not itself)."""
        ok = (self.nindex.years <= year).astype(np.float32)
        own = normalize_title(title)
        if own:
            for row, t in enumerate(self.titles):
                if t and t[:12] == own[:12] and same_normalised_title(t, own):
                    ok[row] = 0.0
        return ok

    def signals(self, references: list[str], year: int, title: str = "", *,
                coupled_k: int = 30, named: dict[str, str] | None = None) -> BibliographySignals:
        """The co-citation and coupling signals of a draft of ``year`` citing ``references``
        (``named``: the pool papers its text names, :meth:`.name_index.NameIndex.named`, as
        ``{pool id: the name as written}``)."""
        col = self.nindex._col
        refs = [pid for pid in dict.fromkeys(references) if pid in col]
        named = {pid: n for pid, n in (named or {}).items() if pid not in set(references)}
        m = len(self.nindex.cited_ids)
        zero = np.zeros(m, dtype=np.float32)
        if not refs:
            return BibliographySignals([], col, zero, zero, zero, zero, named=named)
        ok = self.eligible(year, title)
        cols = [col[pid] for pid in refs]
        shared = np.asarray(self.cites[:, cols].sum(axis=1), dtype=np.float32).ravel() * ok  # per labelled
        citing = (shared > 0).astype(np.float32)
        cocited_by = self.nindex.matrix_t @ citing
        # references x cited pool papers: labelled papers citing both (eligible ones only)
        ref_rows = self.nindex.matrix_t[cols].multiply(ok[None, :]).tocsr()
        pair = ref_rows @ self.cites
        references_cocited = np.asarray((pair > 0).sum(axis=0), dtype=np.float32).ravel()
        references_cocited[cols] = 0.0          # a reference is not co-cited with itself
        cocited_by = np.asarray(cocited_by, dtype=np.float32).ravel()
        cocited_by[cols] = 0.0
        cosine = np.where(shared > 0, shared / np.sqrt(np.maximum(self.lengths, 1.0) * len(refs)), 0.0)
        nz = np.flatnonzero(cosine > 0)
        top = nz[np.lexsort((nz, -cosine[nz]))][:coupled_k]
        coupling, coupled_type1 = zero.copy(), zero.copy()
        if len(top):
            w = np.zeros(len(cosine), dtype=np.float32)
            w[top] = cosine[top]
            coupling = np.asarray(self.weights_t @ w, dtype=np.float32).ravel() / float(w.sum())
            closest = np.zeros(len(cosine), dtype=np.float32)
            closest[top[:CLOSEST_SHOWN]] = 1.0
            coupled_type1 = np.asarray(self.type1_t @ closest, dtype=np.float32).ravel()
            coupling[cols] = 0.0
            coupled_type1[cols] = 0.0
        lab = self.nindex.labelled
        coupled = [CoupledPaper(lab[int(j)].id, lab[int(j)].title, int(shared[j]), round(float(cosine[j]), 4))
                   for j in top[:CLOSEST_SHOWN]]
        return BibliographySignals(refs, col, cocited_by, references_cocited, coupling, coupled_type1, coupled, named)


    def save(self, path) -> None:
        """Write the matrices built from the labelled papers into the file ``path`` (:meth:`load`)."""
        with open(path, "wb") as fh:
            pickle.dump({k: getattr(self, k) for k in ("weights_t", "type1_t", "lengths", "titles")}, fh, protocol=5)

    @classmethod
    def load(cls, path, nindex: NeighbourIndex) -> BibliographyIndex:
        """The index :meth:`save` wrote for ``nindex``'s labelled papers."""
        new = object.__new__(cls)
        new.__dict__.update(load_pickle(path))
        new.nindex, new.cites = nindex, nindex.matrix
        return new
