"""Whether a sentence that writes a name is about what the field cites the work for.

A name may be a work's in one sentence and a word, or another work's, in the next: "PALM" the
optimisation algorithm is not the PaLM model, the "CLIC" compression challenge is not CLiC. The
field's papers say what each work is cited for: the sentences in which they write one of its names
and cite it there. A work's *profile* is the words of those sentences (each word once a sentence,
weighted by how rare it is among all of them); a new sentence's ``sense_similarity`` to the work is
the cosine between its words and that profile. Nothing is listed: the profiles are counted from the
mention table, out of fold for the train papers (:func:`out_of_fold_similarity`: a train paper's
sentences never shape the profile it is compared with) and over the papers of a draft's year or
earlier for a draft (:class:`SenseProfiles`, ``serving/<Y>/sense.npz``).

Words are hashed (:func:`sentence_vectors`, CRC-32 into :data:`DIMENSIONS` buckets), so that the
audit reads a profile without the vocabulary it was counted with, and without scikit-learn.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import numpy as np

#: hash buckets of the words
DIMENSIONS = 1 << 18
#: words kept per profile (its heaviest), to keep the served files small
PROFILE_WORDS = 400
SENSE_FILE = "sense.npz"
#: rows compared at once
_CHUNK = 200_000
_WORD = re.compile(r"[a-z][a-z]+")
#: words every sentence has: no evidence of a topic
_STOP = frozenset("""a an and are as at be by can for from has have in is it its of on or that the their this to
was we were which with our these those not but also than then there they into such more most other use used
using based show shows shown two one each both while where when however thus however only all any may""".split())


def _bucket(word: str) -> int:
    return zlib.crc32(word.encode()) % DIMENSIONS


def sentence_vectors(sentences: list[str]):
    """A binary sparse matrix (one row per sentence) of the hashed words of each sentence."""
    sparse = _scipy_sparse()
    indptr, indices = [0], []
    cache: dict[str, int] = {}
    for s in sentences:
        cols = set()
        for w in _WORD.findall((s or "").lower()):
            if w in _STOP:
                continue
            b = cache.get(w)
            if b is None:
                b = cache[w] = _bucket(w)
            cols.add(b)
        indices.extend(sorted(cols))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float32)
    return sparse.csr_matrix((data, np.asarray(indices, dtype=np.int32), np.asarray(indptr, dtype=np.int64)),
                             shape=(len(sentences), DIMENSIONS))


def _codes(values) -> tuple[list[str], np.ndarray]:
    """(the distinct values in order of first use, each value's index among them), without the
    fixed-width copies ``np.unique`` makes of long strings."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(str(v), len(index)) for v in values), dtype=np.int64, count=len(values))
    return list(index), codes


def _scipy_sparse():
    import scipy.sparse as sparse

    return sparse


def _idf(vectors) -> np.ndarray:
    """Inverse document frequency of the buckets over ``vectors``' rows (smoothed)."""
    df = np.asarray((vectors > 0).sum(axis=0)).ravel().astype(np.float64)
    return np.log((1.0 + vectors.shape[0]) / (1.0 + df)).astype(np.float32) + 1.0


def _normalise(m):
    sparse = _scipy_sparse()
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.diags(1.0 / norms) @ m


def _prune(m, words: int = PROFILE_WORDS):
    """Each row of a CSR matrix with only its ``words`` heaviest entries."""
    sparse = _scipy_sparse()
    m = m.tocsr()
    rows, cols, vals = [], [], []
    for i in range(m.shape[0]):
        a, b = m.indptr[i], m.indptr[i + 1]
        d, c = m.data[a:b], m.indices[a:b]
        if len(d) > words:
            keep = np.argpartition(-d, words)[:words]
            d, c = d[keep], c[keep]
        rows.append(np.full(len(d), i, dtype=np.int32))
        cols.append(c)
        vals.append(d)
    if not rows:
        return sparse.csr_matrix(m.shape, dtype=np.float32)
    return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=m.shape)


def _profiles(vectors, groups: np.ndarray, n_groups: int):
    """Per group, the sum of its sentences' vectors (``groups``: the group of each row)."""
    sparse = _scipy_sparse()
    ind = sparse.csr_matrix((np.ones(len(groups), dtype=np.float32), (groups, np.arange(len(groups)))),
                            shape=(n_groups, len(groups)))
    return (ind @ vectors).tocsr()


def _row_cosine(x, profiles, rows: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``x`` (already weighted and normalised) with ``profiles[rows]``."""
    if x.shape[0] == 0:
        return np.zeros(0, dtype=np.float32)
    return np.asarray(x.multiply(profiles[rows]).sum(axis=1)).ravel().astype(np.float32)


def out_of_fold_similarity(sentences: np.ndarray, families: np.ndarray, papers: np.ndarray, split: np.ndarray,
                           cited: np.ndarray, fold_of) -> np.ndarray:
    """Per mention row: the cosine of its sentence with the profile of its work counted from the
    train papers' sentences that cite the work there (``cited``; the words' weights too), a train
    paper's own fold left out (``fold_of(paper)``); a held-out row is compared with every train
    paper's."""
    sents, inv = _codes(sentences)
    vec = sentence_vectors(sents)
    fams, fam_idx = _codes(families)
    train = split == "train"
    folds = np.full(len(papers), -1, dtype=np.int64)
    fold_by_paper = {p: fold_of(str(p)) for p in np.unique(papers[train])}
    folds[train] = [fold_by_paper[p] for p in papers[train]]
    src = np.flatnonzero(train & cited.astype(bool))
    diags = _scipy_sparse().diags
    out = np.zeros(len(sentences), dtype=np.float32)
    total = _profiles(vec[inv[src]], fam_idx[src], len(fams))
    for f in sorted(set(folds.tolist())):
        mine = src[folds[src] == f] if f >= 0 else src[:0]
        rest = src[folds[src] != f] if f >= 0 else src
        idf = _idf(vec[np.unique(inv[rest])]) if len(rest) else np.ones(DIMENSIONS, dtype=np.float32)
        prof = total - _profiles(vec[inv[mine]], fam_idx[mine], len(fams)) if len(mine) else total
        prof = _normalise(_prune(prof @ diags(idf))).tocsr()
        rows = np.flatnonzero(folds == f)
        for a in range(0, len(rows), _CHUNK):
            r = rows[a:a + _CHUNK]
            out[r] = _row_cosine(_normalise(vec[inv[r]] @ diags(idf)).tocsr(), prof, fam_idx[r])
    return out


class SenseProfiles:
    """The profiles a draft's sentences are compared with (one file per serving year)."""

    def __init__(self, families: list[str], profiles, idf: np.ndarray):
        self.index = {f: i for i, f in enumerate(families)}
        self.profiles = profiles
        self.idf = idf

    @classmethod
    def fit(cls, sentences: list[str], families: list[str]) -> SenseProfiles:
        """The profiles of the works cited in ``sentences`` (``families[i]``: the work sentence ``i``
        cites where it names it)."""
        sents, inv = _codes(sentences)
        vec = sentence_vectors(sents)
        fams, fam_idx = _codes(families)
        idf = _idf(vec) if len(sents) else np.ones(DIMENSIONS, dtype=np.float32)
        prof = _profiles(vec[inv], fam_idx, len(fams))
        prof = _normalise(_prune(prof @ _scipy_sparse().diags(idf)))
        return cls(list(fams), prof, idf)

    def similarity(self, sentences: list[str], families: list[str]) -> np.ndarray:
        """The cosine of each sentence with the profile of its work (0 for a work without one)."""
        out = np.zeros(len(sentences), dtype=np.float32)
        known = [i for i, f in enumerate(families) if f in self.index]
        if not known:
            return out
        x = _normalise(sentence_vectors([sentences[i] for i in known]) @ _scipy_sparse().diags(self.idf))
        out[known] = _row_cosine(x, self.profiles, np.array([self.index[families[i]] for i in known]))
        return out

    def save(self, path: str | Path) -> None:
        p = self.profiles.tocsr()
        np.savez_compressed(path, families=np.array(list(self.index), dtype=str), data=p.data, indices=p.indices,
                            indptr=p.indptr, shape=np.array(p.shape), idf=self.idf)

    @classmethod
    def load(cls, path: str | Path) -> SenseProfiles:
        sparse = _scipy_sparse()
        with np.load(path) as z:
            prof = sparse.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
            return cls(list(z["families"]), prof, z["idf"])
