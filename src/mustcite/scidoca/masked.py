"""A learned system for SCIDOCA Task 2 (masked citation prediction): slot-local lexical evidence,
a gradient-boosted scorer, and one assignment per paragraph.

For every (mask, candidate) pair of a paragraph, :func:`pair_features` computes BM25 scores of
the candidate's ``title + abstract`` against the words around the mask at several half-widths
(3, 5, 10, 25 words, each raw, divided by the mask's best, and as a rank), against the mask's
sentence and against the whole paragraph, plus the paragraph's numbers of masks and candidates.
The collection for IDF is the paragraph's own candidate list, as in the BM25 floor
(:mod:`.floors`). A scikit-learn ``HistGradientBoostingClassifier`` learns P(candidate is the
mask's citation) on training paragraphs; :meth:`MaskedCitationModel.predict` then gives the
paragraph's masks distinct candidates maximising the summed log-probability (the Hungarian
method, ``scipy.optimize.linear_sum_assignment``); masks beyond the number of candidates take
their own best candidate (a paper may be cited twice).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment
from tqdm import tqdm

from .. import lazy_libs
from ..errors import MustciteError
from ..numeric import logit
from ..retrieval.base import doc_text
from ..retrieval.dense import dense_from_meta
from .discovery import DiscoveryModel
from .formats import NOWHERE, Answer, Example
from .lexical import MASK, SENTENCE_END, ParagraphBM25, bm25_text, bm25_tokenizer, ranks, relative, window_query
from .persist import read_config, read_payload, write_model

WIDTHS = (3, 5, 10, 25)
FEATURES = tuple(f"w{w}_{kind}" for w in WIDTHS for kind in ("bm25", "rel", "rank")) + (
    "sentence_bm25", "sentence_rel", "paragraph_bm25", "paragraph_rel", "n_masks", "n_candidates")
#: with a dense encoder: cosine of the candidate's embedding with the mask's sentence (raw, relative
#: to the mask's best, rank), with its 10-word window and with the paragraph
DENSE_FEATURES = ("sentence_cos", "sentence_cos_rel", "sentence_cos_rank", "w10_cos", "paragraph_cos")
#: with a Task 1 system (:class:`~.discovery.DiscoveryModel`, trained on other paragraphs): the
#: candidate's paragraph-level P(cited), as probability, logit and rank
DISCOVERY_FEATURES = ("para_p", "para_logit", "para_rank")
#: the recommender's default encoder (int8 ONNX MiniLM, 64 tokens): candidate embeddings come from its cache
DEFAULT_ENCODER = {"spec": "onnx-int8:minilm", "max_seq_length": 64}
#: paragraphs per classifier call
CHUNK = 256


@dataclass
class Pairs:
    """One paragraph's (mask, candidate) grid: ``X`` has one row per mask x candidate (mask-major)."""

    masks: tuple[str, ...]
    ids: tuple[str, ...]
    X: np.ndarray
    y: np.ndarray | None = None


def _sentence_of(text: str, mask: str) -> str:
    for sentence in SENTENCE_END.split(text):
        if mask in sentence:
            return MASK.sub(" ", sentence)
    return ""


class PairFeaturizer:
    """Features of every (mask, candidate) pair of a paragraph: :meth:`pairs` of one example,
    :meth:`grids` of many (the names of the columns: :attr:`names`)."""

    def __init__(self, k1: float = 1.5, b: float = 0.75, encoder: Any = None, discovery: Any = None):
        self.k1, self.b, self.encoder, self.discovery = k1, b, encoder, discovery
        self.tokenize = bm25_tokenizer()

    @property
    def names(self) -> tuple[str, ...]:
        return (FEATURES + (DENSE_FEATURES if self.encoder is not None else ())
                + (DISCOVERY_FEATURES if self.discovery is not None else ()))

    def _paragraph_priors(self, examples: Sequence[Example]) -> list[np.ndarray]:
        """Per example (candidates x DISCOVERY_FEATURES): the Task 1 system's P on the paragraph,
        masks removed (one classifier call for all)."""
        plain = [Example(ex.id, 1, " ".join(MASK.sub(" ", ex.text).split()), ex.candidates) for ex in examples]
        return [np.stack([p, logit(p), ranks(p)], axis=1) for p in self.discovery.probabilities(plain)]

    def grids(self, examples: Sequence[Example]) -> list[Pairs]:
        """:meth:`pairs` of every example."""
        priors = self._paragraph_priors(examples) if self.discovery is not None else [None] * len(examples)
        return [self.pairs(ex, prior) for ex, prior in zip(examples, priors)]

    def _dense(self, ex: Example, masks: tuple[str, ...]) -> list[np.ndarray]:
        """Per mask, the dense feature block (candidates x DENSE_FEATURES)."""
        cands = self.encoder.embed([doc_text(c.title, c.abstract) for c in ex.candidates], desc="")
        text = ex.text
        queries = [MASK.sub(" ", text)] + [q for m in masks for q in (_sentence_of(text, m) or MASK.sub(" ", text),
                                                                        window_query(text, m, 10) or " ")]
        qv = self.encoder.encode(queries)
        para = cands @ qv[0]
        blocks = []
        for mi in range(len(masks)):
            sent, win = cands @ qv[1 + 2 * mi], cands @ qv[2 + 2 * mi]
            blocks.append(np.stack([sent, relative(sent), ranks(sent), win, para], axis=1))
        return blocks

    def pairs(self, ex: Example, prior: np.ndarray | None = None) -> Pairs:
        """The grid of one example; ``prior``: its :meth:`_paragraph_priors` row (computed here
        when the featurizer has a Task 1 system and none is given)."""
        masks, ids = ex.masks, tuple(c.id for c in ex.candidates)
        text = ex.text
        queries = [MASK.sub(" ", text)]
        for m in masks:
            queries += [window_query(text, m, w) for w in WIDTHS] + [_sentence_of(text, m)]
        toks = self.tokenize([bm25_text(c) for c in ex.candidates] + queries) if ids else []
        index = ParagraphBM25(toks[:len(ids)], self.k1, self.b, "lucene") if ids else None
        q = toks[len(ids):]
        n = len(ids)
        rows = []
        if n:
            para = index.scores(q[0])
            per = len(WIDTHS) + 1
            for mi in range(len(masks)):
                cols = []
                for wi in range(len(WIDTHS)):
                    s = index.scores(q[1 + mi * per + wi])
                    cols += [s, relative(s), ranks(s)]
                s = index.scores(q[1 + mi * per + len(WIDTHS)])
                cols += [s, relative(s), para, relative(para),
                         np.full(n, len(masks), dtype=np.float32), np.full(n, n, dtype=np.float32)]
                rows.append(np.stack(cols, axis=1))
            if self.encoder is not None:
                rows = [np.hstack([r, d]) for r, d in zip(rows, self._dense(ex, masks))]
            if self.discovery is not None:
                prior = self._paragraph_priors([ex])[0] if prior is None else prior
                rows = [np.hstack([r, prior]) for r in rows]
        X = np.vstack(rows).astype(np.float32) if rows else np.zeros((0, len(self.names)), dtype=np.float32)
        y = None
        if ex.gold is not None and n:
            gold = dict(ex.gold)
            y = np.array([gold.get(m) == cid for m in masks for cid in ids], dtype=np.int8)
        return Pairs(masks, ids, X, y)


@dataclass
class MaskedCitationModel:
    """Task 2 system: :meth:`fit` on training paragraphs, :meth:`predict` answers."""

    name: str = "learned"
    #: a dense encoder's settings (:func:`mustcite.retrieval.dense.dense_from_meta`), or None: lexical only
    encoder: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=lambda: {"max_iter": 300, "learning_rate": 0.05,
                                                            "max_leaf_nodes": 31, "random_state": 0})
    info: dict[str, Any] = field(default_factory=dict)
    #: a trained Task 1 system whose paragraph-level P is a feature (trained on other paragraphs)
    discovery: Any = None
    _clf: Any = None

    def __post_init__(self):
        enc = None
        if self.encoder is not None:
            enc = dense_from_meta(self.encoder)
        if self.discovery is not None:
            self.discovery.set_cross_encoder(None, 0)      # stage 1's P only
        self._feat = PairFeaturizer(encoder=enc, discovery=self.discovery)

    def metadata(self) -> dict[str, Any]:
        return {"method": self.name, "task": 2, "features": list(self._feat.names), "encoder": self.encoder,
                "discovery": "discovery/ (the Task 1 system)" if self.discovery is not None else None,
                "model": "HistGradientBoostingClassifier",
                "params": self.params, "assignment": "Hungarian over log P, distinct candidates per paragraph",
                **self.info}

    def fit(self, examples: Iterable[Example], *, progress: bool = True) -> MaskedCitationModel:
        HistGradientBoostingClassifier = lazy_libs.sklearn_ensemble().HistGradientBoostingClassifier

        Xs, ys, n = [], [], 0
        bar = tqdm(desc="task 2 features", disable=not progress, unit="para")
        it = iter(examples)
        while chunk := list(itertools.islice(it, CHUNK)):
            for ex in chunk:
                self._check(ex)
            for p in self._feat.grids(chunk):
                if p.y is not None and p.y.any():
                    Xs.append(p.X)
                    ys.append(p.y)
                    n += 1
            bar.update(len(chunk))
        bar.close()
        if not Xs:
            raise MustciteError("no training paragraph with a gold citation among its candidates")
        X, y = np.vstack(Xs), np.concatenate(ys)
        self._clf = HistGradientBoostingClassifier(**self.params, early_stopping=True, validation_fraction=0.1)
        self._clf.fit(X, y)
        self.info = {"train_paragraphs": n, "train_pairs": int(len(y)), "train_positives": int(y.sum()),
                     "iterations": int(self._clf.n_iter_)}
        return self

    def _check(self, ex: Example) -> None:
        if ex.task != 2:
            raise (ex.origin or NOWHERE).error(f"a Task {ex.task} example, but this system is for Task 2")

    def predict(self, examples: Sequence[Example]) -> list[Answer]:
        if self._clf is None:
            raise MustciteError("the Task 2 model is not trained: call fit() or load()")
        for ex in examples:
            self._check(ex)
        out = []
        for start in range(0, len(examples), CHUNK):     # one classifier call per chunk, not per paragraph
            grids = self._feat.grids(examples[start:start + CHUNK])
            sizes = [len(p.X) for p in grids]
            flat = self._clf.predict_proba(np.vstack([p.X for p in grids]))[:, 1] if sum(sizes) else np.zeros(0)
            for ex, p, prob in zip(examples[start:start + CHUNK], grids, np.split(flat, np.cumsum(sizes)[:-1])):
                out.append(self._answer(ex, p, prob))
        return out

    @staticmethod
    def _answer(ex: Example, p: Pairs, prob: np.ndarray) -> Answer:
        if not p.ids:
            return Answer(ex.id, 2, {m: None for m in p.masks})
        prob = prob.reshape(len(p.masks), len(p.ids))
        cost = -np.log(np.clip(prob, 1e-9, 1.0))
        rows, cols = linear_sum_assignment(cost)
        chosen = {p.masks[r]: p.ids[c] for r, c in zip(rows, cols)}
        for mi, m in enumerate(p.masks):     # more masks than candidates: each its own best
            if m not in chosen:
                chosen[m] = p.ids[int(np.argmax(prob[mi]))]
        return Answer(ex.id, 2, {m: chosen[m] for m in p.masks})

    def save(self, folder: str | Path) -> Path:
        if self.discovery is not None:
            self.discovery.save(Path(folder) / "discovery")
        return write_model(folder, self._clf, self.metadata())

    @classmethod
    def load(cls, folder: str | Path) -> MaskedCitationModel:
        folder = Path(folder)
        meta = read_config(folder, 2)
        keep = ("train_paragraphs", "train_pairs", "train_positives", "iterations")
        discovery = None
        if meta.get("discovery"):
            discovery = DiscoveryModel.load(folder / "discovery")
        m = cls(params=meta["params"], info={k: meta[k] for k in keep if k in meta}, encoder=meta.get("encoder"),
                discovery=discovery)
        m._clf = read_payload(folder)
        return m
