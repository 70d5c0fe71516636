"""Retrieval metrics of MasterSet Appendix G, per query and averaged.

Binary relevance (qrels value > 0). MAP, MRR, nDCG@K and Recall@K come from ir-measures (trec_eval
definitions: AP sums precision at each relevant rank and divides by the number of relevant papers);
HR@K (1 if any relevant paper is in the top K) is computed here and checked against ir-measures'
``Success@K`` in the tests. Ranking follows trec_eval: score descending, ties by docid descending.
Every query of the qrels that has at least one relevant paper counts; a query the run lacks scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping

import ir_measures
from ir_measures import AP, RR, R, nDCG

from ..errors import MustciteError
from .trec import Qrels, Run

#: Column order of the paper's Tables 3-5.
METRICS: tuple[str, ...] = ("MAP", "MRR", "nDCG@10", "nDCG@20", "nDCG@30", "R@50", "R@100", "HR@10", "HR@20")

_IRM = {"MAP": AP, "MRR": RR, "nDCG@10": nDCG @ 10, "nDCG@20": nDCG @ 20, "nDCG@30": nDCG @ 30,
        "R@50": R @ 50, "R@100": R @ 100}


def _parse_metric(name: str):
    if name in _IRM:
        return _IRM[name]
    if name.startswith("HR@"):
        return None
    try:
        return ir_measures.parse_measure(name)
    except Exception:
        raise MustciteError(f"unknown metric {name!r}", hint=f"use one of {', '.join(METRICS)}") from None


def binary_qrels(qrels: Qrels) -> Qrels:
    """Keep relevant pairs only (value > 0, as 1) and drop queries without any."""
    out = {q: {d: 1 for d, r in docs.items() if r > 0} for q, docs in qrels.items()}
    return {q: docs for q, docs in out.items() if docs}


def ranked(docs: Mapping[str, float]) -> list[str]:
    """Doc ids in trec_eval order: score descending, then docid descending."""
    return [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)]


def hit_ratio(run: Run, qrels: Qrels, k: int) -> dict[str, float]:
    """HR@k per query: 1.0 if any relevant doc is among the top k, else 0.0."""
    out = {}
    for qid, rel in binary_qrels(qrels).items():
        top = ranked(run.get(qid, {}))[:k]
        out[qid] = 1.0 if any(d in rel for d in top) else 0.0
    return out


def per_query(run: Run, qrels: Qrels, metrics: tuple[str, ...] = METRICS) -> dict[str, dict[str, float]]:
    """``{metric: {qid: value}}`` over every qrels query with a relevant paper (missing from run -> 0)."""
    rel = binary_qrels(qrels)
    if not rel:
        raise MustciteError("the qrels hold no relevant pairs")
    run_in = {q: run[q] for q in rel if q in run and run[q]}
    out: dict[str, dict[str, float]] = {}
    standard = {m: _parse_metric(m) for m in metrics}
    measures = [v for v in standard.values() if v is not None]
    by_measure: dict[str, dict[str, float]] = {str(m): {} for m in measures}
    if measures and run_in:
        for r in ir_measures.iter_calc(measures, rel, run_in):
            by_measure[str(r.measure)][r.query_id] = float(r.value)
    for name, measure in standard.items():
        if measure is None:
            out[name] = hit_ratio(run, rel, int(name.split("@", 1)[1]))
        else:
            got = by_measure[str(measure)]
            out[name] = {q: got.get(q, 0.0) for q in rel}
    return out


def check_coverage(run: Run, qrels: Qrels, path: str | None = None) -> str | None:
    """Raise MustciteError when ``run`` is empty or shares no query with ``qrels`` (its scores would
    be a silent table of zeros); return a warning when some judged queries are missing from it."""
    judged = set(binary_qrels(qrels))
    if not any(run.values()):
        raise MustciteError("the run holds no results", path=path)
    common = judged & {q for q, docs in run.items() if docs}
    if not common:
        raise MustciteError(f"no query of the run is in the qrels (run: {_some(run)}; qrels: {_some(judged)})",
                            path=path, hint="are the run and the qrels of the same benchmark and split?")
    if len(common) < len(judged):
        return (f"{len(judged) - len(common)} of {len(judged)} judged queries have no results in the run; "
                "they count as 0")
    return None


def _some(ids) -> str:
    ids = sorted(ids)
    return ", ".join(ids[:3]) + (f", ... ({len(ids)} in all)" if len(ids) > 3 else "")


def mean(values: Mapping[str, float]) -> float:
    return sum(values.values()) / len(values) if values else 0.0


def evaluate(run: Run, qrels: Qrels, metrics: tuple[str, ...] = METRICS) -> dict[str, float]:
    """Mean of each metric over the qrels queries."""
    return {m: mean(v) for m, v in per_query(run, qrels, metrics).items()}
