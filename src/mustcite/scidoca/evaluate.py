"""Official SCIDOCA 2025 scoring of Subtasks 1-3, as the shared task's overview paper defines it (Section 2).

All scores are fractions in [0, 1] (the paper's tables print percentages).

Conventions the overview paper leaves open, applied to every task:

* a ratio whose denominator is 0 at the level of one paragraph / mask / sentence is 0 (e.g. the
  precision of an empty prediction, TP / (TP + FP) = 0 / 0);
* a dataset-level average over nothing (no gold citation, no mask, no sentence of a kind) is
  ``None`` (JSON ``null``): undefined, not 0;
* predicted ids are compared as sets (a repeated id counts once); an id that is not a candidate
  is simply wrong (a false positive);
* a prediction whose id is not in the gold is an error (:class:`~mustcite.errors.MustciteError`);
  a gold paragraph without a prediction is scored as an empty prediction (the overview paper says
  nothing of missing paragraphs; ``missing_predictions`` counts them), but a prediction file
  without any prediction is an error (:func:`evaluate_files`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import MustciteError
from .formats import NOWHERE, TASKS, Answer, Origin, read_answers


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _f1(precision: float, recall: float) -> float:
    """F1 = 2 * P * R / (P + R) (seed 2.3), 0 when P + R = 0."""
    return _ratio(2 * precision * recall, precision + recall)


def _prf(gold: set[str], pred: set[str]) -> tuple[float, float, float, int, int, int]:
    """Precision = TP/(TP+FP), Recall = TP/(TP+FN), F1 (seed 2.3), with TP, FP, FN."""
    tp, fp, fn = len(gold & pred), len(pred - gold), len(gold - pred)
    p, r = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    return p, r, _f1(p, r), tp, fp, fn


def _mean(total: float, weight: float) -> float | None:
    return total / weight if weight else None


def _where(answer: Answer) -> Origin:
    return answer.origin or NOWHERE


# --------------------------------------------------------------------------- Task 1

def score_task1(pairs: Sequence[tuple[Answer, Answer | None]]) -> dict[str, Any]:
    """Citation Discovery (seed 2.3).

    "For each paragraph i, let TP_i, FP_i, and FN_i denote true positives, false positives, and
    false negatives, respectively, based on the predicted and gold citation sets":
    Precision_i = TP_i/(TP_i+FP_i), Recall_i = TP_i/(TP_i+FN_i), F1_i = 2 P_i R_i/(P_i+R_i).
    "The final metric is the weighted average of paragraph-level F1 scores, weighted by the number
    of gold citations GT_i in each paragraph: F1 = sum_i GT_i F1_i / sum_i GT_i". Precision and
    recall are averaged with the same weights (the seed's Table 2 reports them beside F1).
    """
    sums = {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    weight = predicted = correct = 0
    for gold, pred in pairs:
        g, p = set(gold.citations), set(pred.citations) if pred else set()
        prec, rec, f1, tp, _, _ = _prf(g, p)
        for key, value in (("f1", f1), ("precision", prec), ("recall", rec)):
            sums[key] += len(g) * value
        weight += len(g)
        predicted += len(p)
        correct += tp
    return {"task": 1, **{k: _mean(v, weight) for k, v in sums.items()},
            "paragraphs": len(pairs), "gold_citations": weight, "predicted_citations": predicted,
            "correct_citations": correct, "missing_predictions": sum(p is None for _, p in pairs)}


# --------------------------------------------------------------------------- Task 2

def score_task2(pairs: Sequence[tuple[Answer, Answer | None]]) -> dict[str, Any]:
    """Masked Citation Prediction (seed 2.4).

    "Let M_i be the number of masked citation positions in paragraph i. Evaluation is done per
    masked position: Macro-Averaged F1: Compute F1 for each citation label (masked slot) and
    average across all labels. Evaluation across dataset: Metrics are aggregated over all masked
    citations and weighted by the number of masks M_i in each paragraph."

    So each mask is scored on its own: gold = {its citation}, prediction = {the predicted id} or {}
    when the mask has no prediction (absent, ``null`` or ``"[empty]"``); P, R, F1 as in Task 1.
    A paragraph's score is the mean over its M_i masks (macro over masks), and the dataset score
    is the mean of paragraph scores weighted by M_i. P, R and F1 of a mask are all 1 (right) or
    all 0, so the three dataset scores coincide -- as in the seed's Table 3 (P = R = F1 for both
    teams). A predicted mask that the gold paragraph lacks is an error.
    """
    sums = {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    masks = correct = 0
    for gold, pred in pairs:
        predicted = dict(pred.citations) if pred else {}
        for mask in predicted:
            if mask not in gold.citations:
                raise _where(pred).error(f"paragraph {gold.id!r} has no {mask} in the gold", "predicted_citations")
        if not gold.citations:
            continue
        para = {"f1": 0.0, "precision": 0.0, "recall": 0.0}
        for mask, cid in gold.citations.items():
            guess = predicted.get(mask)
            prec, rec, f1, tp, _, _ = _prf({cid}, {guess} if guess is not None else set())
            para["precision"] += prec
            para["recall"] += rec
            para["f1"] += f1
            correct += tp
        m = len(gold.citations)
        for key in sums:  # weight M_i times the macro average over the paragraph's masks
            sums[key] += m * (para[key] / m)
        masks += m
    return {"task": 2, **{k: _mean(v, masks) for k, v in sums.items()},
            "paragraphs": len(pairs), "masks": masks, "correct_masks": correct,
            "missing_predictions": sum(p is None for _, p in pairs)}


# --------------------------------------------------------------------------- Task 3

def score_task3(pairs: Sequence[tuple[Answer, Answer | None]]) -> dict[str, Any]:
    """Citation Sentence Prediction (seed 2.5).

    * ``precision`` / ``recall`` / ``f1``: "Sentence-Level F1: Computed by comparing predicted
      citations with gold citations for each sentence containing citations" -- P, R, F1 per
      sentence with at least one gold citation, averaged over all such sentences of the dataset.
    * ``micro_*``: "Micro F1: This metric aggregates contributions from all sentences to compute
      an overall F1 score" -- TP, FP, FN summed over all sentences (with and without gold
      citations; a citation predicted for a no-citation sentence is a false positive), then
      P = TP/(TP+FP), R = TP/(TP+FN), F1.
    * ``no_citation_accuracy``: "Proportion of sentences without gold citations correctly
      predicted as having no citations", Accuracy_no-citation = 1/|S_nc| sum_{i in S_nc}
      I(y_hat_i = empty); ``[]`` and ``["[empty]"]`` both mean "no citation".

    Sentences are matched by position; a prediction with another number of sentences, or other
    sentence texts (whitespace aside), is an error.
    """
    sums = {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    cited = uncited = uncited_right = gold_total = 0
    tp_all = fp_all = fn_all = 0
    sentences = 0
    for gold, pred in pairs:
        _check_sentences(gold, pred)
        predicted = pred.citations if pred else ((),) * len(gold.citations)
        for g_ids, p_ids in zip(gold.citations, predicted):
            g, p = set(g_ids), set(p_ids)
            prec, rec, f1, tp, fp, fn = _prf(g, p)
            tp_all, fp_all, fn_all = tp_all + tp, fp_all + fp, fn_all + fn
            if g:
                cited += 1
                gold_total += len(g)
                sums["precision"] += prec
                sums["recall"] += rec
                sums["f1"] += f1
            else:
                uncited += 1
                uncited_right += not p
        sentences += len(gold.citations)
    micro_p, micro_r = _ratio(tp_all, tp_all + fp_all), _ratio(tp_all, tp_all + fn_all)
    has_gold = tp_all + fn_all > 0
    return {"task": 3, **{k: _mean(v, cited) for k, v in sums.items()},
            "micro_f1": _f1(micro_p, micro_r) if has_gold else None,
            "micro_precision": micro_p if has_gold else None,
            "micro_recall": micro_r if has_gold else None,
            "no_citation_accuracy": _mean(uncited_right, uncited),
            "paragraphs": len(pairs), "sentences": sentences, "citation_sentences": cited,
            "no_citation_sentences": uncited, "gold_citations": gold_total,
            "missing_predictions": sum(p is None for _, p in pairs)}


def _check_sentences(gold: Answer, pred: Answer | None) -> None:
    if pred is None:
        return
    if len(pred.citations) != len(gold.citations):
        raise _where(pred).error(f"{len(pred.citations)} sentences predicted, the gold of {gold.id!r} "
                                 f"has {len(gold.citations)}", "sentence_citations")
    if gold.sentences and pred.sentences:
        for i, (g, p) in enumerate(zip(gold.sentences, pred.sentences)):
            if " ".join(g.split()) != " ".join(p.split()):
                raise _where(pred).error(f"sentence {i} differs from the gold of {gold.id!r}",
                                         f"sentence_citations[{i}].sentence")


# --------------------------------------------------------------------------- entry points

_SCORERS = {1: score_task1, 2: score_task2, 3: score_task3}


def pair_answers(task: int, gold: Iterable[Answer], predictions: Iterable[Answer]
                 ) -> list[tuple[Answer, Answer | None]]:
    """Gold answers in order, each with its prediction or None. Errors: a task mismatch, a
    repeated id, a prediction whose id the gold lacks, a gold Task 2 mask without citation."""
    gold_by_id: dict[str, Answer] = {}
    for g in gold:
        if g.task != task:
            raise _where(g).error(f"a Task {g.task} gold answer, but Task {task} is scored")
        if g.id in gold_by_id:
            raise _where(g).error(f"gold id {g.id!r} appears twice", "id")
        if task == 2 and any(c is None for c in g.citations.values()):
            raise _where(g).error(f"gold {g.id!r} has a mask without citation", "predicted_citations")
        gold_by_id[g.id] = g
    preds: dict[str, Answer] = {}
    for p in predictions:
        if p.task != task:
            raise _where(p).error(f"a Task {p.task} prediction, but Task {task} is scored")
        if p.id not in gold_by_id:
            raise _where(p).error(f"prediction for id {p.id!r}, which the gold does not have", "id")
        if p.id in preds:
            raise _where(p).error(f"prediction id {p.id!r} appears twice", "id")
        preds[p.id] = p
    return [(g, preds.get(i)) for i, g in gold_by_id.items()]


def evaluate(task: int, gold: Iterable[Answer], predictions: Iterable[Answer]) -> dict[str, Any]:
    """Score ``predictions`` against ``gold`` for Task ``task`` (1, 2 or 3); see the
    ``score_task*`` functions for each task's rules."""
    if task not in TASKS:
        raise MustciteError(f"task must be 1, 2 or 3, got {task!r}")
    return _SCORERS[task](pair_answers(task, gold, predictions))


def evaluate_files(task: int, pred_path: str | Path, gold_path: str | Path) -> dict[str, Any]:
    """:func:`evaluate` on files: predictions as seed output-shape JSONL; gold the same, or full
    task examples (seed-shape JSONL, an official ``.in``/``.label`` folder or file)."""
    gold = read_answers(gold_path, task=task)
    if not gold:
        raise MustciteError("no gold paragraphs", path=gold_path)
    preds = read_answers(pred_path, task=task)
    if not preds:
        raise MustciteError("no predictions to score: the file has no prediction line", path=pred_path,
                            hint="a prediction file holds one JSON answer with an \"id\" a line")
    return evaluate(task, gold, preds)
