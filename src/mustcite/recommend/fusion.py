"""Rank fusion: reciprocal-rank fusion (Cormack et al. 2009) of several ranked lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(runs: Mapping[str, Sequence[tuple[str, float]]], k: int = 60,
        weights: Mapping[str, float] | None = None) -> list[tuple[str, float]]:
    """Fuse ``{method: [(paper_id, score), ...]}`` (best first) into one list, best first.

    Each paper scores ``sum_m w_m / (k + rank_m)`` with 1-based ranks; ties break by paper id.
    """
    fused: dict[str, float] = {}
    for name, ranked in runs.items():
        w = 1.0 if weights is None else float(weights.get(name, 1.0))
        for rank, (pid, _score) in enumerate(ranked, 1):
            fused[pid] = fused.get(pid, 0.0) + w / (k + rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
