"""The shared judge interface: one citation instance in, one label out.

A *citation instance* is one (citing paper, cited reference) pair, as in MasterSet (Section 4):
the citing paper's title and abstract, the cited reference, and every in-text context where it is
cited.  A ``Judge`` labels an instance with Type I (0/1: experimental baseline / core reference) or
Type II (1-5 core relevance).  Backends (offline rules, LLM APIs, local llama.cpp) implement ``Judge``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

Task = Literal["type1", "type2"]
TASKS: tuple[str, ...] = ("type1", "type2")


@dataclass(frozen=True)
class CitationInstance:
    """One (citing paper, cited reference) pair = one MasterSet citation instance."""

    citing_id: str
    citing_title: str
    citing_abstract: str
    ref_title: str
    ref_raw: str
    cite: str
    year: int | None
    contexts: tuple[tuple[str, str], ...]  # (section, context)
    mentions: int

    def to_dict(self) -> dict[str, Any]:
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        d["contexts"] = [list(c) for c in self.contexts]
        return d

    def key(self) -> str:
        """sha256 hex of the canonical JSON of all fields (input to cache keys)."""
        cached = self.__dict__.get("_key")
        if cached is None:
            blob = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            cached = hashlib.sha256(blob.encode("utf-8")).hexdigest()
            object.__setattr__(self, "_key", cached)   # frozen: memoised outside the fields
        return cached


@dataclass
class Judgement:
    """A judge's answer. ``value`` is None on a parse failure (never silently mapped to a label)."""

    value: int | None  # Type I: 0/1; Type II: 1..5
    raw: str = ""
    prob: dict[int, float] | None = None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cached: bool = False


@runtime_checkable
class Judge(Protocol):
    """Anything that labels citation instances."""

    name: str  # e.g. "offline-lr-v1", "openai:gpt-4o-mini", "local:qwen2.5-coder-1.5b-q4km"

    def judge(self, inst: CitationInstance, task: Task) -> Judgement: ...


class ScoringJudge:
    """Base of the judges that score every context of many instances at once (offline, neural,
    cascade).  A subclass gives ``_analyse_many(insts) -> [analysis]`` (the per-instance probability
    ``p`` and rule flags) and ``_decide(analysis, task) -> Judgement``; this class turns them into the
    :class:`Judge` calls and the batched ``judge_batch`` / ``judge_many`` that ``annotate`` uses."""

    chunk = 20000      # instances analysed per call of ``_analyse_many``

    def _analyse_many(self, insts: Sequence[CitationInstance]) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _decide(self, a: dict[str, Any], task: Task) -> Judgement:
        raise NotImplementedError

    def judge(self, inst: CitationInstance, task: Task) -> Judgement:
        return self._decide(self._analyse_many([inst])[0], task)

    def judge_batch(self, insts: Sequence[CitationInstance], task: Task, *,
                    chunk: int | None = None) -> list[Judgement]:
        """Same answers as :meth:`judge`, for many instances at once."""
        return self.judge_many(insts, (task,), chunk=chunk)[task]

    def judge_many(self, insts: Sequence[CitationInstance], tasks: Sequence[Task] = ("type1", "type2"), *,
                   chunk: int | None = None) -> dict[str, list[Judgement]]:
        """Every task for many instances, analysing each instance's contexts once."""
        size = chunk or self.chunk
        out: dict[str, list[Judgement]] = {t: [] for t in tasks}
        for i in range(0, len(insts), size):
            analyses = self._analyse_many(insts[i:i + size])
            for t in tasks:
                out[t] += [self._decide(a, t) for a in analyses]
        return out


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def instance_from_reference(item: Mapping[str, Any], citing_meta: Mapping[str, Any]) -> CitationInstance:
    """Build one instance from a reference-file item and the citing paper's metadata
    (keys ``paper_id``/``id``, ``title``, ``abstract``; missing keys become empty strings)."""
    contexts = tuple(
        (str(c.get("section", "") or ""), str(c.get("context", "") or ""))
        for c in (item.get("contexts") or [])
        if isinstance(c, Mapping)
    )
    mentions = _as_int(item.get("mentions"))
    if mentions is None:
        mentions = len(contexts)
    return CitationInstance(
        citing_id=str(citing_meta.get("paper_id") or citing_meta.get("id") or ""),
        citing_title=str(citing_meta.get("title") or ""),
        citing_abstract=str(citing_meta.get("abstract") or ""),
        ref_title=str(item.get("title") or ""),
        ref_raw=str(item.get("raw") or ""),
        cite=str(item.get("cite") or ""),
        year=_as_int(item.get("year")),
        contexts=contexts,
        mentions=mentions,
    )


def instances_from_reference_file(ref_list: Iterable[Mapping[str, Any]],
                                  citing_meta: Mapping[str, Any]) -> list[CitationInstance]:
    """One ``CitationInstance`` per item of a per-paper reference file
    (``src/mustcite/schemas/references.schema.json``), in file order."""
    return [instance_from_reference(item, citing_meta) for item in ref_list]


__all__ = ["CitationInstance", "Judgement", "Judge", "ScoringJudge", "Task", "TASKS",
           "instance_from_reference", "instances_from_reference_file"]
