"""A fitted gradient-boosted tree model as plain arrays, for predicting without scikit-learn.

Scikit-learn's import alone takes about a second and 60 MB (it pulls in SciPy's statistics and
pandas), a third of a one-query command's time. Training still uses
``HistGradientBoostingClassifier``; :meth:`TreeEnsemble.from_sklearn` copies a fitted binary model's
trees into arrays (a few hundred KB per tier) that :meth:`TreeEnsemble.predict_proba` walks with
numpy, giving the same probabilities, bit for bit: a row goes left where its feature is at most the
node's threshold (a missing value where the node says), the leaves' values are added tree by tree
in float64 onto the baseline, and the logistic function turns the sum into a probability. The walk
costs about five times scikit-learn's compiled one per row, so :class:`.tiers.TierModels` uses it
for a few queries and the compiled trees for more.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


class TreeEnsemble:
    """The trees of one binary classifier: every node of every tree in flat arrays (``left`` and
    ``right`` index the same arrays), ``roots`` the first node of each tree, in the order they are
    added up."""

    FIELDS = ("feature", "threshold", "missing_left", "left", "right", "leaf", "value", "roots", "baseline")

    def __init__(self, feature: np.ndarray, threshold: np.ndarray, missing_left: np.ndarray, left: np.ndarray,
                 right: np.ndarray, leaf: np.ndarray, value: np.ndarray, roots: np.ndarray, baseline: np.ndarray):
        self.feature, self.threshold, self.missing_left = feature, threshold, missing_left
        self.left, self.right, self.leaf, self.value = left, right, leaf, value
        self.roots, self.baseline = roots, baseline

    @classmethod
    def from_sklearn(cls, model: Any) -> TreeEnsemble:
        """The trees of a fitted binary ``HistGradientBoostingClassifier`` on numeric features."""
        if getattr(model, "n_trees_per_iteration_", 1) != 1 or getattr(model, "is_categorical_", None) is not None:
            raise ValueError("only binary models on numeric features can be copied")
        nodes = [predictors[0].nodes for predictors in model._predictors]
        sizes = [len(n) for n in nodes]
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        flat = np.concatenate(nodes)
        offset = np.repeat(starts, sizes)
        return cls(feature=flat["feature_idx"].astype(np.int64), threshold=flat["num_threshold"].astype(np.float64),
                   missing_left=flat["missing_go_to_left"].astype(bool),
                   left=flat["left"].astype(np.int64) + offset, right=flat["right"].astype(np.int64) + offset,
                   leaf=flat["is_leaf"].astype(bool), value=flat["value"].astype(np.float64), roots=starts,
                   baseline=np.asarray(model._baseline_prediction, dtype=np.float64).reshape(-1)[:1])

    def save(self, path: str | Path) -> None:
        np.savez(path, **{k: getattr(self, k) for k in self.FIELDS})

    @classmethod
    def load(cls, path: str | Path) -> TreeEnsemble:
        with np.load(path) as z:
            return cls(**{k: z[k] for k in cls.FIELDS})

    def raw(self, X: np.ndarray) -> np.ndarray:
        """The sum of the leaves each row reaches, plus the baseline (float64, one per row)."""
        X = np.asarray(X, dtype=np.float64)
        n, trees = len(X), len(self.roots)
        # every (row, tree) pair still walking: where its value goes, its row, the node it is at
        at = np.arange(n * trees)
        row = at // trees
        node = self.roots[at % trees]
        leaf_value = np.empty(n * trees, dtype=np.float64)
        while len(at):
            done = self.leaf[node]
            if done.any():
                leaf_value[at[done]] = self.value[node[done]]
                keep = ~done
                at, row, node = at[keep], row[keep], node[keep]
                if not len(at):
                    break
            x = X[row, self.feature[node]]
            go_left = np.where(np.isnan(x), self.missing_left[node], x <= self.threshold[node])
            node = np.where(go_left, self.left[node], self.right[node])
        values = leaf_value.reshape(n, trees)
        out = np.full(n, self.baseline[0], dtype=np.float64)
        for t in range(trees):            # tree by tree, as the fitted model adds them up
            out += values[:, t]
        return out

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """``(n, 2)``: P(class 0), P(class 1) per row."""
        from scipy.special import expit  # ~100 ms: the recommender imports this module at start-up

        p = expit(self.raw(X))
        return np.column_stack([1.0 - p, p])
