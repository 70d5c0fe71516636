"""A learned system for SCIDOCA Task 1 (citation discovery): score every candidate against the
paragraph, re-score the best with a cross-encoder, and choose the predicted set with a rule tuned
on dev.

**Stage 1** (:class:`CandidateFeaturizer`): per candidate, BM25 scores of its ``title +
abstract`` against the whole paragraph and against each sentence (best sentence, number of
sentences where it ranks first), BM25 of its title alone, the share of its title's terms found in
the paragraph, whether the name its title starts with ("SqueezeLLM: ...") is in the paragraph,
each as raw score, relative to the paragraph's best and rank; with a dense encoder
also its cosine with the paragraph and with the best sentence; plus the paragraph's numbers of
candidates, sentences and terms. The IDF collection is the paragraph's own candidate list (as in
the BM25 floor, :mod:`.floors`). A ``HistGradientBoostingClassifier`` learns P(candidate is cited
by the paragraph) on training paragraphs.

**Stage 2** (optional, :mod:`.cross`): the ``cross_top`` candidates of highest P are re-scored
with ``logit(P) + cross_weight * cross-encoder logit``; the others keep ``logit(P)``.

**Set rule** (:class:`SetRule`): predict every candidate whose score is at least ``threshold``,
and at least the ``min_k`` best (a paragraph of the task has at least one citation); or the top
``expected`` times the paragraph's expected number of citations (the sum of its probabilities). The rule and
the cross-encoder weight are chosen on dev (:func:`tune_rule`), never on test.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from .. import lazy_libs
from ..corpus.records import title_short_name
from ..errors import MustciteError
from ..numeric import logit
from ..retrieval.base import doc_text
from ..retrieval.cross_encoder import CrossEncoderReranker
from ..retrieval.dense import dense_from_meta
from .cross import candidate_text, gold_ids, paragraph_text
from .formats import NOWHERE, Answer, Example
from .lexical import MASK, SENTENCE_END, ParagraphBM25, bm25_text, bm25_tokenizer, ranks, relative
from .persist import read_config, read_payload, write_model

FEATURES = ("p_bm25", "p_rel", "p_rank", "s_bm25", "s_rel", "s_rank", "s_first",
            "t_bm25", "t_rel", "t_rank", "title_cover", "name_match", "n_candidates", "n_sentences", "n_terms")
DENSE_FEATURES = ("p_cos", "p_cos_rel", "p_cos_rank", "s_cos", "s_cos_rank")
#: candidates re-scored by the cross-encoder (the stage-1 top)
CROSS_DEFAULT_TOP = 8


def sentences_of(ex: Example) -> tuple[str, ...]:
    """The example's sentences (Task 3 gives them; otherwise split at sentence ends), markers removed."""
    sents = ex.sentences or tuple(SENTENCE_END.split(ex.text))
    out = tuple(" ".join(MASK.sub(" ", s).split()) for s in sents)
    return tuple(s for s in out if s) or (" ".join(MASK.sub(" ", ex.text).split()),)


short_name = title_short_name    # the name a title starts with (shared with the audit's name signal)


class CandidateFeaturizer:
    """Stage-1 features of every candidate of one paragraph: ``features(ex) -> (n, d)`` array."""

    def __init__(self, encoder: Any = None, k1: float = 1.5, b: float = 0.75):
        self.encoder, self.k1, self.b = encoder, k1, b
        self.tokenize = bm25_tokenizer()

    @property
    def names(self) -> tuple[str, ...]:
        return FEATURES + (DENSE_FEATURES if self.encoder is not None else ())

    def features(self, ex: Example, sentences: Sequence[str] | None = None) -> np.ndarray:
        """One row per candidate; ``sentences`` (default :func:`sentences_of`) are the units of the
        sentence features. Also returns per-sentence BM25 scores as ``self.last_sentence_scores``."""
        cands = ex.candidates
        n = len(cands)
        if not n:
            self.last_sentence_scores = np.zeros((0, 0), dtype=np.float32)
            return np.zeros((0, len(self.names)), dtype=np.float32)
        sents = list(sentences if sentences is not None else sentences_of(ex))
        para = " ".join(MASK.sub(" ", ex.text).split())
        toks = self.tokenize([bm25_text(c) for c in cands] + [c.title for c in cands] + [para] + sents)
        docs, titles, q_para, q_sents = toks[:n], toks[n:2 * n], toks[2 * n], toks[2 * n + 1:]
        index = ParagraphBM25(docs, self.k1, self.b, "lucene")
        t_index = ParagraphBM25(titles, self.k1, self.b, "lucene")
        p = index.scores(q_para)
        S = np.stack([index.scores(q) for q in q_sents]) if q_sents else np.zeros((1, n), dtype=np.float32)
        self.last_sentence_scores = S
        s = S.max(axis=0)
        first = np.zeros(n, dtype=np.float32)
        for row in S:
            if row.max() > 0:
                first[int(np.argmax(row))] += 1
        t = t_index.scores(q_para)
        terms = set(q_para)
        cover = np.array([len(set(tt) & terms) / len(set(tt)) if tt else 0.0 for tt in titles], dtype=np.float32)
        low = para.lower()
        named = np.array([float(bool(name) and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", low) is not None)
                          for name in (short_name(c.title) for c in cands)], dtype=np.float32)
        cols = [p, relative(p), ranks(p), s, relative(s), ranks(s), first, t, relative(t), ranks(t), cover, named,
                np.full(n, n), np.full(n, len(sents)), np.full(n, len(q_para))]
        if self.encoder is not None:
            cv = self.encoder.embed([doc_text(c.title, c.abstract) for c in cands], desc="")
            qv = self.encoder.encode([para] + sents)
            pc = cv @ qv[0]
            sc = (cv @ qv[1:].T).max(axis=1) if len(sents) else pc
            cols += [pc, relative(pc), ranks(pc), sc, ranks(sc)]
        return np.stack(cols, axis=1).astype(np.float32)


@dataclass
class SetRule:
    """Predict candidates scoring at least ``threshold`` (a logit), and at least the ``min_k`` best.
    With ``expected`` > 0 instead: the top ``round(expected * sum of sigmoid(scores))`` (the
    paragraph's expected number of citations, scaled), and at least ``min_k``."""

    threshold: float = 0.0
    min_k: int = 1
    expected: float = 0.0

    def choose(self, scores: np.ndarray) -> list[int]:
        order = np.argsort(-scores, kind="stable")
        if self.expected > 0:
            k = int(round(self.expected * float((1.0 / (1.0 + np.exp(-np.asarray(scores, dtype=np.float64)))).sum())))
            return [int(i) for i in order[:max(self.min_k, k)]]
        keep = [int(i) for i in order if scores[i] >= self.threshold]
        if len(keep) < self.min_k:
            keep = [int(i) for i in order[:self.min_k]]
        return keep


@dataclass
class DiscoveryModel:
    """Task 1 system: :meth:`fit` stage 1 on training paragraphs, :meth:`tune` the set rule (and the
    cross-encoder weight) on dev, :meth:`predict` answers; :meth:`save` / :meth:`load`."""

    name: str = "learned"
    #: a dense encoder's settings (:func:`mustcite.retrieval.dense.dense_from_meta`), or None: lexical only
    encoder: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=lambda: {"max_iter": 300, "learning_rate": 0.05,
                                                            "max_leaf_nodes": 31, "random_state": 0})
    rule: SetRule = field(default_factory=SetRule)
    cross_top: int = 0
    cross_weight: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    _clf: Any = None
    _cross: Any = None

    def __post_init__(self):
        enc = None
        if self.encoder is not None:
            enc = dense_from_meta(self.encoder)
        self._feat = CandidateFeaturizer(encoder=enc)

    # ------------------------------------------------------------------ stage 1
    def fit(self, examples: Iterable[Example], *, progress: bool = True) -> DiscoveryModel:
        HistGradientBoostingClassifier = lazy_libs.sklearn_ensemble().HistGradientBoostingClassifier

        Xs, ys, n = [], [], 0
        for ex in tqdm(examples, desc="task 1 features", disable=not progress, unit="para"):
            gold = set(gold_ids(ex))
            if not gold or not ex.candidates:
                continue
            Xs.append(self._feat.features(ex))
            ys.append(np.array([c.id in gold for c in ex.candidates], dtype=np.int8))
            n += 1
        if not Xs:
            raise MustciteError("no training paragraph with a gold citation among its candidates")
        X, y = np.vstack(Xs), np.concatenate(ys)
        self._clf = HistGradientBoostingClassifier(**self.params, early_stopping=True, validation_fraction=0.1)
        self._clf.fit(X, y)
        self.info.update({"train_paragraphs": n, "train_pairs": int(len(y)), "train_positives": int(y.sum()),
                          "iterations": int(self._clf.n_iter_)})
        return self

    def probabilities(self, examples: Sequence[Example]) -> list[np.ndarray]:
        """Stage-1 P(cited) of each candidate of each example (one classifier call for all: a
        call per paragraph costs more in thread start-up than in trees)."""
        if self._clf is None:
            raise MustciteError("the Task 1 model is not trained: call fit() or load()")
        blocks = [self._feat.features(ex) for ex in examples]
        sizes = [len(b) for b in blocks]
        if not sum(sizes):
            return [np.zeros(0) for _ in examples]
        p = self._clf.predict_proba(np.vstack(blocks))[:, 1]
        return np.split(p, np.cumsum(sizes)[:-1])

    # ------------------------------------------------------------------ stage 2
    def set_cross_encoder(self, cross: Any, top: int) -> None:
        self._cross, self.cross_top = cross, int(top)

    def parts(self, examples: Sequence[Example], *, progress: bool = False,
              chunk: int = 256) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per example ``(stage-1 P, indexes of the cross_top most probable candidates, their
        cross-encoder logits)``; without a cross-encoder the last two are empty."""
        out = []
        bar = tqdm(total=len(examples), desc="task 1 scores", disable=not progress, unit="para")
        for start in range(0, len(examples), chunk):
            part = examples[start:start + chunk]
            probs = self.probabilities(part)
            tops = [np.argsort(-p, kind="stable")[:self.cross_top] if self._cross is not None and self.cross_top
                    else np.zeros(0, dtype=int) for p in probs]
            pairs = [(paragraph_text(ex), candidate_text(ex.candidates[i])) for ex, top in zip(part, tops) for i in top]
            cross = self._cross.score(pairs) if pairs else np.zeros(0)
            cross = np.split(cross, np.cumsum([len(t) for t in tops])[:-1]) if len(tops) else []
            out += list(zip(probs, tops, cross))
            bar.update(len(part))
        bar.close()
        return out

    def scores(self, parts: tuple[np.ndarray, np.ndarray, np.ndarray], *, weight: float | None = None) -> np.ndarray:
        """Final scores (logits) of one example's candidates from its :meth:`parts`."""
        prob, top, cross = parts
        out = logit(prob)
        if len(top):
            out[top] += (self.cross_weight if weight is None else weight) * cross
        return out

    def predict(self, examples: Sequence[Example]) -> list[Answer]:
        for ex in examples:
            if ex.task != 1:
                raise (ex.origin or NOWHERE).error(f"a Task {ex.task} example, but this system is for Task 1")
        out = []
        for ex, pt in zip(examples, self.parts(examples)):
            ids = [c.id for c in ex.candidates]
            picked = self.rule.choose(self.scores(pt)) if ids else []
            out.append(Answer(ex.id, 1, tuple(ids[i] for i in picked)))
        return out

    # ------------------------------------------------------------------ persistence
    def metadata(self) -> dict[str, Any]:
        return {"method": self.name, "task": 1, "features": list(self._feat.names), "encoder": self.encoder,
                "model": "HistGradientBoostingClassifier", "params": self.params, "rule": asdict(self.rule),
                "cross_top": self.cross_top, "cross_weight": self.cross_weight,
                "cross_encoder": dict(self._cross.info) if self._cross is not None else None, **self.info}

    def save(self, folder: str | Path) -> Path:
        if self._cross is not None:
            self._cross.save(Path(folder) / "cross_encoder")
        return write_model(folder, self._clf, self.metadata())

    @classmethod
    def load(cls, folder: str | Path) -> DiscoveryModel:
        folder = Path(folder)
        meta = read_config(folder, 1)
        keep = ("train_paragraphs", "train_pairs", "train_positives", "iterations", "tuned_on")
        m = cls(params=meta["params"], encoder=meta.get("encoder"), rule=SetRule(**meta["rule"]),
                cross_top=int(meta.get("cross_top") or 0), cross_weight=float(meta.get("cross_weight") or 0.0),
                info={k: meta[k] for k in keep if k in meta})
        if meta.get("features") != list(m._feat.names):
            raise MustciteError("the model was trained on other features than this version computes",
                                path=folder / "config.json",
                                hint="train it again with `mustcite scidoca train --task 1`")
        m._clf = read_payload(folder)
        if m.cross_top and (folder / "cross_encoder").is_dir():
            try:
                m._cross = CrossEncoderReranker.load(folder / "cross_encoder")
            except MustciteError:
                raise
            except Exception as exc:  # noqa: BLE001 - a damaged cross-encoder folder: name it
                raise MustciteError(f"cannot load the cross-encoder: {exc}", path=folder / "cross_encoder") from None
        return m


# ---------------------------------------------------------------------- tuning on dev

def weighted_f1(gold: Sequence[set[str]], picked: Sequence[set[str]]) -> float:
    """The official Task 1 F1 (paragraph F1 weighted by the number of gold citations)."""
    num = den = 0.0
    for g, p in zip(gold, picked):
        tp = len(g & p)
        f1 = 2 * tp / (len(g) + len(p)) if g or p else 0.0
        num += len(g) * f1
        den += len(g)
    return num / den if den else 0.0


def tune_rule(model: DiscoveryModel, dev: Sequence[Example], *, weights: Sequence[float] = (0.0,),
              thresholds: Sequence[float] = tuple(np.round(np.arange(-4.0, 2.01, 0.1), 2)),
              min_ks: Sequence[int] = (1, 2), expecteds: Sequence[float] = (0.6, 0.8, 1.0, 1.2, 1.4, 1.6),
              progress: bool = True) -> dict[str, Any]:
    """Choose ``cross_weight`` and the :class:`SetRule` maximising the official F1 on ``dev``
    (ties: the first in grid order); sets them on ``model`` and returns the grid."""
    parts = model.parts(dev, progress=progress)
    gold = [set(gold_ids(ex)) for ex in dev]
    ids = [[c.id for c in ex.candidates] for ex in dev]
    rules = [SetRule(float(t), int(k)) for k in min_ks for t in thresholds] + \
            [SetRule(0.0, int(k), float(e)) for k in min_ks for e in expecteds]
    grid, best = [], None
    for w in weights:
        scores = [model.scores(pt, weight=w) for pt in parts]
        for rule in rules:
            picked = [{i[j] for j in rule.choose(s)} if i else set() for i, s in zip(ids, scores)]
            f1 = weighted_f1(gold, picked)
            grid.append({"cross_weight": w, **asdict(rule), "f1": round(f1, 4)})
            if best is None or f1 > best[0]:
                best = (f1, w, rule)
    model.cross_weight, model.rule = best[1], best[2]
    model.info["tuned_on"] = {"paragraphs": len(dev), "f1": round(best[0], 4)}
    return {"best": {"f1": round(best[0], 4), "cross_weight": best[1], **asdict(best[2])}, "grid": grid}
