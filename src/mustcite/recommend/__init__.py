"""The must-cite recommender: :class:`Recommender`, training, auditing a draft.

The short way, with the default model (``<work>/models/recommender``, made by ``mustcite train``
or ``make demo``), each model loaded once per process (:mod:`.shortcuts`)::

    import mustcite

    results = mustcite.must_cite(title, abstract, year=2024)     # a ranked list of Recommendation
    report = mustcite.audit("paper.tex.zip")                      # an AuditResult
    model = mustcite.load("mustcite-work/models/recommender")    # a Recommender

The long way: :meth:`Recommender.load(folder) <Recommender.load>`, then its ``recommend`` and
``recommend_many``, and :func:`.audit.audit_draft` with it for a draft.
"""

from __future__ import annotations

from pathlib import Path

from .method import Recommendation, Recommender, RecommenderConfig
from .train import default_model

__all__ = ["Recommendation", "Recommender", "RecommenderConfig", "load_default"]


def load_default(work: str | Path | None = None, model: str | Path | None = None) -> Recommender:
    """The recommender in ``model``, else the default model (:func:`.train.default_model`:
    ``<work>/models/recommender``, or the demo's ``recommender-light`` while that is the only one);
    DataMissingError says how to build it."""
    return Recommender.load(Path(model) if model else default_model(work))
