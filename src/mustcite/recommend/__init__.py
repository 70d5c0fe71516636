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

from ..lazy_exports import lazy_exports
from .method import ABLATABLE, Recommendation, Recommender, RecommenderConfig

#: public name -> the submodule that defines it ("submodule:name" where it is named otherwise
#: there), imported on first use
_LAZY = {
    # training and evaluating on a benchmark
    "TIER_OF_TRUTH": "train",
    "benchmark_train_papers": "train",
    "build_benchmark_model": "train",
    "default_model": "train",
    "default_training_data": "train",
    "DefaultTrainingData": "train",
    "evaluate": "train",
    "evaluate_bm25": "train",
    "fit_sample": "train",
    "fit_cross_encoder": "train",
    "qrels_of": "train",
    "ranking_metrics": "train",
    "split_dev": "train",
    "train_benchmark": "train",
    # ranking
    "MAX_TEXT": "query",
    "effective_year": "query",
    "parse_year": "query",
    "combine": "rescore",
    "top_indices": "ranking",
    # auditing a draft
    "extract_draft": "draft",
    "read_draft": "draft",
    "AuditWeights": "audit",
    "DEFAULT_WEIGHTS": "audit",
    "blend": "audit",
    "context_text": "audit",
    "missing_order": "audit",
    "score_draft": "audit",
    "audit_draft": "audit",
    "DraftIndexes": "draft_indexes",
    "ModelParts": "model_store",
    "FINDING_CALIBRATION_FILE": "findings:CALIBRATION_FILE",
    "FINDING_FEATURES": "findings:FEATURES",
    "MENTION_FEATURES": "mention_model:FEATURES",
    "MENTION_LABELS": "mention_model:LABELS",
    "MENTION_FORMS_FILE": "mention_model:FORMS_FILE",
    "MENTION_FORM_TARGETS_FILE": "mention_model:FORM_TARGETS_FILE",
    "mention_feature_rows": "mention_model:feature_rows",
    "fit_mention_model": "mention_model",
    "mention_reliability": "mention_model:reliability",
    "mention_scores": "mention_model:scores",
    "fit_work_models": "mention_model",
    "mention_serving_stats": "mention_model:serving_stats",
    "MENTION_LEXICON_FILE": "draft_mentions:LEXICON_FILE",
    "write_target_index": "mention_model",
    "confidence": "findings",
    "fit_calibration": "findings",
    "load_finding_calibration": "findings:load_calibration",
    "draft_sentences": "findings:sentences",
    "named_candidates": "findings",
    "draft_findings": "audit",
}

__all__ = ["ABLATABLE", "Recommendation", "Recommender", "RecommenderConfig", "load_default", *_LAZY]


def load_default(work: str | Path | None = None, model: str | Path | None = None) -> Recommender:
    """The recommender in ``model``, else the default model (:func:`.train.default_model`:
    ``<work>/models/recommender``, or the demo's ``recommender-light`` while that is the only one);
    DataMissingError says how to build it."""
    from .train import default_model  # training's modules load only when asked for

    return Recommender.load(Path(model) if model else default_model(work))

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

