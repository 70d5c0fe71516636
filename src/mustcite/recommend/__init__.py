"""The must-cite recommender: :class:`Recommender`, training, auditing a draft.

``from mustcite import Recommender`` (or ``mustcite.recommend.Recommender``):

* :meth:`Recommender.load(folder) <Recommender.load>` / :func:`load_default` read a model made by
  ``mustcite train``;
* ``recommend(title, abstract, top)``, ``recommend_many(queries)``, ``audit(path)``.
"""

from __future__ import annotations

from pathlib import Path

from .method import Recommendation, Recommender, RecommenderConfig

__all__ = ["Recommendation", "Recommender", "RecommenderConfig", "load_default"]


def load_default(work: str | Path | None = None, model: str | Path | None = None) -> Recommender:
    """The recommender in ``model``, else the default model (:func:`.train.default_model`:
    ``<work>/models/recommender``, or the demo's ``recommender-light`` while that is the only one);
    DataMissingError says how to build it."""
    from .train import default_model

    return Recommender.load(Path(model) if model else default_model(work))
