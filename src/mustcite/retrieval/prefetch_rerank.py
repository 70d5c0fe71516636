"""Prefetch and rerank (MasterSet's HAtten-RR family): a first stage prefetches ``prefetch``
candidates per query, a cross-encoder trained here re-orders them.

MasterSet's HAtten-RR prefetches with a hierarchical-attention encoder and re-ranks with SciBERT.
Here the prefetch is BM25 over title + abstract (any method of :func:`.registry.make_retriever` can be
named instead) and the re-ranker is the project's MiniLM cross-encoder
(:class:`.cross_encoder.CrossEncoderReranker`, the one implementation the recommender, the neural
judge and SCIDOCA also use), trained on a benchmark's TRAIN queries only
(:func:`mustcite.benchmark.retrieval_training.train_rerank`).
Texts are title + abstract on both sides; targets are 1 for a must-cite paper, ``CITED_TARGET``
for one cited but not must-cite, 0 otherwise. Two objectives:

* ``listwise`` (the default, :func:`training_groups`): for a seeded sample of train queries, each
  paper the query cites among the first stage's top ``top`` makes one group with ``negatives``
  uncited papers of the same top ``top`` (the candidates it is asked to tell apart at test time),
  trained with the localized contrastive loss
  (:meth:`.cross_encoder.CrossEncoderReranker.fit_listwise`), on the segment-cosine head by
  default (:mod:`.segment_cosine`: it ranks before training starts).
* ``pointwise`` (:func:`training_pairs`): every candidate of the first stage's top ``top`` becomes
  a pair, trained with binary cross-entropy. Measured here it learns next to nothing in the pairs
  a CPU affords (its re-ranking scored at chance), which is why listwise is the default.

Search: the first ``prefetch`` hits are re-ordered by the cross-encoder's logit; hits beyond them
(when ``k`` is larger) keep the first stage's order below them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..errors import DataMissingError, MustciteError, UsageError
from ..io import atomic_write_json
from .base import Doc, Results, Retriever, as_docs
from .bm25 import BM25Retriever
from .cross_encoder import CITED_TARGET, CrossEncoderReranker

MODEL_FILE = "rerank_model.json"


def _bm25_first(method: str) -> Retriever:
    """The first stage when no ``make_first`` is given: BM25, the default."""
    if method != "bm25":
        raise UsageError(f"first stage {method!r} needs make_first",
                         hint="pass make_first=mustcite.retrieval.make_retriever (make_retriever does)")

    return BM25Retriever()


class PrefetchRerankRetriever:
    """``first`` (a method name, BM25 by default) prefetches, ``cross`` re-orders its top ``prefetch``.

    ``make_first`` turns the method name into a retriever when :meth:`index` runs
    (:func:`.registry.make_retriever` passes itself); without it only ``bm25`` can be named."""

    name = "rerank"

    def __init__(self, cross: CrossEncoderReranker, *, first: str = "bm25", prefetch: int = 50,
                 batch_size: int = 32, progress: bool = True,
                 make_first: Callable[[str], Retriever] | None = None):
        if prefetch < 1:
            raise MustciteError("prefetch must be at least 1")
        self.cross, self.first_name, self.prefetch = cross, first, int(prefetch)
        self.batch_size, self.progress = batch_size, progress
        self.make_first = make_first or _bm25_first
        self.first = None
        self._text: dict[str, str] = {}
        self.info: dict[str, Any] = {}

    def index(self, pool) -> None:
        docs = as_docs(pool)
        self.first = self.make_first(self.first_name)
        self.first.index(docs)
        self._text = {d.id: d.text for d in docs}

    def search(self, queries, k: int = 100) -> Results:
        if self.first is None:
            raise MustciteError("the re-ranker has no index: call index() first")
        qs: list[Doc] = as_docs(queries, id_key="id")
        hits = self.first.search(qs, k=max(k, self.prefetch))
        out: Results = {}
        for q in tqdm(qs, desc="re-ranking", unit="query", disable=not self.progress or len(qs) < 5):
            ranked = hits.get(q.id, [])
            head, tail = ranked[: self.prefetch], ranked[self.prefetch:]
            if not head:
                out[q.id] = []
                continue
            logits = self.cross.score([(q.text, self._text[pid]) for pid, _ in head], batch_size=self.batch_size)
            order = sorted(range(len(head)), key=lambda j: (-float(logits[j]), head[j][0]))
            res = [(head[j][0], float(logits[j])) for j in order]
            floor = float(min(logits)) - 1.0
            res += [(pid, floor - i * 1e-3) for i, (pid, _) in enumerate(tail)]
            out[q.id] = res[:k]
        return out

    def metadata(self) -> dict[str, Any]:
        return {"method": self.name, "first_stage": self.first_name, "prefetch": self.prefetch,
                "cross_encoder": dict(self.cross.info), **self.info}

    def save(self, path: str | Path) -> None:
        path = Path(path)
        self.cross.save(path / "cross_encoder")
        atomic_write_json(path / MODEL_FILE, {"first": self.first_name, "prefetch": self.prefetch, **self.info})

    @classmethod
    def load(cls, path: str | Path, **kw: Any) -> PrefetchRerankRetriever:
        path = Path(path)
        meta = path / MODEL_FILE
        if not meta.is_file():
            raise DataMissingError(f"{path}: not a prefetch-and-rerank model (no {MODEL_FILE})",
                                   hint="train one: mustcite benchmark train-rerank --benchmark NAME")
        try:
            info = json.loads(meta.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise MustciteError(f"malformed JSON: {exc.msg}", path=meta, line=exc.lineno) from None
        rr = cls(CrossEncoderReranker.load(path / "cross_encoder"), first=info.get("first", "bm25"),
                 prefetch=int(kw.pop("prefetch", None) or info.get("prefetch", 50)), **kw)
        rr.info = {k: v for k, v in info.items() if k not in ("first", "prefetch")}
        return rr


def training_pairs(first, queries: list[dict[str, Any]], labels: dict[str, dict[str, str]],
                   pool_text: dict[str, str], top: int) -> tuple[list[tuple[str, str]], list[float]]:
    """Pairs and targets from the first stage's top ``top`` of each query; ``labels``: qid ->
    {paper_id: "must" | "cited"}."""
    docs = as_docs(queries, id_key="id")
    hits = first.search(docs, k=top)
    pairs, targets = [], []
    for q in docs:
        lab = labels.get(q.id, {})
        for pid, _ in hits.get(q.id, [])[:top]:
            pairs.append((q.text, pool_text[pid]))
            targets.append(1.0 if lab.get(pid) == "must" else CITED_TARGET if pid in lab else 0.0)
    return pairs, targets


def training_groups(first, queries: list[dict[str, Any]], labels: dict[str, dict[str, str]],
                    pool_text: dict[str, str], top: int, *, negatives: int = 7, per_query: int = 4,
                    seed: int = 0) -> list[tuple[str, list[str], list[float]]]:
    """Listwise groups: for each query up to ``per_query`` papers it cites among the first stage's
    top ``top`` (must-cite first, then seeded order), each with ``negatives`` papers of the same
    top ``top`` it does not cite (seeded); targets 1 / ``CITED_TARGET`` for the positive, 0 for the
    negatives. Positives and negatives both come from the first stage's hits, as the candidates
    do at test time: cited papers from anywhere would teach the model that a paper unlike the
    query's words is the cited one (measured: trained that way, re-ranking BM25's top 50 halved
    BM25's MRR)."""
    rng = random.Random(seed)
    docs = as_docs(queries, id_key="id")
    hits = first.search(docs, k=top)
    groups = []
    for q in docs:
        cites = labels.get(q.id, {})
        head = [pid for pid, _ in hits.get(q.id, [])[:top]]
        lab = {pid: cites[pid] for pid in head if pid in cites}
        negs = [pid for pid in head if pid not in cites]
        if not lab or not negs:
            continue
        must = sorted(p for p, v in lab.items() if v == "must")
        cited = sorted(p for p, v in lab.items() if v != "must")
        rng.shuffle(must)
        rng.shuffle(cited)
        for pid in (must + cited)[:per_query]:
            drawn = rng.sample(negs, min(negatives, len(negs)))
            groups.append((q.text, [pool_text[pid]] + [pool_text[n] for n in drawn],
                           [1.0 if lab[pid] == "must" else CITED_TARGET] + [0.0] * len(drawn)))
    return groups
