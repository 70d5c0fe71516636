"""NT-Xent contrastive fine-tuning of a bi-encoder (MasterSet's "-NTX" recipe) on must-cite pairs.

Pairs are (query title + abstract, must-cite pool paper title + abstract), e.g. from the TRAIN
queries of a built benchmark (:func:`mustcite.benchmark.retrieval_training.training_pairs`). The
loss is sentence-transformers' ``MultipleNegativesRankingLoss`` with ``scale = 1 / temperature``:
cosine similarities of each query to every document of the batch, softmax cross-entropy with the
paired document as the target and the other in-batch documents as negatives, i.e. NT-Xent /
InfoNCE with in-batch negatives (query -> document direction). Batches are formed so that no
document appears twice in a batch (a repeated document would be a false negative).
The model and a ``training_card.json`` (data, epochs, loss per epoch, seed, temperature...) are
saved to ``<work>/models/<name>/``.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from .. import lazy_libs
from ..errors import MustciteError
from ..io import atomic_write_json
from .memory import peak_rss_mb
from .vectors import default_model_path


@dataclass
class NTXentConfig:
    temperature: float = 0.05
    epochs: int = 1
    batch_size: int = 32
    lr: float = 2e-5
    warmup_ratio: float = 0.1
    seed: int = 13
    max_seq_length: int = 256
    max_pairs: int | None = None


def seeded_sample(pairs: list, seed: int, max_pairs: int | None) -> tuple[random.Random, list]:
    """Seed Python, numpy and torch for a training run; returns its random generator and the pairs,
    ``max_pairs`` of them drawn by it when there are more."""
    torch = lazy_libs.torch("NT-Xent training")
    rng = random.Random(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if max_pairs and len(pairs) > max_pairs:
        pairs = rng.sample(pairs, max_pairs)
    return rng, pairs


def distinct_batches(pairs: list[tuple[str, ...]], size: int, rng: random.Random) -> list[list[tuple[str, ...]]]:
    """Shuffled batches in which no text (query, document or hard negative) appears twice."""
    todo = pairs[:]
    rng.shuffle(todo)
    batches: list[list[tuple[str, ...]]] = []
    open_batches: list[tuple[list, set]] = []
    for item in todo:
        for batch, seen in open_batches:
            if len(batch) < size and seen.isdisjoint(item):
                batch.append(item)
                seen.update(item)
                break
        else:
            open_batches.append(([item], set(item)))
        full = [b for b in open_batches if len(b[0]) >= size]
        for b in full:
            batches.append(b[0])
            open_batches.remove(b)
    batches += [b for b, _ in open_batches if len(b) >= 2]
    rng.shuffle(batches)
    return batches


def train_ntxent(pairs: list[tuple[str, ...]], out_dir: str | Path, *, base_model: str | None = None,
                 config: NTXentConfig | None = None, device: str | None = None,
                 data_note: str = "", progress: bool = True) -> dict[str, Any]:
    """Fine-tune ``base_model`` (default: shipped MiniLM) on the pairs; saves model + card, returns the card.

    Items are ``(query, document)`` pairs or ``(query, document, hard negative)`` triplets (all of
    one shape); a triplet's negative joins the batch's documents as one more negative of every query."""
    torch = lazy_libs.torch("NT-Xent training")
    SentenceTransformer = lazy_libs.sentence_transformers("NT-Xent training").SentenceTransformer
    MultipleNegativesRankingLoss = lazy_libs.sentence_transformers_losses("NT-Xent training") \
        .MultipleNegativesRankingLoss
    cfg = config or NTXentConfig()
    if cfg.temperature <= 0:
        raise MustciteError("temperature must be > 0")
    width = {len(p) for p in pairs}
    if not width <= {2} and not width <= {3}:
        raise MustciteError(f"training items must all be pairs or all triplets, got lengths {sorted(width)}")
    base_model = str(base_model or default_model_path())
    rng, pairs = seeded_sample(pairs, cfg.seed, cfg.max_pairs)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model = SentenceTransformer(base_model, device=device)
    model.max_seq_length = cfg.max_seq_length
    loss_fn = MultipleNegativesRankingLoss(model, scale=1.0 / cfg.temperature)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    epoch_batches = [distinct_batches(pairs, cfg.batch_size, rng) for _ in range(cfg.epochs)]
    total = sum(len(b) for b in epoch_batches)
    if total == 0:
        raise MustciteError("not enough distinct pairs to form a batch of 2")
    warm = max(1, int(total * cfg.warmup_ratio))
    sched = torch.optim.lr_scheduler.LambdaLR(     # linear warm-up, then linear decay to 0
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (total - s) / max(1, total - warm)))
    model.train()
    losses, t0, step = [], time.time(), 0
    bar = tqdm(total=total, desc="NT-Xent", unit="batch", disable=not progress)
    for batches in epoch_batches:
        run = 0.0
        for batch in batches:
            feats = []
            for texts in zip(*batch):                  # queries, documents[, hard negatives]
                f = (model.preprocess if hasattr(model, "preprocess") else model.tokenize)(texts)
                feats.append({k: (v.to(model.device) if hasattr(v, "to") else v) for k, v in f.items()})
            loss = loss_fn(feats, None)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            run += float(loss.detach())
            step += 1
            bar.update(1)
        losses.append(round(run / max(1, len(batches)), 5))
    bar.close()
    model.eval()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save(str(out))
    card = {"method": "NT-Xent (sentence-transformers MultipleNegativesRankingLoss, scale = 1/temperature, "
                      "cosine similarity, in-batch negatives, query->document)",
            "base_model": base_model, "config": asdict(cfg), "device": device, "pairs": len(pairs),
            "hard_negatives": bool(pairs) and len(pairs[0]) == 3,
            "batches_per_epoch": [len(b) for b in epoch_batches], "loss_per_epoch": losses,
            "seconds": round(time.time() - t0, 2), "peak_rss_mb": peak_rss_mb(), "data": data_note,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    atomic_write_json(out / "training_card.json", card)
    return card


def read_card(model_dir: str | Path) -> dict[str, Any]:
    p = Path(model_dir) / "training_card.json"
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}
