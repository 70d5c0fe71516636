"""A paragraph-candidate cross-encoder for the SCIDOCA tasks, trained here from the shipped MiniLM.

It reads a paragraph (citation markers removed) and one candidate's ``title. abstract`` in one
BERT pass and gives a logit: how likely the paragraph cites the candidate. The model and its
training loop are the recommender's (:class:`mustcite.retrieval.cross_encoder.CrossEncoderReranker`);
this module only says what the pairs are.

Training data comes from training paragraphs of any task (the gold ids are the positives), in
one of two shapes:

* listwise groups (:func:`training_groups`, the default): for up to ``positives`` gold
  candidates of a paragraph, one group of that candidate and ``negatives`` non-gold candidates of
  the same paragraph, most of them drawn from the ``hard_pool`` BM25 ranks highest (the candidates
  a first stage confuses with the gold), trained with the localized contrastive loss on the
  segment-cosine head by default (it starts at AUC 0.68 among BM25's top 8 dev candidates);
* pointwise pairs (:func:`training_pairs`): up to ``positives`` gold candidates (target 1),
  ``hard`` BM25-hardest and ``easy`` random non-gold candidates (target 0), binary cross-entropy.
  On this CPU it reached AUC 0.59 among BM25's top 8 (BM25 alone: 0.70), hence listwise.

A pair costs one MiniLM pass, so the systems score only their first stage's top candidates with it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..retrieval.cross_encoder import CrossEncoderReranker
from .floors import BM25TopK
from .formats import Candidate, Example
from .lexical import MASK

#: tokens per pair (paragraph first; the candidate's text is cut first when too long)
MAX_LENGTH = 192


def candidate_text(c: Candidate) -> str:
    return f"{c.title}. {c.abstract}".strip(" .") if c.abstract else c.title


def paragraph_text(ex: Example) -> str:
    return " ".join(MASK.sub(" ", ex.text).split())


def training_pairs(examples: Sequence[Example], *, positives: int = 2, hard: int = 2, easy: int = 1,
                   seed: int = 0) -> tuple[list[tuple[str, str]], list[float]]:
    """``(paragraph, candidate text)`` pairs and 0/1 targets from gold-labelled examples (any task:
    the gold ids of the paragraph are the positives)."""
    rng = random.Random(seed)
    pairs: list[tuple[str, str]] = []
    targets: list[float] = []
    for ex, s in with_bm25(examples):
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


def training_groups(examples: Sequence[Example], *, positives: int = 2, negatives: int = 7, hard: int = 5,
                    hard_pool: int = 10, seed: int = 0) -> list[tuple[str, list[str], list[float]]]:
    """Listwise ``(paragraph, [gold, non-gold...], [1, 0...])`` groups: ``hard`` of the negatives
    drawn from the ``hard_pool`` non-gold candidates BM25 ranks highest, the rest from all other
    non-gold candidates (seeded); fewer when the paragraph has fewer."""
    rng = random.Random(seed)
    groups: list[tuple[str, list[str], list[float]]] = []
    for ex, s in with_bm25(examples):
        gold = set(ex.gold or ())
        pos = [c for c in ex.candidates if c.id in gold]
        neg = [ex.candidates[i] for i in sorted(range(len(ex.candidates)), key=lambda i: -s[i])
               if ex.candidates[i].id not in gold]
        if not pos or not neg:
            continue
        for c in rng.sample(pos, min(positives, len(pos))):
            drawn = rng.sample(neg[:hard_pool], min(hard, len(neg[:hard_pool])))
            left = [n for n in neg if n not in drawn]
            drawn += rng.sample(left, min(negatives - len(drawn), len(left)))
            groups.append((ex.text, [candidate_text(c)] + [candidate_text(n) for n in drawn],
                           [1.0] + [0.0] * len(drawn)))
    return groups


def with_bm25(examples: Sequence[Example]):
    """Each example as a Task 1 example (markers removed, gold as ids) with BM25's candidate scores."""
    as_task1 = [Example(e.id, 1, paragraph_text(e), e.candidates, gold_ids(e)) for e in examples]
    return zip(as_task1, BM25TopK(1).score(as_task1))


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
                        epochs: int = 1, objective: str = "listwise", head: str = "segment-cosine",
                        progress: bool = True):
    """A new MiniLM cross-encoder (``head``: see :meth:`CrossEncoderReranker.new`) fitted on
    ``examples``: listwise on :func:`training_groups` (embeddings frozen) or pointwise on
    :func:`training_pairs`."""
    ce = CrossEncoderReranker.new(max_length=max_length, seed=seed, head=head)
    if objective == "listwise":
        ce.freeze_embeddings().fit_listwise(training_groups(examples, seed=seed), epochs=epochs, seed=seed,
                                            progress=progress)
    elif objective == "pointwise":
        pairs, targets = training_pairs(examples, seed=seed)
        ce.fit(pairs, targets, epochs=epochs, seed=seed, progress=progress)
    else:
        raise ValueError(f"unknown objective {objective!r} (listwise | pointwise)")
    ce.info.update({"task": "scidoca paragraph-candidate", "train_paragraphs": len(examples)})
    return ce
