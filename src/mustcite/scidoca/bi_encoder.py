"""A paragraph-candidate bi-encoder for the SCIDOCA tasks: the shipped MiniLM fine-tuned here.

Stage 1 of Task 1 (and through it Tasks 2 and 3) reads a dense encoder's cosine between a
candidate's ``title. abstract`` and the paragraph, and between the candidate and each sentence
(:class:`~mustcite.scidoca.discovery.CandidateFeaturizer`). The shipped all-MiniLM-L6-v2 was
trained for title/abstract similarity, not for "this text cites that paper"; this module
fine-tunes it for the latter with NT-Xent (:func:`mustcite.retrieval.ntxent.train_ntxent`).

Training items are triplets from gold-labelled Task 3 training paragraphs (they give the gold
per sentence, so both units of the features are taught):

* ``(paragraph, gold candidate, hard negative)`` for up to ``positives`` gold candidates of the
  paragraph, and
* ``(citing sentence, a candidate it cites, hard negative)`` for up to ``sentences`` citing
  sentences,

where the hard negative is a non-gold candidate of the same paragraph among the ``hard_pool``
ones BM25 ranks highest for the paragraph (the same paper's references cited elsewhere: exactly
the distractors of the task). Every other text of the batch is a further negative. Markers are
removed from every text, as the features see them. Seeded.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..retrieval.base import doc_text
from ..retrieval.ntxent import NTXentConfig, train_ntxent
from .cross import with_bm25
from .discovery import sentences_of
from .formats import Example
from .masked import DEFAULT_ENCODER

#: tokens per text when training: as many as stage 1 encodes
MAX_SEQ_LENGTH = DEFAULT_ENCODER["max_seq_length"]


def training_triplets(examples: Sequence[Example], *, positives: int = 1, sentences: int = 1,
                      hard_pool: int = 10, seed: int = 0) -> list[tuple[str, str, str]]:
    """Triplets of Task 3 examples (see the module doc); other tasks give paragraph triplets only."""
    rng = random.Random(seed)
    text = lambda c: doc_text(c.title, c.abstract)  # noqa: E731 - the text stage 1 encodes
    out: list[tuple[str, str, str]] = []
    for (ex, s), orig in zip(with_bm25(examples), examples):
        gold = set(ex.gold)
        by_id = {c.id: c for c in ex.candidates}
        hard = [ex.candidates[i] for i in sorted(range(len(ex.candidates)), key=lambda i: -s[i])
                if ex.candidates[i].id not in gold][:hard_pool]
        if not gold or not hard:
            continue
        for cid in rng.sample(sorted(gold), min(positives, len(gold))):
            out.append((ex.text, text(by_id[cid]), text(rng.choice(hard))))
        if orig.task == 3 and sentences:
            sents = sentences_of(orig)
            citing = [(sent, ids) for sent, ids in zip(sents, orig.gold) if ids] if len(sents) == len(orig.gold) else []
            for sent, ids in rng.sample(citing, min(sentences, len(citing))):
                out.append((sent, text(by_id[rng.choice(sorted(ids))]), text(rng.choice(hard))))
    return out


def train_bi_encoder(examples: Sequence[Example], out_dir: str | Path, *, seed: int = 0,
                     max_seq_length: int = MAX_SEQ_LENGTH, epochs: int = 1, batch_size: int = 32,
                     progress: bool = True) -> dict[str, Any]:
    """Fine-tune the shipped MiniLM on :func:`training_triplets` of ``examples``; saves a
    sentence-transformers folder (usable as ``--method`` / an encoder spec) and returns its card."""
    triplets = training_triplets(examples, seed=seed)
    cfg = NTXentConfig(epochs=epochs, batch_size=batch_size, seed=seed, max_seq_length=max_seq_length)
    return train_ntxent(triplets, out_dir, config=cfg, progress=progress,
                        data_note=f"SCIDOCA paragraph/sentence -> cited candidate triplets with a BM25-hard "
                                  f"same-paragraph negative, from {len(examples)} training paragraphs")
