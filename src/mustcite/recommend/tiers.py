"""Per-tier probability models: P(Type I), P(Type II >= 4), P(Type III), P(must-cite), P(cited).

One gradient-boosted classifier (scikit-learn ``HistGradientBoostingClassifier``, fixed seed) per
tier, trained on the reranker features of train queries. Candidates whose label for a tier is
unknown (that tier was not labelled for the citing paper) are left out of that tier's training
set. A tier with too few positives gets no model and is reported as unavailable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import lazy_libs
from ..io import atomic_write_json, read_json
from ..labels.papers import TIERS
from .forest import TreeEnsemble

MIN_POSITIVES = 5
#: Results are ranked by P(must-cite) once that model has seen this many positives, else by P(cited).
MIN_MAIN_POSITIVES = 200


#: Predicting more rows than this at once switches numpy copies of the trees (:mod:`.forest`) to
#: scikit-learn's compiled ones, for good: a few queries walk the copies (no scikit-learn import,
#: a second less at start-up), more are faster compiled.
COMPILED_ROWS = 5000


@dataclass
class TierModels:
    seed: int = 0
    models: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, dict[str, int]] = field(default_factory=dict)
    empty_columns: list[int] = field(default_factory=list)   # all-NaN in training: read as 0
    #: the saved compiled models (``tiers.joblib``) while ``models`` holds their numpy copies
    compiled_from: str | None = None

    def compiled(self) -> TierModels:
        """These models with scikit-learn's compiled trees (read from :attr:`compiled_from` when
        ``models`` holds numpy copies); returns self."""
        if self.compiled_from is not None:
            import joblib  # ~45 ms: the recommender imports this module at start-up

            self.models = joblib.load(self.compiled_from).models
            self.compiled_from = None
        return self

    def save_arrays(self, folder: str | Path) -> None:
        """Write numpy copies of the trees into ``folder`` (read back by :meth:`load_arrays`)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for tier, m in self.compiled().models.items():
            TreeEnsemble.from_sklearn(m).save(folder / f"{tier}.npz")
        atomic_write_json(folder / "tiers.json", {"seed": self.seed, "tiers": list(self.models), "stats": self.stats,
                                                  "empty_columns": self.empty_columns})

    @classmethod
    def load_arrays(cls, folder: str | Path, compiled_from: str | Path) -> TierModels:
        """The models :meth:`save_arrays` wrote, as numpy copies; the compiled ones stay in
        ``compiled_from`` until a large batch needs them."""
        folder = Path(folder)
        meta = read_json(folder / "tiers.json")
        return cls(seed=meta["seed"], models={t: TreeEnsemble.load(folder / f"{t}.npz") for t in meta["tiers"]},
                   stats=meta["stats"], empty_columns=list(meta["empty_columns"]), compiled_from=str(compiled_from))

    def _clean(self, X: np.ndarray) -> np.ndarray:
        if self.empty_columns:
            X = X.copy()
            X[:, self.empty_columns] = 0.0
        return X

    @property
    def main(self) -> str | None:
        """The tier results are ranked by: must-cite when learned on enough positives, else cited."""
        if "must_cite" in self.models and self.stats["must_cite"]["positives"] >= MIN_MAIN_POSITIVES:
            return "must_cite"
        for t in ("cited", "must_cite"):
            if t in self.models:
                return t
        return None

    def fit(self, X: np.ndarray, labels: dict[str, np.ndarray], groups: np.ndarray | None = None, *,
            negatives: float = 1.0) -> TierModels:
        """``labels[tier]`` holds 1/0 per row and -1 where the label is unknown. ``negatives``: the
        share of each tier's negative rows it is fit on (a seeded sample; each kept negative then
        weighs ``1 / negatives``, so the classes keep their balance); every positive is kept."""
        if not 0.0 < negatives <= 1.0:
            raise ValueError(f"negatives must be in (0, 1], got {negatives}")
        rng = np.random.default_rng(self.seed)
        HistGradientBoostingClassifier = lazy_libs.sklearn_ensemble().HistGradientBoostingClassifier
        self.empty_columns = [int(j) for j in np.flatnonzero(np.isnan(X).all(axis=0))] if len(X) else []
        X = self._clean(X)
        for tier in TIERS:
            y = labels.get(tier)
            if y is None:
                continue
            known = y >= 0
            pos, neg = int((y[known] == 1).sum()), int((y[known] == 0).sum())
            scale = 1.0
            if negatives < 1.0:
                known &= (y == 1) | (rng.random(len(y)) < negatives)
                scale = 1.0 / negatives
            self.stats[tier] = {"rows": int(known.sum()), "positives": pos, "negatives": neg}
            if pos < MIN_POSITIVES or neg < MIN_POSITIVES:
                continue
            # balance classes a little: positives are rare among hundreds of candidates
            w = np.where(y[known] == 1, min(10.0, neg / max(pos, 1)) ** 0.5, scale)
            # dev: 300 trees at 0.05 (early stopping on) edge out 100 at 0.08; 63 leaves, LightGBM
            # lambdarank and unweighted classes do not help (benchmarks/results/recommend_learners.json)
            m = HistGradientBoostingClassifier(max_iter=300, learning_rate=0.05, max_leaf_nodes=31,
                                               min_samples_leaf=20, l2_regularization=1.0,
                                               random_state=self.seed)
            # every core: fitting on millions of rows gains from threads, and the fitted model is
            # the same whatever their number (checked: identical predictions with 1 and 2 threads)
            m.fit(X[known], y[known].astype(int), sample_weight=w)
            self.models[tier] = m
        return self

    def predict(self, X: np.ndarray, tiers=None) -> dict[str, np.ndarray]:
        """Probability per available tier (of ``tiers`` when given), one value per row."""
        if self.compiled_from is not None and len(X) > COMPILED_ROWS:
            self.compiled()
        models = {t: m for t, m in self.models.items() if tiers is None or t in tiers}
        if len(X) == 0:
            return {t: np.zeros(0) for t in models}
        X = self._clean(X)
        # one OpenMP thread: on small batches thread start-up and contention cost more than they save
        with _openmp_controller().limit(limits=1, user_api="openmp"):
            return {t: m.predict_proba(X)[:, 1] for t, m in models.items()}


_CONTROLLER = None


def _openmp_controller():
    """One threadpoolctl controller per process: building one scans every loaded library (~5 ms),
    too slow to do per query."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController  # ~3 ms: not at the recommender's start-up

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER
