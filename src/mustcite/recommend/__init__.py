"""The must-cite recommender: :class:`Recommender`, training, auditing a draft.

The short way, with the default model (``<work>/models/recommender``, made by ``mustcite train``
or ``make demo``), each model loaded once per process::

    import mustcite

    results = mustcite.recommend(title, abstract, year=2024)    # a ranked list of Recommendation
    report = mustcite.audit("paper.tex.zip")                      # an AuditResult
    model = mustcite.load("mustcite-work/models/recommender")    # a Recommender

``mustcite.recommend`` is this package, callable: ``mustcite.recommend(...)`` is
:func:`.shortcuts.recommend`; ``mustcite.audit`` and ``mustcite.load`` are :mod:`.shortcuts`' too.
The long way: :meth:`Recommender.load(folder) <Recommender.load>`, then its ``recommend``,
``recommend_many`` and ``audit``.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

from .method import Recommendation, Recommender, RecommenderConfig

__all__ = ["Recommendation", "Recommender", "RecommenderConfig", "load_default"]


def load_default(work: str | Path | None = None, model: str | Path | None = None) -> Recommender:
    """The recommender in ``model``, else the default model (:func:`.train.default_model`:
    ``<work>/models/recommender``, or the demo's ``recommender-light`` while that is the only one);
    DataMissingError says how to build it."""
    from .train import default_model

    return Recommender.load(Path(model) if model else default_model(work))


class _CallablePackage(types.ModuleType):
    """``mustcite.recommend(title, abstract, ...)`` calls :func:`.shortcuts.recommend`, while
    ``mustcite.recommend`` stays this package."""

    def __call__(self, title: str, abstract: str = "", **kw):
        from .shortcuts import recommend

        return recommend(title, abstract, **kw)


sys.modules[__name__].__class__ = _CallablePackage
