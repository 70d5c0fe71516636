"""The short Python API: :func:`must_cite`, :func:`audit` and :func:`load`, as ``mustcite.must_cite``,
``mustcite.audit`` and ``mustcite.load``; each model is loaded once per process and kept."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from . import arguments as args
from .audit import audit_draft
from .draft import Draft
from .method import Recommender

if TYPE_CHECKING:
    from .audit import AuditResult
    from .results import Ranked

_LOADED: dict[Path, Recommender] = {}

#: the largest ``top`` each function takes (as the command line does)
MAX_TOP = {"recommend": args.MAX_TOP["recommend"], "audit": args.MAX_TOP["audit"]}


def load(model: str | Path | None = None) -> Recommender:
    """The recommender in the folder ``model`` (default: the work folder's default model), loaded
    once per process and kept.

    >>> import mustcite
    >>> model = mustcite.load()
    >>> model.describe()["labelled"] > 0
    True
    """
    from .train import default_model  # training's modules load only when asked for

    folder = (args.path(model, "model", optional=True) or default_model(None)).resolve()
    if folder not in _LOADED:
        _LOADED[folder] = Recommender.load(folder)
    return _LOADED[folder]


def must_cite(title: str, abstract: str = "", *, year: int | None = None, top: int = 20,
              model: str | Path | None = None) -> Ranked:
    """The papers a paper with this title and abstract must cite, best first: a list of
    :class:`Recommendation` (``title``, ``year``, ``tier_name``, ``reasons``, ``tiers``, ...) as of
    ``year`` (default: this year; only papers of that year or earlier), from :func:`load` (model).
    ``top`` (1 to 1000), ``year`` and the texts are checked first: a wrong one raises
    :class:`~mustcite.errors.UsageError` naming it, as the command line would.

    >>> import mustcite
    >>> results = mustcite.must_cite("Graph attention networks",
    ...                              "We apply attention over each node's neighbours.", year=2024, top=5)
    >>> len(results), results.year
    (5, 2024)
    >>> results[0].tier_name in ("baseline or dataset", "core", "used throughout", "must-cite", "cited")
    True
    """
    args.text(title, "title"), args.text(abstract, "abstract")
    top, year = args.top(top, "recommend"), args.year(year)
    return load(model).recommend(title, abstract, top=top, year=year)


def audit(path: str | Path, *, year: int | None = None, top: int = 50,
          model: str | Path | None = None) -> AuditResult:
    """The must-cite papers the draft at ``path`` (PDF, TEI, Markdown, a LaTeX project folder or
    archive) does not cite, with why: an :class:`~.audit.AuditResult` (``missing``, ``cited``,
    ``references``, ``linked``, ``notes``), from :func:`load` (model).

    ``top`` (1 to 500) and ``year`` are checked before anything is read: a wrong one raises
    :class:`~mustcite.errors.UsageError` naming it, as the command line would.

    >>> import mustcite
    >>> report = mustcite.audit(DRAFT)
    >>> report.references > 0 and all(r.reasons for r in report.missing)
    True
    """
    if not isinstance(path, Draft):
        path = args.path(path, "path")
    top, year = args.top(top, "audit"), args.year(year)
    return audit_draft(load(model), path, top=top, year=year)
