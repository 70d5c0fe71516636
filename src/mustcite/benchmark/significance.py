"""Paired significance tests between two runs over the same queries (per-query metric values).

* ``ttest``: two-sided paired t-test (scipy.stats.ttest_rel).
* ``perm``: two-sided paired randomisation (sign-flip) test on the mean difference, fixed seed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy import stats

from ..errors import UsageError

TESTS = ("ttest", "perm")


def _aligned(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    qids = sorted(set(a) | set(b))
    return (np.array([a.get(q, 0.0) for q in qids], dtype=float),
            np.array([b.get(q, 0.0) for q in qids], dtype=float))


def paired_ttest(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    x, y = _aligned(a, b)
    d = x - y
    if len(d) < 2 or np.allclose(d, 0):
        return 1.0
    if np.allclose(d, d[0]):      # constant non-zero difference: t is infinite
        return 0.0
    return float(stats.ttest_rel(x, y).pvalue)


def randomisation_test(a: Mapping[str, float], b: Mapping[str, float], *, trials: int = 10000,
                       seed: int = 0) -> float:
    """p-value of |mean(a-b)| under random sign flips of the per-query differences."""
    x, y = _aligned(a, b)
    d = x - y
    if len(d) == 0 or np.allclose(d, 0):
        return 1.0
    rng = np.random.default_rng(seed)
    observed = abs(d.mean())
    signs = rng.choice((-1.0, 1.0), size=(trials, len(d)))
    null = np.abs((signs * d).mean(axis=1))
    return float((1 + np.count_nonzero(null >= observed - 1e-12)) / (trials + 1))


def pvalue(a: Mapping[str, float], b: Mapping[str, float], test: str = "ttest") -> float:
    if test == "ttest":
        return paired_ttest(a, b)
    if test == "perm":
        return randomisation_test(a, b)
    raise UsageError(f"unknown significance test {test!r}", hint=f"use one of {', '.join(TESTS)}")
