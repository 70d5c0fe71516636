"""Inter-rater agreement for must-cite labels (MasterSet Table 2 and Table 10).

Input is a long-form CSV ``item,rater,label`` (2-6 raters per item, missing ratings allowed) and,
optionally, a judge CSV ``item,label``.  Statistics:

* ``alpha_nominal`` / ``alpha_ordinal`` / ``alpha_interval``: Krippendorff's alpha (``krippendorff``);
* ``pairwise_kappa`` / ``pairwise_weighted_kappa`` (quadratic): Cohen's kappa (scikit-learn) for
  every rater pair on the items both rated, summarised as ``{mean, min, max, n_pairs}``; pairs with
  fewer than 2 co-rated items or an undefined kappa (both raters constant) are left out;
* ``exact_agreement``: share of items (with >= 2 ratings) where all raters gave the same label;
* ``within_one``: share of items whose ratings span (max - min) at most 1;
* with a judge (MasterSet's form): ``judge_accuracy`` and ``judge_kappa`` (Cohen's) against the
  human **majority** label (items with a tied majority are skipped and counted),
  ``judge_weighted_kappa`` (quadratic) against the human **lower median** (``statistics.median_low``,
  always an observed label), and ``judge_vs_raters``: accuracy, Cohen's kappa and quadratic-weighted
  kappa of the judge against each rater on the items that rater labelled.

The judge file is a CSV with an ``item`` column and the label column (``label``, or the column
named like the ratings' label, e.g. ``type1``), as ``mustcite agreement judge`` writes it.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score

from mustcite.errors import MustciteError
from mustcite.io import iter_csv

from .judge import CitationInstance
from .rating import _split_contexts, load_sample


@dataclass
class Ratings:
    """``labels[item][rater] = label``, items and raters in first-seen order."""

    labels: dict[str, dict[str, int]] = field(default_factory=dict)
    path: str = "<memory>"
    skipped: list[str] = field(default_factory=list)   # items with fewer than 2 ratings (left out)

    @property
    def items(self) -> list[str]:
        return list(self.labels)

    @property
    def raters(self) -> list[str]:
        seen: dict[str, None] = {}
        for by_rater in self.labels.values():
            for r in by_rater:
                seen.setdefault(r, None)
        return list(seen)

    def matrix(self) -> np.ndarray:
        """raters x items, ``nan`` where missing (krippendorff's reliability_data)."""
        raters, items = self.raters, self.items
        m = np.full((len(raters), len(items)), np.nan)
        ri = {r: i for i, r in enumerate(raters)}
        for j, it in enumerate(items):
            for r, v in self.labels[it].items():
                m[ri[r], j] = v
        return m


def _label(value: str | None, path: Path, line: int, column: str = "label") -> int:
    text = (value or "").strip()
    try:
        return int(text)
    except ValueError:
        raise MustciteError(f"{column} {text!r} is not an integer", path=path, line=line, field=column) from None


def read_ratings(path: str | Path | list[str | Path], *, min_raters: int = 2, label: str = "label") -> Ratings:
    """Read ``item,rater,label`` from one CSV or several (e.g. one per rater, as ``mustcite rate``
    writes them), the label taken from column ``label``; blank labels are missing ratings. Raises
    MustciteError (file:line) on a missing column, a non-integer label, a rater rating an item twice,
    fewer than ``min_raters`` raters overall, or no item with two ratings.  Items with fewer than two
    ratings are left out and listed in ``Ratings.skipped``."""
    paths = [Path(p) for p in path] if isinstance(path, (list, tuple)) else [Path(path)]
    if not paths:
        raise MustciteError("no ratings file given")
    ratings = Ratings(path=", ".join(map(str, paths)))
    first_line: dict[str, tuple[Path, int]] = {}
    for path in paths:
        required = ("item", "rater", label)
        for line, row in iter_csv(path, required=required, hint=f"expected columns: {','.join(required)}"):
            item, rater = (row.get("item") or "").strip(), (row.get("rater") or "").strip()
            if not item or not rater:
                raise MustciteError("empty item or rater", path=path, line=line,
                                    hint="each rater fills the rater and label columns of their copy")
            first_line.setdefault(item, (path, line))
            if not (row.get(label) or "").strip():
                ratings.labels.setdefault(item, {})
                continue
            by_rater = ratings.labels.setdefault(item, {})
            if rater in by_rater:
                raise MustciteError(f"rater {rater!r} rates item {item!r} twice", path=path, line=line)
            by_rater[rater] = _label(row.get(label), path, line, label)
    if len(ratings.raters) < min_raters:
        raise MustciteError(f"{len(ratings.raters)} rater(s) in the file; agreement needs at least {min_raters}",
                            path=ratings.path)
    ratings.skipped = sorted(k for k, v in ratings.labels.items() if len(v) < 2)
    ratings.labels = {k: v for k, v in ratings.labels.items() if len(v) >= 2}
    if not ratings.labels:
        first = min(first_line.values(), key=lambda x: x[1], default=(ratings.path, None))
        raise MustciteError("no item has two or more ratings; agreement needs 2 or more raters per item",
                            path=first[0] if len(paths) > 1 else ratings.path, line=first[1])
    return ratings


def read_judge(path: str | Path, label: str = "label") -> dict[str, int]:
    """Read a judge CSV: ``item`` and ``label`` columns, or ``item`` and the column ``label`` names
    (``type1`` / ``type2`` in the files ``mustcite agreement judge`` writes); one label per item."""
    path = Path(path)
    with closing(iter_csv(path, required=("item",), hint=f"expected columns: item,{label}")) as rows:
        out: dict[str, int] = {}
        column = None
        for line, row in rows:
            if column is None:
                column = label if label in row and "label" not in row else "label"
                if column not in row:
                    raise MustciteError(f"missing column {label}; header is {list(row)}",
                                        path=path, line=1, hint=f"expected columns: item,{label}")
            item = (row.get("item") or "").strip()
            if not item:
                raise MustciteError("empty item", path=path, line=line)
            if item in out:
                raise MustciteError(f"item {item!r} appears twice", path=path, line=line)
            out[item] = _label(row.get(column), path, line, column)
    return out


def _summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"mean": None, "min": None, "max": None, "n_pairs": 0}
    return {"mean": round(float(np.mean(values)), 4), "min": round(float(min(values)), 4),
            "max": round(float(max(values)), 4), "n_pairs": len(values)}


def pairwise_kappas(ratings: Ratings, weights: str | None = None) -> list[float]:
    """Cohen's kappa of every rater pair on its co-rated items (see module docstring)."""
    out = []
    for a, b in itertools.combinations(ratings.raters, 2):
        pairs = [(v[a], v[b]) for v in ratings.labels.values() if a in v and b in v]
        if len(pairs) < 2:
            continue
        x, y = zip(*pairs)
        if weights is not None:
            labels = sorted({*x, *y})
            k = cohen_kappa_score(x, y, weights=weights, labels=labels) if len(labels) > 1 else float("nan")
        else:
            k = cohen_kappa_score(x, y)
        if not math.isnan(k):
            out.append(float(k))
    return out


def _alpha(ratings: Ratings, level: str) -> float | None:
    m = ratings.matrix()
    if len(np.unique(m[~np.isnan(m)])) < 2:
        return None   # a single label value: alpha undefined
    return round(float(krippendorff.alpha(reliability_data=m, level_of_measurement=level)), 4)


def majority_label(labels: list[int]) -> int | None:
    """The most frequent label; None on a tie."""
    counts = Counter(labels).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def agreement(ratings: Ratings, judge: dict[str, int] | None = None, judge_path: str | None = None) -> dict[str, Any]:
    """All statistics of the module docstring as one JSON-ready dict."""
    per_item = [list(v.values()) for v in ratings.labels.values()]
    n_per = Counter(len(v) for v in per_item)
    out: dict[str, Any] = {
        "file": ratings.path, "n_items": len(per_item), "n_raters": len(ratings.raters),
        "n_ratings": sum(len(v) for v in per_item),
        "items_skipped_fewer_than_2_ratings": len(ratings.skipped),
        "raters_per_item": {str(k): n_per[k] for k in sorted(n_per)},
        "labels": sorted({x for v in per_item for x in v}),
        "alpha_nominal": _alpha(ratings, "nominal"),
        "alpha_ordinal": _alpha(ratings, "ordinal"),
        "alpha_interval": _alpha(ratings, "interval"),
        "pairwise_kappa": _summary(pairwise_kappas(ratings)),
        "pairwise_weighted_kappa": _summary(pairwise_kappas(ratings, "quadratic")),
        "exact_agreement": round(sum(len(set(v)) == 1 for v in per_item) / len(per_item), 4),
        "within_one": round(sum(max(v) - min(v) <= 1 for v in per_item) / len(per_item), 4),
    }
    if judge is not None:
        common = [it for it in ratings.items if it in judge]
        if not common:
            raise MustciteError("the judge CSV shares no item with the ratings", path=judge_path)
        maj = {it: majority_label(list(ratings.labels[it].values())) for it in common}
        acc_items = [it for it in common if maj[it] is not None]
        med = {it: statistics.median_low(list(ratings.labels[it].values())) for it in common}
        h, j = [med[it] for it in common], [judge[it] for it in common]
        labs = sorted({*h, *j})
        out.update({
            "judge_file": judge_path, "judge_items": len(common),
            "judge_items_missing": len(ratings.items) - len(common),
            "judge_accuracy": round(sum(judge[it] == maj[it] for it in acc_items) / len(acc_items), 4)
            if acc_items else None,
            "judge_kappa": _kappa([maj[it] for it in acc_items], [judge[it] for it in acc_items]),
            "judge_accuracy_reference": "human majority label (ties skipped)",
            "judge_accuracy_ties_skipped": len(common) - len(acc_items),
            "judge_weighted_kappa": round(float(cohen_kappa_score(h, j, weights="quadratic", labels=labs)), 4)
            if len(labs) > 1 else None,
            "judge_weighted_kappa_reference": "human lower median label (statistics.median_low), quadratic weights",
            "judge_vs_raters": judge_vs_raters(ratings, judge),
        })
    return out


def _kappa(a: list[int], b: list[int], weights: str | None = None) -> float | None:
    """Cohen's kappa (``weights="quadratic"``: weighted), None where undefined (one label in all)."""
    labs = sorted({*a, *b})
    if len(a) < 2 or len(labs) < 2:
        return None
    k = float(cohen_kappa_score(a, b, weights=weights, labels=labs))
    return None if math.isnan(k) else round(k, 4)


def judge_vs_raters(ratings: Ratings, judge: dict[str, int]) -> dict[str, dict[str, Any]]:
    """The judge against each rater on the items both labelled: accuracy, Cohen's kappa and
    quadratic-weighted kappa (meaningful for the 1-5 Type II scale)."""
    out = {}
    for r in ratings.raters:
        pairs = [(v[r], judge[it]) for it, v in ratings.labels.items() if r in v and it in judge]
        if not pairs:
            continue
        h, j = [x for x, _ in pairs], [y for _, y in pairs]
        out[r] = {"items": len(pairs), "accuracy": round(sum(x == y for x, y in pairs) / len(pairs), 4),
                  "kappa": _kappa(h, j), "weighted_kappa": _kappa(h, j, "quadratic")}
    return out


def read_sample_instances(path: str | Path) -> tuple[list[str], list[Any]]:
    """The items of a sample CSV (``mustcite agreement sample``) as citation instances, so that a judge
    labels exactly what the raters saw: its contexts with their sections, the cite marker, the cited
    and citing titles.  Errors name the file, line and field (:func:`mustcite.labels.rating.load_sample`
    checks the file)."""
    load_sample(path, abstracts={})          # validates columns, items and texts
    ids, insts = [], []
    for _, row in iter_csv(path):
        ctxs = tuple((c["section"], c["text"]) for c in _split_contexts(row.get("contexts") or ""))
        try:
            mentions = int(row.get("mentions") or len(ctxs))
        except ValueError:
            mentions = len(ctxs)
        ids.append(row["item"].strip())
        insts.append(CitationInstance(citing_id=row.get("citing") or "", citing_title=row.get("citing_title") or "",
                                      citing_abstract="", ref_title=row.get("ref_title") or "",
                                      ref_raw=row.get("cite") or "", cite=(row.get("cite") or "").strip(),
                                      year=int(row["year"]) if (row.get("year") or "").isdigit() else None,
                                      contexts=ctxs, mentions=mentions))
    return ids, insts


def agreement_from_files(ratings_csv: str | Path | list[str | Path], judge_csv: str | Path | None = None,
                         label: str = "label") -> dict[str, Any]:
    ratings = read_ratings(ratings_csv, label=label)
    judge = read_judge(judge_csv, label) if judge_csv else None
    return agreement(ratings, judge, str(judge_csv) if judge_csv else None)
