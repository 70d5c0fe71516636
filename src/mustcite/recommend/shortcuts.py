"""The short Python API: :func:`recommend`, :func:`audit` and :func:`load`, as ``mustcite.recommend``,
``mustcite.audit`` and ``mustcite.load``; each model is loaded once per process and kept."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .method import Recommender

if TYPE_CHECKING:
    from .audit import AuditResult
    from .results import Ranked

_LOADED: dict[Path, Recommender] = {}


def load(model: str | Path | None = None) -> Recommender:
    """The recommender in the folder ``model`` (default: the work folder's default model), loaded
    once per process and kept.

    >>> import mustcite
    >>> model = mustcite.load()
    >>> model.describe()["labelled"] > 0
    True
    """
    from .train import default_model

    folder = (Path(model) if model else default_model(None)).resolve()
    if folder not in _LOADED:
        _LOADED[folder] = Recommender.load(folder)
    return _LOADED[folder]


def recommend(title: str, abstract: str = "", *, year: int | None = None, top: int = 20,
              model: str | Path | None = None) -> "Ranked":
    """The papers a paper with this title and abstract must cite, best first: a list of
    :class:`Recommendation` (``title``, ``year``, ``tier_name``, ``reasons``, ``tiers``, ...) as of
    ``year`` (default: this year; only papers of that year or earlier), from :func:`load` (model).

    >>> import mustcite
    >>> results = mustcite.recommend("Graph attention networks",
    ...                              "We apply attention over each node's neighbours.", year=2024, top=5)
    >>> len(results), results.year
    (5, 2024)
    >>> results[0].tier_name in ("baseline or dataset", "core", "used throughout", "must-cite", "cited")
    True
    """
    return load(model).recommend(title, abstract, top=top, year=year)


def audit(path: str | Path, *, year: int | None = None, top: int = 50,
          model: str | Path | None = None) -> "AuditResult":
    """The must-cite papers the draft at ``path`` (PDF, TEI, Markdown, a LaTeX project folder or
    archive) does not cite, with why: an :class:`~.audit.AuditResult` (``missing``, ``cited``,
    ``references``, ``linked``, ``notes``), from :func:`load` (model).

    >>> import mustcite
    >>> report = mustcite.audit(DRAFT)
    >>> report.references > 0 and all(r.reasons for r in report.missing)
    True
    """
    return load(model).audit(path, top=top, year=year)
