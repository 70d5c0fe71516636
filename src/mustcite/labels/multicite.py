"""MultiCite (Lauscher et al., NAACL 2022) as a yardstick for Type I judges.

MultiCite labels citation *intents*; MasterSet's Type I asks whether the cited work is a baseline,
comparison target, used benchmark/dataset or directly extended method of the citing paper.  We
map intents to a Type I proxy:

* positive (1): ``uses``, ``differences``, ``similarities``, ``extends``
* negative (0): ``background``, ``motivation``, ``future_work``

Multi-label items (about 14% of each split) are resolved by a ``rule``: ``"any"`` (default; positive
if any label is positive, since one qualifying use suffices under MasterSet's "IF ANY" criterion) or
``"all"`` (positive only if every label is positive).  Evaluations report both.

The proxy is imperfect: MasterSet excludes "a method the current paper uses but does not compete
against", while MultiCite's ``uses`` includes it.  We keep ``uses`` positive because it also covers
the dataset/benchmark use that Type I counts.

A Type II proxy (1-5, for calibrating ordinal scores only) takes the highest of
``extends``=5, ``uses``=4, ``similarities``/``differences``=3, ``motivation``=2,
``background``/``future_work``=1.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from mustcite import lazy_libs
from mustcite.config import find_data_dir
from mustcite.errors import DataMissingError, MustciteError
from mustcite.io import read_json
from mustcite.labels.judge import CitationInstance

POSITIVE_INTENTS = frozenset({"uses", "differences", "similarities", "extends"})
NEGATIVE_INTENTS = frozenset({"background", "motivation", "future_work"})
INTENTS = POSITIVE_INTENTS | NEGATIVE_INTENTS
TYPE2_PROXY = {"extends": 5, "uses": 4, "similarities": 3, "differences": 3, "motivation": 2,
               "background": 1, "future_work": 1}
CONTEXTS = ("gold", "1", "3")
SPLITS = ("train", "dev", "test")
MultiLabelRule = Literal["any", "all"]

_CITE_TAG = re.compile(r"<cite>(.*?)</cite>", re.S)


@dataclass(frozen=True)
class MultiCiteItem:
    """One MultiCite classification instance."""

    id: str                       # "<paper hash>_<n>"
    text: str                     # the context, the target citation wrapped in <cite>...</cite>
    labels: tuple[str, ...]       # intents, sorted

    @property
    def paper_id(self) -> str:
        return self.id.rsplit("_", 1)[0]

    @property
    def cite(self) -> str:
        """The marked citation as written ('Athar (2011)'); '' where the item has no marker."""
        m = _CITE_TAG.search(self.text)
        return m.group(1).strip() if m else ""

    @property
    def plain_text(self) -> str:
        """The context with the <cite> tags removed (the citation text stays in place)."""
        return _CITE_TAG.sub(lambda m: m.group(1), self.text)


def multicite_dir(data_dir: str | Path | None = None) -> Path:
    base = Path(data_dir) if data_dir is not None else find_data_dir()
    d = base / "intents" / "multicite"
    if not d.is_dir():
        raise DataMissingError("MultiCite data not found", path=d,
                               hint="point --data / MUSTCITE_DATA at the shared data folder")
    return d


def load_split(split: str, context: str = "3", data_dir: str | Path | None = None) -> list[MultiCiteItem]:
    """Load an official split (``train``/``dev``/``test``) of a context version (``gold``/``1``/``3``)."""
    if split not in SPLITS or context not in CONTEXTS:
        raise MustciteError(f"unknown MultiCite split/context {split!r}/{context!r}",
                            hint=f"splits {SPLITS}, contexts {CONTEXTS}")
    path = multicite_dir(data_dir) / f"classification_{context}_context" / f"{split}.json.gz"
    if not path.is_file():
        raise DataMissingError("MultiCite split missing", path=path)
    rows = read_json(path)
    items = []
    for i, row in enumerate(rows):
        x = row.get("x")
        if isinstance(x, list):   # 29 train / a few dev/test items store the text as a list of strings
            x = " ".join(str(s) for s in x)
        labels = tuple(sorted(str(row.get("y", "")).split()))
        unknown = set(labels) - INTENTS
        if not isinstance(x, str) or not labels or unknown:
            raise MustciteError(f"unexpected MultiCite record {i}: labels {labels}", path=path)
        items.append(MultiCiteItem(id=str(row["id"]), text=x, labels=labels))
    return items


def type1_proxy(labels: tuple[str, ...] | list[str], rule: MultiLabelRule = "any") -> int:
    """Type I proxy of a MultiCite label set under the multi-label ``rule`` (see module docstring)."""
    pos = [lab in POSITIVE_INTENTS for lab in labels]
    if rule == "any":
        return int(any(pos))
    if rule == "all":
        return int(all(pos))
    raise MustciteError(f"unknown multi-label rule {rule!r} (use 'any' or 'all')")


def type2_proxy(labels: tuple[str, ...] | list[str]) -> int:
    """Ordinal 1-5 proxy: the highest ``TYPE2_PROXY`` score among the labels."""
    return max(TYPE2_PROXY[lab] for lab in labels)


def to_instance(item: MultiCiteItem) -> CitationInstance:
    """A MultiCite item as a ``CitationInstance`` (one context, no section label, no titles:
    MultiCite ships neither paper titles nor section names)."""
    return CitationInstance(
        citing_id=item.paper_id, citing_title="", citing_abstract="",
        ref_title="", ref_raw=item.cite, cite=item.cite, year=None,
        contexts=(("", item.plain_text),), mentions=1,
    )


def iter_instances(split: str = "test", context: str = "3", n: int | None = None, seed: int = 0,
                   data_dir: str | Path | None = None) -> Iterator[tuple[MultiCiteItem, CitationInstance]]:
    """Yield ``(item, instance)`` pairs of a split; with ``n``, a seeded random sample of n items
    (same sample for the same seed, in file order)."""
    items = load_split(split, context, data_dir)
    if n is not None and n < len(items):
        keep = set(random.Random(seed).sample(range(len(items)), n))
        items = [it for i, it in enumerate(items) if i in keep]
    for it in items:
        yield it, to_instance(it)


def evaluate_judge(judge, split: str = "test", context: str = "3", n: int | None = None, seed: int = 0,
                   data_dir: str | Path | None = None, type2: bool = True) -> dict:
    """Accuracy and Cohen's kappa of ``judge`` (a :class:`~mustcite.labels.judge.Judge`) on the Type I
    proxy under both multi-label rules, with the majority-class baseline of each; with ``type2``,
    quadratic-weighted kappa of its Type II scores against the ordinal proxy.  Parse failures
    (``value is None``) count as wrong and are reported."""
    metrics = lazy_libs.sklearn_metrics()
    accuracy_score, cohen_kappa_score = metrics.accuracy_score, metrics.cohen_kappa_score
    confusion_matrix = metrics.confusion_matrix
    pairs = list(iter_instances(split, context, n, seed, data_dir))
    pred1 = [judge.judge(inst, "type1").value for _, inst in pairs]
    failures = sum(v is None for v in pred1)
    out: dict = {"judge": judge.name, "split": split, "context": context, "n": len(pairs),
                 "multi_label_items": sum(len(it.labels) > 1 for it, _ in pairs),
                 "parse_failures_type1": failures, "type1": {}}
    for rule in ("any", "all"):
        gold = np.array([type1_proxy(it.labels, rule) for it, _ in pairs])
        # a parse failure is scored as the wrong answer
        pred = np.array([(1 - g) if v is None else v for v, g in zip(pred1, gold)])
        majority = int(gold.mean() >= 0.5)
        out["type1"][rule] = {
            "accuracy": round(float(accuracy_score(gold, pred)), 4),
            "cohen_kappa": round(float(cohen_kappa_score(gold, pred)), 4),
            "positive_rate_gold": round(float(gold.mean()), 4),
            "positive_rate_pred": round(float(pred.mean()), 4),
            "majority_class": majority,
            "majority_baseline_accuracy": round(float((gold == majority).mean()), 4),
            "confusion_matrix_[gold][pred]": confusion_matrix(gold, pred, labels=[0, 1]).tolist(),
        }
    if type2:
        pred2 = [judge.judge(inst, "type2").value for _, inst in pairs]
        ok = [(type2_proxy(it.labels), v) for (it, _), v in zip(pairs, pred2) if v is not None]
        out["type2"] = {
            "quadratic_weighted_kappa_vs_proxy": round(float(cohen_kappa_score(
                [g for g, _ in ok], [v for _, v in ok], weights="quadratic", labels=[1, 2, 3, 4, 5])), 4),
            "parse_failures": len(pred2) - len(ok),
            "histogram_pred": {s: sum(v == s for _, v in ok) for s in range(1, 6)},
            "histogram_proxy": {s: sum(g == s for g, _ in ok) for s in range(1, 6)},
            "note": "proxy = max over labels of extends 5, uses 4, similarities/differences 3, motivation 2, "
                    "background/future_work 1 (a calibration target, not human Type II scores)",
        }
    return out
