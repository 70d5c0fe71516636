"""A learned system for SCIDOCA Task 3 (citation sentence prediction): decide per sentence whether
it needs a citation, then which candidates.

**Citation need** (:class:`CitationNeed`): a logistic regression over the sentence's word 1-2
grams and character 2-4 grams (TF-IDF; the character grams see what marker removal leaves behind,
such as "Similarly to, this" or "proposed by ."), trained on training sentences: P(the sentence
cites a paper).

**Which candidates** (:class:`SentenceCitationModel`): per (sentence, candidate) pair, BM25 of the
candidate's ``title + abstract`` against the sentence (raw, relative to the sentence's best, rank)
and against its neighbours, whether this is the candidate's best sentence, the paragraph-level
P(cited) of the Task 1 system (:class:`~.discovery.DiscoveryModel`, trained on other paragraphs),
its rank in the paragraph and the sentence's position; with a dense encoder also the pair's
cosine. (The need probability is no feature of the pair scorer: on dev the scorer did better
without it, 0.383 against 0.373 sentence F1 with an out-of-fold need; it only gates.) A
``HistGradientBoostingClassifier`` learns P(the sentence cites
the candidate).

**Rule** (:class:`SentenceRule`, tuned on dev): a sentence whose need probability is below
``need`` gets no citation; any other gets its candidates of logit at least ``threshold``, and at
least its ``min_k`` best. The official F1 averages only over sentences with gold citations, so it
alone rewards citing in every sentence; the seed reports no-citation accuracy beside it.
:func:`tune` chooses ``threshold``/``min_k`` for the F1 and then ``need`` for the micro F1 (which
counts a citation in a no-citation sentence as a false positive).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from .. import lazy_libs
from ..errors import MustciteError
from ..numeric import logit
from ..retrieval.base import doc_text
from .discovery import DiscoveryModel
from .evaluate import score_task3
from .formats import NOWHERE, Answer, Example
from .lexical import ranks, relative
from .persist import read_config, read_payload, write_model

FEATURES = ("s_bm25", "s_rel", "s_rank", "prev_bm25", "prev_rel", "next_bm25", "next_rel", "best_sentence",
            "para_p", "para_logit", "para_rank", "position", "n_sentences", "n_candidates")
DENSE_FEATURES = ("s_cos", "s_cos_rel", "s_cos_rank")
#: paragraphs per classifier call
CHUNK = 256


class CitationNeed:
    """P(sentence cites a paper) from its words and characters (TF-IDF + logistic regression)."""

    def __init__(self, C: float = 2.0, seed: int = 0):
        self.C, self.seed, self._pipe = C, seed, None

    def fit(self, sentences: Sequence[str], cites: Sequence[bool]) -> CitationNeed:
        TfidfVectorizer = lazy_libs.sklearn_feature_extraction_text().TfidfVectorizer
        LogisticRegression = lazy_libs.sklearn_linear_model().LogisticRegression
        pipeline = lazy_libs.sklearn_pipeline()
        make_pipeline, make_union = pipeline.make_pipeline, pipeline.make_union
        feats = make_union(
            TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_features=200_000, sublinear_tf=True),
            TfidfVectorizer(analyzer="char", ngram_range=(2, 4), min_df=3, max_features=200_000,
                            sublinear_tf=True, lowercase=False))
        self._pipe = make_pipeline(feats, LogisticRegression(C=self.C, max_iter=2000, random_state=self.seed))
        self._pipe.fit(list(sentences), np.asarray(cites, dtype=int))
        return self

    def predict(self, sentences: Sequence[str]) -> np.ndarray:
        if self._pipe is None:
            raise MustciteError("the citation-need classifier is not trained")
        return self._pipe.predict_proba(list(sentences))[:, 1] if len(sentences) else np.zeros(0)


@dataclass
class SentenceRule:
    need: float = 0.0
    threshold: float = 0.0
    min_k: int = 1

    def choose(self, need: float, scores: np.ndarray) -> list[int]:
        if need < self.need or not len(scores):
            return []
        order = np.argsort(-scores, kind="stable")
        keep = [int(i) for i in order if scores[i] >= self.threshold]
        return keep if len(keep) >= self.min_k else [int(i) for i in order[:self.min_k]]


@dataclass
class SentenceCitationModel:
    """Task 3 system over a trained Task 1 :class:`DiscoveryModel` (its paragraph-level P)."""

    discovery: DiscoveryModel
    need: CitationNeed = field(default_factory=CitationNeed)
    name: str = "learned"
    params: dict[str, Any] = field(default_factory=lambda: {"max_iter": 300, "learning_rate": 0.05,
                                                            "max_leaf_nodes": 31, "random_state": 0})
    rule: SentenceRule = field(default_factory=SentenceRule)
    info: dict[str, Any] = field(default_factory=dict)
    _clf: Any = None

    @property
    def names(self) -> tuple[str, ...]:
        return FEATURES + (DENSE_FEATURES if self.discovery._feat.encoder is not None else ())

    def _check(self, ex: Example) -> None:
        if ex.task != 3:
            raise (ex.origin or NOWHERE).error(f"a Task {ex.task} example, but this system is for Task 3")

    def pairs(self, examples: Sequence[Example]) -> list[np.ndarray]:
        """Per example, one feature row per sentence x candidate (sentence-major). The Task 1
        system's P is computed for all examples in one call."""
        feat = self.discovery._feat
        stage1, grids = [], []
        for ex in examples:
            sents = [s or " " for s in ex.sentences or ()]
            X1 = feat.features(ex, sentences=sents) if sents else np.zeros((0, len(feat.names)), dtype=np.float32)
            stage1.append((X1, feat.last_sentence_scores if sents else None))
        sizes = [len(x) for x, _ in stage1]
        flat = self.discovery._clf.predict_proba(np.vstack([x for x, _ in stage1]))[:, 1] if sum(sizes) else np.zeros(0)
        for ex, (_, S), prob in zip(examples, stage1, np.split(flat, np.cumsum(sizes)[:-1])):
            grids.append(self._rows(ex, S, prob))
        return grids

    def _rows(self, ex: Example, S: np.ndarray | None, prob: np.ndarray) -> np.ndarray:
        sents = list(ex.sentences or ())
        n, m = len(ex.candidates), len(sents)
        if not n or not m:
            return np.zeros((0, len(self.names)), dtype=np.float32)
        feat = self.discovery._feat
        plog, prank = logit(prob), ranks(prob)
        best = np.argmax(S, axis=0)
        zero = np.zeros(n, dtype=np.float32)
        dense = None
        if feat.encoder is not None:
            cv = feat.encoder.embed([doc_text(c.title, c.abstract) for c in ex.candidates], desc="")
            dense = feat.encoder.encode([s or " " for s in sents]) @ cv.T   # m x n
        rows = []
        for i in range(m):
            s = S[i]
            prev = S[i - 1] if i > 0 else zero
            nxt = S[i + 1] if i + 1 < m else zero
            cols = [s, relative(s), ranks(s), prev, relative(prev), nxt, relative(nxt), (best == i).astype(np.float32),
                    prob, plog, prank, np.full(n, i / max(1, m - 1)),
                    np.full(n, m), np.full(n, n)]
            if dense is not None:
                cols += [dense[i], relative(dense[i]), ranks(dense[i])]
            rows.append(np.stack(cols, axis=1))
        return np.vstack(rows).astype(np.float32)

    def fit(self, examples: Sequence[Example], *, progress: bool = True) -> SentenceCitationModel:
        """Fit the citation-need classifier and the pair scorer on Task 3 training paragraphs
        (paragraphs the discovery model was not trained on)."""
        HistGradientBoostingClassifier = lazy_libs.sklearn_ensemble().HistGradientBoostingClassifier

        examples = [ex for ex in examples if ex.gold is not None]
        for ex in examples:
            self._check(ex)
        sents = [s for ex in examples for s in ex.sentences or ()]
        cites = [bool(g) for ex in examples for g in ex.gold]
        if len(set(cites)) < 2:
            raise MustciteError("the training sentences need both kinds: with and without a citation")
        self.need.fit(sents, cites)
        Xs, ys = [], []
        bar = tqdm(total=len(examples), desc="task 3 features", disable=not progress, unit="para")
        for start in range(0, len(examples), CHUNK):
            part = examples[start:start + CHUNK]
            for ex, X in zip(part, self.pairs(part)):
                if len(X):
                    Xs.append(X)
                    ys.append(np.array([c.id in set(g) for g in ex.gold for c in ex.candidates], dtype=np.int8))
            bar.update(len(part))
        bar.close()
        if not Xs:
            raise MustciteError("no training paragraph with sentences and candidates")
        X, y = np.vstack(Xs), np.concatenate(ys)
        self._clf = HistGradientBoostingClassifier(**self.params, early_stopping=True, validation_fraction=0.1)
        self._clf.fit(X, y)
        self.info.update({"train_paragraphs": len(Xs), "train_sentences": len(sents),
                          "train_citing_sentences": int(sum(cites)), "train_pairs": int(len(y)),
                          "train_positives": int(y.sum()), "iterations": int(self._clf.n_iter_)})
        return self

    def parts(self, examples: Sequence[Example], *, progress: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per example ``(need per sentence, logit matrix sentences x candidates)``."""
        if self._clf is None:
            raise MustciteError("the Task 3 model is not trained: call fit() or load()")
        out = []
        bar = tqdm(total=len(examples), desc="task 3 scores", disable=not progress, unit="para")
        for start in range(0, len(examples), CHUNK):
            part = examples[start:start + CHUNK]
            sents = [s for ex in part for s in ex.sentences or ()]
            need = self.need.predict(sents) if sents else np.zeros(0)
            grids = self.pairs(part)
            sizes = [len(X) for X in grids]
            flat = logit(self._clf.predict_proba(np.vstack(grids))[:, 1]) if sum(sizes) else np.zeros(0)
            needs = np.split(need, np.cumsum([len(ex.sentences or ()) for ex in part])[:-1])
            for ex, nd, L in zip(part, needs, np.split(flat, np.cumsum(sizes)[:-1])):
                m, n = len(ex.sentences or ()), len(ex.candidates)
                out.append((nd, L.reshape(m, n) if len(L) else np.zeros((m, n))))
            bar.update(len(part))
        bar.close()
        return out

    def answer(self, ex: Example, parts: tuple[np.ndarray, np.ndarray], rule: SentenceRule | None = None) -> Answer:
        need, L = parts
        rule = rule or self.rule
        ids = [c.id for c in ex.candidates]
        cites = tuple(tuple(ids[j] for j in rule.choose(float(need[i]), L[i])) if ids else ()
                      for i in range(len(ex.sentences or ())))
        return Answer(ex.id, 3, cites, ex.sentences)

    def predict(self, examples: Sequence[Example]) -> list[Answer]:
        for ex in examples:
            self._check(ex)
        return [self.answer(ex, pt) for ex, pt in zip(examples, self.parts(examples))]

    # ------------------------------------------------------------------ persistence
    def metadata(self) -> dict[str, Any]:
        return {"method": self.name, "task": 3, "features": list(self.names),
                "need": {"model": "TF-IDF word 1-2 + char 2-4 grams, LogisticRegression", "C": self.need.C},
                "model": "HistGradientBoostingClassifier", "params": self.params, "rule": asdict(self.rule),
                "discovery": "discovery/ (the Task 1 system)", **self.info}

    def save(self, folder: str | Path) -> Path:
        self.discovery.save(Path(folder) / "discovery")
        return write_model(folder, {"pairs": self._clf, "need": self.need._pipe}, self.metadata())

    @classmethod
    def load(cls, folder: str | Path) -> SentenceCitationModel:
        folder = Path(folder)
        meta = read_config(folder, 3)
        keep = ("train_paragraphs", "train_sentences", "train_citing_sentences", "train_pairs",
                "train_positives", "iterations", "tuned_on")
        m = cls(discovery=DiscoveryModel.load(folder / "discovery"), need=CitationNeed(C=meta["need"]["C"]),
                params=meta["params"], rule=SentenceRule(**meta["rule"]), info={k: meta[k] for k in keep if k in meta})
        parts = read_payload(folder)
        if not isinstance(parts, dict) or set(parts) != {"pairs", "need"}:
            raise MustciteError("cannot load the model: not a Task 3 payload", path=folder / "model.joblib")
        m._clf, m.need._pipe = parts["pairs"], parts["need"]
        return m


def tune(model: SentenceCitationModel, dev: Sequence[Example], *,
         thresholds: Sequence[float] = tuple(np.round(np.arange(-4.0, 2.01, 0.2), 2)),
         needs: Sequence[float] = tuple(np.round(np.arange(0.0, 0.91, 0.05), 2)),
         min_ks: Sequence[int] = (0, 1), progress: bool = True) -> dict[str, Any]:
    """Choose the rule on ``dev``: ``threshold`` and ``min_k`` for the official F1 (every sentence
    answered), then ``need`` for the micro F1 with them. Sets ``model.rule``; returns the grid."""
    parts = model.parts(dev, progress=progress)
    gold = [ex.answer() for ex in dev]

    def run(rule: SentenceRule) -> dict[str, Any]:
        return score_task3([(g, model.answer(ex, pt, rule)) for g, ex, pt in zip(gold, dev, parts)])

    grid, best = [], None
    for k in min_ks:
        for t in thresholds:
            r = run(SentenceRule(0.0, float(t), k))
            grid.append({"need": 0.0, "threshold": float(t), "min_k": k, "f1": round(r["f1"], 4)})
            if best is None or r["f1"] > best[0]:
                best = (r["f1"], float(t), k)
    need_grid, chosen = [], None
    for q in needs:
        r = run(SentenceRule(float(q), best[1], best[2]))
        need_grid.append({"need": float(q), "f1": round(r["f1"], 4), "micro_f1": round(r["micro_f1"], 4),
                          "no_citation_accuracy": round(r["no_citation_accuracy"], 4)})
        if chosen is None or r["micro_f1"] > chosen[0]:
            chosen = (r["micro_f1"], float(q))
    model.rule = SentenceRule(chosen[1], best[1], best[2])
    model.info["tuned_on"] = {"paragraphs": len(dev), "f1_ungated": round(best[0], 4),
                              "micro_f1": round(chosen[0], 4)}
    return {"best": asdict(model.rule), "grid": grid, "need_grid": need_grid}
