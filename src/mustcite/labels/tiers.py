"""MasterSet's three must-cite tiers (MasterSet paper, Sections 4.1 and 6.1) on reference-file items.

* Type I  (``type1``): 0/1 from a judge — experimental baseline / core reference.
* Type II (``type2``): 1-5 from a judge; must-cite when ``type2 >= type2_threshold`` (4).
* Type III (``type3``): 1 when the reference is mentioned at least ``n_mentions`` (3) times.
* ``must_cite`` (Section 6.1): Type I == 1 OR Type II >= 4 OR Type III; ``None`` when no tier
  is positive and a judged tier is unknown (judge parse failure or not judged).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mustcite.errors import MustciteError
from mustcite.labels.judge import Judge, instance_from_reference


@dataclass(frozen=True)
class LabelConfig:
    """Thresholds of the tiers (MasterSet defaults)."""

    n_mentions: int = 3        # Type III: mentioned at least N times
    type2_threshold: int = 4   # Type II must-cite at score >= this

    def __post_init__(self) -> None:
        if self.n_mentions < 1:
            raise MustciteError(f"Type III threshold N must be >= 1, got {self.n_mentions}")
        if not 1 <= self.type2_threshold <= 5:
            raise MustciteError(f"Type II threshold must be in 1..5, got {self.type2_threshold}")


def mention_count(item: Mapping[str, Any]) -> int:
    """``mentions`` of a reference item, else the number of its contexts."""
    m = item.get("mentions")
    if isinstance(m, int) and not isinstance(m, bool):
        return m
    return len(item.get("contexts") or [])


def type3_label(item: Mapping[str, Any], config: LabelConfig = LabelConfig()) -> int:
    return int(mention_count(item) >= config.n_mentions)


def must_cite(type1: int | None, type2: int | None, type3: int | None,
              config: LabelConfig = LabelConfig()) -> bool | None:
    """The combined criterion: any tier positive -> True; all three known and negative -> False;
    otherwise None (unknown)."""
    flags = [None if type1 is None else type1 == 1,
             None if type2 is None else type2 >= config.type2_threshold,
             None if type3 is None else type3 == 1]
    if any(f is True for f in flags):
        return True
    if all(f is False for f in flags):
        return False
    return None


def apply_labels(item: Mapping[str, Any], type1: int | None, type2: int | None, judge_name: str | None,
                 config: LabelConfig = LabelConfig()) -> dict[str, Any]:
    """A copy of ``item`` with ``type1``, ``type2``, ``type3``, ``must_cite`` and ``judge`` set."""
    if type1 not in (None, 0, 1):
        raise MustciteError(f"Type I label must be 0, 1 or None, got {type1!r}", field="type1")
    if type2 is not None and not (isinstance(type2, int) and 1 <= type2 <= 5):
        raise MustciteError(f"Type II label must be 1..5 or None, got {type2!r}", field="type2")
    out = dict(item)
    t3 = type3_label(item, config)
    out.update(type1=type1, type2=type2, type3=t3, must_cite=must_cite(type1, type2, t3, config),
               judge=judge_name)
    return out


def label_references(items: Iterable[Mapping[str, Any]], judge: Judge, citing_meta: Mapping[str, Any],
                     config: LabelConfig = LabelConfig()) -> list[dict[str, Any]]:
    """Judge every item of a reference file (Type I and Type II in separate passes, as MasterSet
    does) and return labelled copies."""
    items = list(items)
    insts = [instance_from_reference(it, citing_meta) for it in items]
    t1 = [judge.judge(inst, "type1").value for inst in insts]
    t2 = [judge.judge(inst, "type2").value for inst in insts]
    return [apply_labels(it, a, b, judge.name, config) for it, a, b in zip(items, t1, t2)]


def add_type3(items: Iterable[Mapping[str, Any]], config: LabelConfig = LabelConfig()) -> list[dict[str, Any]]:
    """Set only ``type3`` and ``must_cite`` (keeping existing type1/type2) — no judge needed."""
    out = []
    for it in items:
        d = dict(it)
        d["type3"] = type3_label(it, config)
        d["must_cite"] = must_cite(d.get("type1"), d.get("type2"), d["type3"], config)
        out.append(d)
    return out
