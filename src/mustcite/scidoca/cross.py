"""A paragraph-candidate cross-encoder for the SCIDOCA tasks, trained here from the shipped MiniLM.

It reads a paragraph (citation markers removed) and one candidate's ``title. abstract`` in one
BERT pass and gives a logit: how likely the paragraph cites the candidate. The model and its
training loop are the recommender's (:class:`mustcite.recommend.crossencoder.CrossEncoderReranker`);
this module only says what the pairs are.

Training pairs (:func:`training_pairs`) come from Task 1 training paragraphs: up to
``positives`` gold candidates (target 1), ``hard`` negatives among the candidates BM25 ranks
highest against the paragraph (target 0; the candidates a first stage confuses with the gold) and
``easy`` random other candidates (target 0). A pair costs one MiniLM pass, so the systems score
only their first stage's top candidates with it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .floors import _MASK, BM25TopK
from .formats import Candidate, Example

#: tokens per pair (paragraph first; the candidate's text is cut first when too long)
MAX_LENGTH = 192


def candidate_text(c: Candidate) -> str:
    return f"{c.title}. {c.abstract}".strip(" .") if c.abstract else c.title


def paragraph_text(ex: Example) -> str:
    return " ".join(_MASK.sub(" ", ex.text).split())


def training_pairs(examples: Sequence[Example], *, positives: int = 2, hard: int = 2, easy: int = 1,
                   seed: int = 0) -> tuple[list[tuple[str, str]], list[float]]:
    """``(paragraph, candidate text)`` pairs and 0/1 targets from gold-labelled examples (any task:
    the gold ids of the paragraph are the positives)."""
    rng = random.Random(seed)
    bm25 = BM25TopK(1)
    pairs: list[tuple[str, str]] = []
    targets: list[float] = []
    as_task1 = [Example(e.id, 1, paragraph_text(e), e.candidates, gold_ids(e)) for e in examples]
    scores = bm25.score(as_task1)
    for ex, s in zip(as_task1, scores):
        gold = set(ex.gold or ())
        if not gold:
            continue
        text = ex.text
        pos = [c for c in ex.candidates if c.id in gold]
        neg = [ex.candidates[i] for i in sorted(range(len(ex.candidates)), key=lambda i: -s[i])
               if ex.candidates[i].id not in gold]
        chosen = rng.sample(pos, min(positives, len(pos)))
        negs = neg[:hard]
        rest = neg[hard:]
        negs += rng.sample(rest, min(easy, len(rest)))
        for c in chosen:
            pairs.append((text, candidate_text(c)))
            targets.append(1.0)
        for c in negs:
            pairs.append((text, candidate_text(c)))
            targets.append(0.0)
    return pairs, targets


def gold_ids(ex: Example) -> tuple[str, ...]:
    """The gold candidate ids of an example of any task, as a Task 1 answer."""
    g = ex.gold
    if g is None:
        return ()
    if ex.task == 2:
        return tuple(dict.fromkeys(v for v in g.values() if v))
    if ex.task == 3:
        return tuple(dict.fromkeys(i for ids in g for i in ids))
    return tuple(g)


def train_cross_encoder(examples: Sequence[Example], *, seed: int = 0, max_length: int = MAX_LENGTH,
                        epochs: int = 1, progress: bool = True):
    """A new MiniLM cross-encoder fitted on :func:`training_pairs` of ``examples``."""
    from ..recommend.crossencoder import CrossEncoderReranker

    pairs, targets = training_pairs(examples, seed=seed)
    ce = CrossEncoderReranker.new(max_length=max_length, seed=seed)
    ce.fit(pairs, targets, epochs=epochs, seed=seed, progress=progress)
    ce.info.update({"task": "scidoca paragraph-candidate", "train_paragraphs": len(examples)})
    return ce
