"""Small numeric helpers shared by the stages that turn probabilities into scores."""

from __future__ import annotations

import numpy as np


def logit(p) -> np.ndarray:
    """``log(p / (1 - p))`` elementwise, with ``p`` clipped to ``[1e-6, 1 - 1e-6]`` (finite scores)."""
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))
