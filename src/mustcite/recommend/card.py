"""The model card written next to a trained recommender (``card.json``): data, features, metrics, seed."""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..io import atomic_write_json
from ..labels.papers import TIER_NAMES
from ..retrieval.memory import peak_rss_mb
from ..version import __version__
from .features import FEATURES


def write_card(folder: str | Path, *, rec, data: dict[str, Any], metrics: dict[str, Any],
               seed: int, seconds: float) -> dict[str, Any]:
    card = {
        "model": "mustcite recommender",
        "mustcite_version": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "method": ("BM25" + (f" + dense {rec.encoder.metadata().get('model')} ({rec.config.max_tokens or 'default'} "
                               "tokens)" if rec.pool_vecs is not None else "") +
                   " fused by reciprocal rank; labelled-neighbour citation votes, co-citation and citation "
                   "contexts; gradient-boosted per-tier classifiers over the candidates"),
        "data": data,
        "config": rec.describe() | {"settings": vars(rec.config)},
        "features": list(FEATURES),
        "tiers": {t: TIER_NAMES[t] for t in rec.tiers.models},
        "ranked_by": rec.tiers.main,
        "training_rows": rec.tiers.stats,
        "metrics": metrics,
        "seed": seed,
        "train_seconds": round(seconds, 1),
        "train_peak_rss_mb": peak_rss_mb(),
        "intended_use": "suggest papers a draft should cite; a tool for diligence, not a substitute for judgement",
    }
    atomic_write_json(Path(folder) / "card.json", card)
    return card
