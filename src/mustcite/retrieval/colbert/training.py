"""ColBERT-NTX training: PyLate's contrastive loss (NT-Xent over MaxSim) on (query, positive) text
pairs, on the cached token vectors through a trainable projection or with the transformer too."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ... import lazy_libs
from ...errors import MustciteError, UsageError
from ...io import atomic_write_json
from ..memory import peak_rss_mb
from ..ntxent import distinct_batches, seeded_sample
from .model import (
    TRANSFORMER_DIR,
    ColbertModel,
    ColbertSettings,
    build_pylate,
    load_colbert,
    pylate_version,
    require_pylate,
    save_colbert,
)
from .token_cache import TokenEncoder


@dataclass
class ColbertTrainConfig:
    temperature: float = 1.0          # PyLate Contrastive default: MaxSim sums over ~100 query tokens
    epochs: int = 1
    batch_size: int = 16
    lr: float = 1e-3                  # projection only; 2e-5 is used for the transformer
    encoder_lr: float = 2e-5
    dim: int = 128
    seed: int = 13
    max_pairs: int | None = 3000
    train_encoder: bool = False       # False: frozen MiniLM, train the 384->dim projection only
    query_length: int = 128
    document_length: int = 180


def _pad(arrs: list[np.ndarray]):
    torch = lazy_libs.torch("ColBERT")
    n = max(len(a) for a in arrs)
    x = np.zeros((len(arrs), n, arrs[0].shape[1]), dtype=np.float32)
    m = np.zeros((len(arrs), n), dtype=np.int64)
    for i, a in enumerate(arrs):
        x[i, :len(a)] = a
        m[i, :len(a)] = 1
    return torch.from_numpy(x), torch.from_numpy(m)


class _CachedProjection:
    """What PyLate's ``losses.Contrastive`` calls as ``model(features)``: the cached normalised token
    vectors through the trainable projection (the frozen-transformer variant)."""

    skiplist: list[int] = []          # documents in the cache already lack PyLate's skiplist tokens
    do_query_expansion = False

    def __init__(self, dense):
        self.dense = dense

    def __call__(self, features):
        return self.dense({"token_embeddings": features["hidden"]})


def train_colbert(pairs: list[tuple[str, str]], out_dir: str | Path, *, config: ColbertTrainConfig | None = None,
                  cache_dir: str | Path | None = None, data_note: str = "", progress: bool = True) -> dict[str, Any]:
    """ColBERT-NTX: PyLate ``losses.Contrastive`` (NT-Xent over MaxSim with in-batch negatives,
    query -> document) on (query text, positive text) pairs. Saves the folder and a training card."""
    pylate = require_pylate()
    losses, models = pylate.losses, pylate.models
    torch = lazy_libs.torch("ColBERT")
    cfg = config or ColbertTrainConfig()
    if cfg.temperature <= 0:
        raise UsageError("temperature must be > 0")
    rng, pairs = seeded_sample(pairs, cfg.seed, cfg.max_pairs)
    settings = ColbertSettings(cfg.query_length, cfg.document_length)
    base = load_colbert(None)
    base.settings = settings
    hidden = 384
    dense = models.Dense(in_features=hidden, out_features=cfg.dim, bias=False)
    epoch_batches = [distinct_batches(pairs, cfg.batch_size, rng) for _ in range(cfg.epochs)]
    total = sum(len(b) for b in epoch_batches)
    if total == 0:
        raise MustciteError("not enough distinct pairs to form a batch of 2")
    t0 = time.time()
    enc_s = 0.0
    if cfg.train_encoder:
        model = build_pylate(base.transformer_path, dense, settings)
        model.train()
        params = [{"params": model[0].parameters(), "lr": cfg.encoder_lr},
                  {"params": model[1].parameters(), "lr": cfg.lr}]
        loss_fn = losses.Contrastive(model=model, temperature=cfg.temperature)

        def feats(batch):
            q = model.tokenize([a for a, _ in batch], is_query=True)
            d = model.tokenize([b for _, b in batch], is_query=False)
            return [q, d]
    else:
        enc = TokenEncoder(base, cache_dir)
        te = time.time()
        qtexts = list(dict.fromkeys(q for q, _ in pairs))
        dtexts = list(dict.fromkeys(d for _, d in pairs))
        qv = dict(zip(qtexts, enc.raw(qtexts, is_query=True, desc="ColBERT train queries", progress=progress)))
        dv = dict(zip(dtexts, enc.raw(dtexts, is_query=False, desc="ColBERT train documents", progress=progress)))
        enc_s = time.time() - te
        wrapper = _CachedProjection(dense)
        params = [{"params": dense.parameters(), "lr": cfg.lr}]
        loss_fn = losses.Contrastive(model=wrapper, temperature=cfg.temperature)

        def feats(batch):
            out = []
            for arrs in ([qv[a] for a, _ in batch], [dv[b] for _, b in batch]):
                x, m = _pad(arrs)
                out.append({"hidden": x, "attention_mask": m, "input_ids": torch.zeros_like(m)})
            return out
    opt = torch.optim.AdamW(params)
    warm = max(1, int(total * 0.1))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (total - s) / max(1, total - warm)))
    before = dense.linear.weight.detach().clone()
    losses_per_epoch = []
    bar = tqdm(total=total, desc="ColBERT NT-Xent", unit="batch", disable=not progress)
    for batches in epoch_batches:
        run = 0.0
        for batch in batches:
            loss = loss_fn(feats(batch))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for g in params for p in g["params"]] if not cfg.train_encoder
                                           else model.parameters(), 1.0)
            opt.step()
            sched.step()
            run += float(loss.detach())
            bar.update(1)
        losses_per_epoch.append(round(run / max(1, len(batches)), 5))
    bar.close()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    trained = ColbertModel(base.transformer_path, dense, settings)
    if cfg.train_encoder:
        model.eval()
        model[0].save(str(out / TRANSFORMER_DIR))
        trained.transformer_path = str(out / TRANSFORMER_DIR)
    save_colbert(trained, out)
    card = {"method": "ColBERT-NTX: PyLate losses.Contrastive (NT-Xent / InfoNCE over MaxSim scores, "
                      "in-batch negatives, query -> document, scores / temperature)",
            "library": f"pylate {pylate_version()}", "base_model": base.transformer_path,
            "trained": ("transformer + projection" if cfg.train_encoder
                        else f"384->{cfg.dim} projection (MiniLM frozen)"),
            "config": asdict(cfg), "pairs": len(pairs), "batches_per_epoch": [len(b) for b in epoch_batches],
            "steps": total, "loss_per_epoch": losses_per_epoch,
            "weight_change_l2": float((dense.linear.weight.detach() - before).norm()),
            "encode_seconds": round(enc_s, 2), "seconds": round(time.time() - t0, 2), "peak_rss_mb": peak_rss_mb(),
            "data": data_note,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    atomic_write_json(out / "training_card.json", card)
    return card
