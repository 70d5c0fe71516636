"""One judge contract for any set of citation contexts (``mustcite judge``).

Input: JSONL, one ``{"id", "context", "section", "cite"}`` object a line:

* ``id``: a non-empty string (or an integer), unique in the file; echoed back as given;
* ``context``: the citing text (a sentence or a few), a non-empty string;
* ``section``: the section heading the context sits in, a string; may be ``""`` (or ``null``)
  when unknown;
* ``cite``: the citation marker the question is about, as written: ``"[12]"``, ``"12"``,
  ``"[DKS17]"``, ``"Smith et al., 2020"``, ``"(Smith et al., 2020)"``, ``"Athar (2011)"``.

Other keys (a gold label, a source name) are ignored, so a human-labelled file can be judged as it
is.  Blank lines are skipped.  Every line is checked before anything is judged; the first bad line
raises :class:`~mustcite.errors.MustciteError` naming the file, the line and the field.

Output: one ``{"id", "type1": 0|1, "type2": 1-5}`` per input line, in input order.

Each item becomes the same :class:`~mustcite.labels.judge.CitationInstance` the ``annotate``
pipeline builds from a reference file (one ``(section, context)`` pair, one mention, no titles),
so every backend judges it exactly as it judges an extracted paper: the offline judge through its
vectorised ``judge_many``, an LLM backend through the async engine with its retries and the SQLite
answer cache.  A single bracketed key (``"[12]"``) or a parenthesised author-year marker is
unwrapped to the bare key the extraction writes (``"12"``, ``"Smith et al., 2020"``).

A judge that gives no valid label for an item (an LLM call failing after all retries, an answer
that is not a label) is never papered over: :class:`JudgeFailed` names the ids and why.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Workspace
from ..errors import MustciteError
from ..io import iter_jsonl
from .cache import JudgeCache
from .judge import CitationInstance, Judgement
from .judging import jobs_for, run
from .offline import _cite_patterns

FIELDS = ("id", "context", "section", "cite")
VALID = {"type1": (0, 1), "type2": (1, 2, 3, 4, 5)}

_BRACKET_KEY = re.compile(r"^\[\s*([^\[\]\s,;]+)\s*\]$")              # "[12]", "[DKS17]"
_PAREN_AUTHOR_YEAR = re.compile(r"^\(\s*([^()]*\d{4}[a-z]?)\s*\)$")    # "(Smith et al., 2020)"


@dataclass(frozen=True)
class ContextItem:
    """One validated input line."""

    id: str | int
    context: str
    section: str
    cite: str
    line: int = 0

    def instance(self) -> CitationInstance:
        """The citation instance the annotate pipeline would build for this context."""
        return to_instance(self)


class JudgeFailed(MustciteError):
    """The judge gave no valid label for some items; ``failures`` holds ``(id, task, why)``."""

    def __init__(self, failures: list[tuple[Any, str, str]], total: int):
        self.failures = failures
        why: dict[str, str] = {}
        for ident, task, reason in failures:
            why.setdefault(str(ident), f"{task}: {reason}")
        shown = "; ".join(f"{i} ({w})" for i, w in list(why.items())[:10])
        more = f"; and {len(why) - 10} more" if len(why) > 10 else ""
        super().__init__(f"the judge gave no label for {len(why)} of {total} items "
                         f"(ids: {', '.join(list(why)[:20])}{' ...' if len(why) > 20 else ''}): {shown}{more}",
                         hint="nothing was written. A call that failed after all retries is retried by a "
                              "rerun (answers so far are cached); an answer that is not a label is cached "
                              "too: check --model / --prompts")


def normalise_cite(cite: str) -> str:
    """The marker as the extraction writes cite keys: ``"[12]"`` -> ``"12"``,
    ``"(Smith et al., 2020)"`` -> ``"Smith et al., 2020"``; anything else stripped, as is."""
    c = cite.strip()
    m = _BRACKET_KEY.match(c) or _PAREN_AUTHOR_YEAR.match(c)
    return m.group(1).strip() if m else c


def to_instance(item: ContextItem) -> CitationInstance:
    """One context as a ``CitationInstance`` (the shape :func:`~mustcite.labels.judge.instance_from_reference`
    gives a reference cited once, without citing-paper metadata)."""
    cite = normalise_cite(item.cite)
    return CitationInstance(citing_id="", citing_title="", citing_abstract="", ref_title="", ref_raw=cite,
                            cite=cite, year=None, contexts=((item.section, item.context),), mentions=1)


def _check(obj: dict[str, Any], path: str | Path, line: int) -> ContextItem:
    for f in FIELDS:
        if f not in obj:
            raise MustciteError(f"missing field '{f}' (each line needs id, context, section, cite)",
                                path=path, line=line, field=f)
    ident = obj["id"]
    if isinstance(ident, bool) or not isinstance(ident, (str, int)):
        raise MustciteError(f"id must be a string, got {type(ident).__name__}", path=path, line=line, field="id")
    if isinstance(ident, str) and not ident.strip():
        raise MustciteError("empty id", path=path, line=line, field="id")
    for f in ("context", "cite"):
        v = obj[f]
        if not isinstance(v, str):
            raise MustciteError(f"{f} must be a string, got {type(v).__name__}", path=path, line=line, field=f)
        if not v.strip():
            raise MustciteError(f"empty {f}", path=path, line=line, field=f)
    section = obj["section"]
    if section is None:
        section = ""
    if not isinstance(section, str):
        raise MustciteError(f"section must be a string (\"\" when unknown), got {type(section).__name__}",
                            path=path, line=line, field="section")
    return ContextItem(id=ident, context=obj["context"], section=section, cite=obj["cite"], line=line)


def read_contexts(path: str | Path) -> list[ContextItem]:
    """Every line of a contexts JSONL file, validated (see the module docstring); the first bad
    line raises :class:`MustciteError` with the file, line number and field."""
    path = Path(path)
    if not path.is_file():
        raise MustciteError("input file not found" if not path.exists() else "not a file", path=path)
    items: list[ContextItem] = []
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(path):
        item = _check(obj, path, line)
        key = str(item.id)
        if key in seen:
            raise MustciteError(f"duplicate id {key!r} (first on line {seen[key]})", path=path, line=line,
                                field="id")
        seen[key] = line
        items.append(item)
    if not items:
        raise MustciteError("no contexts in the file (one JSON object a line)", path=path)
    return items


def cite_found(item: ContextItem) -> bool:
    """Whether the marker occurs in the context (literally or in the forms the offline judge
    recognises: a numeric key inside a bracket group, an author-year key as "Author (Year)")."""
    cite = normalise_cite(item.cite)
    return cite in item.context or item.cite.strip() in item.context or any(
        p.search(item.context) for p in _cite_patterns(cite))


def _valid(j: Judgement | None, task: str) -> str | None:
    """Why ``j`` is not a label of ``task`` (None when it is one)."""
    if j is None:
        return "no answer"
    if j.value is None:
        return j.error or "no label"
    if isinstance(j.value, bool) or not isinstance(j.value, int) or j.value not in VALID[task]:
        return f"{j.value!r} is not a {task} label {VALID[task]}"
    return None


def judge_contexts(items: Sequence[ContextItem], judge: Any, **kw: Any) -> list[dict[str, Any]]:
    """``[{"id", "type1", "type2"}]`` for ``items``, in input order (see :func:`judge_instances`)."""
    return judge_instances([it.id for it in items], [to_instance(it) for it in items], judge, **kw)


def judge_instances(ids: Sequence[Any], insts: Sequence[CitationInstance], judge: Any, *,
                    cache_path: str | Path | None = None, concurrency: int = 8, progress: bool = False,
                    stats: dict | None = None, **engine_kw: Any) -> list[dict[str, Any]]:
    """``[{"id", "type1", "type2"}]`` for citation instances named by ``ids``, in input order.

    A judge with ``judge_many`` and no ``render`` (offline, neural, cascade) is called once, vectorised;
    any other judge (the LLM backends) runs through :func:`mustcite.labels.judging.run` with retries,
    ``concurrency`` calls in flight and, for a prompted backend, the answer cache at ``cache_path``
    (default ``<work>/cache/judge.sqlite``, as for ``mustcite annotate``).  Raises
    :class:`JudgeFailed` naming the ids the judge gave no valid label for.  ``stats``, if given, is
    filled with ``seconds``, ``calls`` and ``cached``."""
    t0 = time.perf_counter()
    answers: dict[str, list[Judgement | None]] = {}
    calls = cached = 0
    llm = hasattr(judge, "render")
    if hasattr(judge, "judge_many") and not llm:
        answers = {t: list(v) for t, v in judge.judge_many(insts, ("type1", "type2")).items()}
        calls = 2 * len(insts)
    else:
        cache = None
        if llm:
            if cache_path is None:
                cache_path = Workspace.resolve().cache / "judge.sqlite"
            cache = JudgeCache(cache_path)
        try:
            res = run(judge, jobs_for(insts), cache, concurrency=concurrency, progress=progress, **engine_kw)
        finally:
            if cache is not None:
                cache.close()
        answers = {t: [res.judgements.get((inst.key(), t)) for inst in insts] for t in ("type1", "type2")}
        calls, cached = res.calls, res.cached
    out: list[dict[str, Any]] = []
    failures: list[tuple[Any, str, str]] = []
    for i, ident in enumerate(ids):
        row: dict[str, Any] = {"id": ident}
        for t in ("type1", "type2"):
            j = answers[t][i]
            why = _valid(j, t)
            if why is not None:
                failures.append((ident, t, why))
            else:
                row[t] = int(j.value)
        out.append(row)
    if stats is not None:
        stats.update(seconds=time.perf_counter() - t0, calls=calls, cached=cached)
    if failures:
        raise JudgeFailed(failures, len(ids))
    return out


__all__ = ["FIELDS", "ContextItem", "JudgeFailed", "normalise_cite", "to_instance", "read_contexts",
           "cite_found", "judge_contexts", "judge_instances"]
