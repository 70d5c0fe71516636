"""Floors for the SCIDOCA 2025 tasks: "all candidates" and "BM25 top-k" (no learning).

Both implement :class:`Floor` -- ``predict(examples) -> list[Answer]``, one answer per example
in the task's output shape (SCIDOCA 2025 overview paper, Section 2).

**All candidates** (:class:`AllCandidates`):

* Task 1: every candidate of the paragraph (recall 1 by construction, precision = base rate).
* Task 2: a mask takes one id, so "all" cannot be predicted; the analogue is the floor that
  ignores *where* a slot is: every mask of the paragraph gets the same id, the candidate with the
  best BM25 score against the whole paragraph (first candidate if none scores above 0). It uses
  exactly the paragraph-level evidence of Task 1 and no slot-local context.
* Task 3: every candidate for every sentence (no-citation accuracy 0 by construction).

**BM25 top-k** (:class:`BM25TopK`): each candidate's ``title + abstract`` is scored with BM25
(bm25s, Lucene variant, k1 = 1.5, b = 0.75; tokenised as :mod:`mustcite.retrieval.bm25` does:
bm25s English stop words + PyStemmer English stemmer). The collection for IDF and length
normalisation is the paragraph's own candidate list. ``[MASKn]`` tokens are removed from queries.
Only candidates with a score above 0 are predicted (as :class:`~mustcite.retrieval.bm25.BM25Retriever`
drops zero scores); ties keep the candidate order.

* Task 1: query = the paragraph; predict the top ``k`` candidates.
* Task 2: ``k`` is the context half-width in whitespace words: query = the ``k`` words before
  and the ``k`` words after the slot. Each mask gets one id; the (mask, candidate) pairs are
  taken greedily by decreasing score so that a paragraph's masks get distinct candidates while
  unused candidates with score > 0 remain. A mask left without such a candidate gets its own
  best candidate even if used (allowed: a paper may be cited twice), else the paragraph's
  BM25-best candidate, else the first candidate -- every mask is filled (abstaining scores 0).
* Task 3: query = each sentence; predict its top ``k`` candidates (so a sentence sharing no
  term with any candidate gets none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..errors import MustciteError
from .formats import NOWHERE, Answer, Example
from .lexical import MASK, ParagraphBM25, bm25_text, bm25_tokenizer, window_query

#: Default ``k`` per task (the values chosen on dev by ``benchmarks/scidoca_floors.py``).
DEFAULT_K: dict[int, int] = {1: 8, 2: 5, 3: 1}


class Floor(Protocol):
    """A system: one answer per example, in the example's order."""

    name: str

    def predict(self, examples: Sequence[Example]) -> list[Answer]: ...


def _top(scores: np.ndarray, k: int) -> list[int]:
    """Indexes of the ``k`` best scores above 0, ties in candidate order."""
    order = np.argsort(-scores, kind="stable")
    return [int(i) for i in order[:k] if scores[i] > 0]


class BM25TopK:
    """BM25 top-k floor of one task (see the module docstring for what ``k`` means per task).

    For tuning, :meth:`score` computes every BM25 score once and :meth:`answers` turns them into
    answers for any ``k`` of Tasks 1 and 3 (Task 2's window changes the query: score again).
    """

    name = "bm25"

    def __init__(self, task: int, k: int | None = None, *, k1: float = 1.5, b: float = 0.75,
                 method: str = "lucene"):
        if task not in (1, 2, 3):
            raise MustciteError(f"task must be 1, 2 or 3, got {task!r}")
        self.task, self.k = task, int(DEFAULT_K[task] if k is None else k)
        if self.k < 1:
            raise MustciteError(f"k must be at least 1, got {self.k}")
        self.k1, self.b, self.method = k1, b, method
        self._tokenize = bm25_tokenizer()

    def metadata(self) -> dict:
        return {"method": self.name, "task": self.task, "k": self.k, "k1": self.k1, "b": self.b,
                "variant": self.method, "tokenizer": "bm25s en stopwords + PyStemmer english",
                "fields": "title + abstract", "collection": "the paragraph's candidates"}

    def _check(self, examples: Sequence[Example]) -> None:
        for ex in examples:
            if ex.task != self.task:
                raise (ex.origin or NOWHERE).error(f"a Task {ex.task} example, but this floor is for Task {self.task}")

    def score(self, examples: Sequence[Example], k: int | None = None) -> list:
        """Per example: Task 1 one score array (per candidate); Task 2 ``(paragraph scores,
        {mask: scores})`` for window ``k``; Task 3 one score array per sentence."""
        self._check(examples)
        k = self.k if k is None else k
        # tokenise every distinct candidate text and query of the batch once
        docs = list(dict.fromkeys(bm25_text(c) for ex in examples for c in ex.candidates))
        doc_tok = dict(zip(docs, self._tokenize(docs)))
        queries: list[list[str]] = []
        for ex in examples:
            q = [MASK.sub(" ", ex.text)]
            if self.task == 2:
                q += [window_query(ex.text, m, k) for m in ex.masks]
            elif self.task == 3:
                q += list(ex.sentences or ())
            queries.append(q)
        flat = [q for qs in queries for q in qs]
        q_tok = iter(self._tokenize(flat))
        out = []
        for ex, qs in zip(examples, queries):
            toks = [next(q_tok) for _ in qs]
            index = ParagraphBM25([doc_tok[bm25_text(c)] for c in ex.candidates], self.k1, self.b, self.method)
            para = index.scores(toks[0])
            if self.task == 1:
                out.append(para)
            elif self.task == 2:
                out.append((para, {m: index.scores(t) for m, t in zip(ex.masks, toks[1:])}))
            else:
                out.append([index.scores(t) for t in toks[1:]])
        return out

    def answers(self, examples: Sequence[Example], scores: list, k: int | None = None) -> list[Answer]:
        """Answers from :meth:`score`'s output; ``k`` (Tasks 1, 3) overrides ``self.k``."""
        k = self.k if k is None else k
        out = []
        for ex, s in zip(examples, scores):
            ids = [c.id for c in ex.candidates]
            if self.task == 1:
                out.append(Answer(ex.id, 1, tuple(ids[i] for i in _top(s, k))))
            elif self.task == 2:
                out.append(Answer(ex.id, 2, _assign(ids, s[0], s[1])))
            else:
                cites = tuple(tuple(ids[i] for i in _top(row, k)) for row in s)
                out.append(Answer(ex.id, 3, cites, ex.sentences))
        return out

    def predict(self, examples: Sequence[Example]) -> list[Answer]:
        return self.answers(examples, self.score(examples))


def _assign(ids: list[str], para: np.ndarray, per_mask: dict[str, np.ndarray]) -> dict[str, str | None]:
    """Greedy distinct assignment of candidates to masks by decreasing BM25 score."""
    if not ids:
        return {m: None for m in per_mask}
    pairs = sorted(((float(s[i]), mi, i) for mi, (m, s) in enumerate(per_mask.items())
                    for i in range(len(ids)) if s[i] > 0), key=lambda p: (-p[0], p[1], p[2]))
    masks = list(per_mask)
    chosen: dict[str, str | None] = {}
    used: set[int] = set()
    for _, mi, i in pairs:
        if masks[mi] in chosen or i in used:
            continue
        chosen[masks[mi]] = ids[i]
        used.add(i)
    fallback = ids[_top(para, 1)[0]] if _top(para, 1) else ids[0]
    for m, s in per_mask.items():
        if m not in chosen:
            best = _top(s, 1)
            chosen[m] = ids[best[0]] if best else fallback
    return {m: chosen[m] for m in masks}


class AllCandidates:
    """The "all candidates" floor (Task 2: the paragraph's BM25-best candidate for every mask)."""

    name = "all"

    def __init__(self, task: int):
        if task not in (1, 2, 3):
            raise MustciteError(f"task must be 1, 2 or 3, got {task!r}")
        self.task = task

    def metadata(self) -> dict:
        return {"method": self.name, "task": self.task,
                "task2": "every mask <- the candidate with the best BM25 score against the whole paragraph"}

    def predict(self, examples: Sequence[Example]) -> list[Answer]:
        if self.task == 2:
            bm25 = BM25TopK(2, k=1)
            out = []
            for ex, (para, _) in zip(examples, bm25.score(examples)):
                best = _top(para, 1)
                cid = ex.candidates[best[0]].id if best else (ex.candidates[0].id if ex.candidates else None)
                out.append(Answer(ex.id, 2, {m: cid for m in ex.masks}))
            return out
        out = []
        for ex in examples:
            if ex.task != self.task:
                raise (ex.origin or NOWHERE).error(f"a Task {ex.task} example, but this floor is for Task {self.task}")
            ids = tuple(c.id for c in ex.candidates)
            if self.task == 1:
                out.append(Answer(ex.id, 1, ids))
            else:
                out.append(Answer(ex.id, 3, tuple(ids for _ in ex.sentences or ()), ex.sentences))
        return out


def make_floor(task: int, method: str, k: int | None = None) -> Floor:
    """``method`` "all" or "bm25" (``k`` for BM25; default :data:`DEFAULT_K`)."""
    if method == "all":
        return AllCandidates(task)
    if method == "bm25":
        return BM25TopK(task, k)
    raise MustciteError(f"method must be 'all' or 'bm25', got {method!r}")
