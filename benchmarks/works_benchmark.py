"""Papers and cited works on the same test queries: how much of each query's whole reference list
the top 100 names, and the v2 figures (pool papers only) of a model whose pool also holds works.

    python benchmarks/works_benchmark.py [--v2 neurips-2024] [--v3 neurips-2024-v3] [--refs mustcite-work/extract]
        -> benchmarks/results/works_benchmark.json

Needs the test runs of both benchmarks (``bm25.test.trec`` from ``mustcite benchmark run``,
``mustcite.<truth>.test.trec`` from ``benchmarks/recommend_test.py``) and the v3 train-only model
(``mustcite train --benchmark neurips-2024-v3``), which ranks the v2 test queries again for the
v2 figures (its papers only). A reference entry is named
when the corpus paper it links to or the work it resolves to (the v3 manifest's catalogue) is in
the run's top 100 for the query; every entry of the query's reference file counts, also those
that neither benchmark's pool can hold. mustcite is ranked by P(cited) here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import named_share  # noqa: E402  (benchmarks/ is on the path when run as a script)

from mustcite.benchmark import Benchmark, paired_ttest, per_query, read_qrels, read_run
from mustcite.config import Workspace
from mustcite.extract import WorkIndex, is_work_id, resolved_entries
from mustcite.recommend import Recommender

RESULTS = Path(__file__).resolve().parent / "results"
TOP = 100
DEPTH = 400


def top_ids(run: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """A TREC run as ranked ids per query (score, then id)."""
    return {q: [d for d, _ in sorted(docs.items(), key=lambda kv: (-kv[1], kv[0]))] for q, docs in run.items()}


def papers_only(run: dict[str, dict[str, float]], pool: set[str]) -> dict[str, dict[str, float]]:
    """The run without works and without papers outside the v2 pool (``pool``), each query cut to
    its top 100 papers."""
    out = {}
    for qid, docs in run.items():
        kept = sorted(((d, s) for d, s in docs.items() if not is_work_id(d) and d in pool),
                      key=lambda kv: (-kv[1], kv[0]))[:TOP]
        out[qid] = dict(kept)
    return out


def breakdown(entries: dict[str, list[str | None]], common: dict[str, str], v2_pool: set[str], v3_pool: set[str],
              named: dict[str, dict[str, list[str]]]) -> dict:
    """Every reference entry of the common test queries by what could name it, and how many of each
    kind the runs in ``named`` (ranked ids per query) name in their top 100: corpus papers of the v2
    pool, works of the v3 pool, corpus papers outside the v2 pool, works no pool holds (no earlier
    paper or train query cites them), entries that resolve to nothing."""
    kinds = ("corpus paper in the v2 pool", "work in the v3 pool", "corpus paper outside the v2 pool",
             "work outside the v3 pool", "resolves to nothing")
    out = {k: {"entries": 0} | {name: 0 for name in named} for k in kinds}
    for qid, stem in common.items():
        for e in entries.get(stem) or []:
            if e is None:
                k = kinds[4]
            elif is_work_id(e):
                k = kinds[1] if e in v3_pool else kinds[3]
            else:
                k = kinds[0] if e in v2_pool else kinds[2]
            out[k]["entries"] += 1
            for name, ranked in named.items():
                out[k][name] += e is not None and e in set(ranked.get(qid, [])[:TOP])
    return out


def mean(v: dict[str, float]) -> float:
    return round(sum(v.values()) / len(v), 4) if v else 0.0


def compare(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    """``b`` against ``a`` on their common queries: means, ratio, paired t-test p."""
    common = sorted(set(a) & set(b))
    a, b = {q: a[q] for q in common}, {q: b[q] for q in common}
    return {"queries": len(common), "before": mean(a), "after": mean(b),
            "ratio": round(mean(b) / mean(a), 3) if mean(a) else None, "p": float(f"{paired_ttest(a, b):.3g}")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--v2", default="neurips-2024")
    ap.add_argument("--v3", default="neurips-2024-v3")
    ap.add_argument("--refs", type=Path, default=None, help="the labelled extraction folder (default: <work>/extract)")
    ap.add_argument("--model", type=Path, default=None,
                    help="the v3 train-only model (default: <work>/models/bench-neurips-2024-v3)")
    ap.add_argument("--out", type=Path, default=RESULTS / "works_benchmark.json")
    args = ap.parse_args()
    root = Workspace.resolve().root
    refs = args.refs or root / "extract"
    args.model = args.model or root / "models" / f"bench-{args.v3}"
    b2, b3 = Benchmark.open(root / "benchmarks" / args.v2), Benchmark.open(root / "benchmarks" / args.v3)
    works = WorkIndex.load(b3.manifest["works"]["catalogue"])
    q2 = {str(q["id"]): q["source"] for q in b2.queries("test")}
    q3 = {str(q["id"]): q["source"] for q in b3.queries("test")}
    entries = resolved_entries([refs], set(q2.values()) | set(q3.values()), works)
    runs = {
        "BM25 (v2 pool)": read_run(b2.path / "runs" / "bm25.test.trec"),
        "mustcite (v2 pool)": read_run(b2.path / "runs" / "mustcite.cited.test.trec"),
        "BM25 (v3 pool)": read_run(b3.path / "runs" / "bm25.test.trec"),
        "mustcite (v3 pool: papers and works)": read_run(b3.path / "runs" / "mustcite.cited.test.trec"),
    }
    common = {q: s for q, s in q2.items() if q in q3}
    shares = {name: named_share(top_ids(run), entries, common, TOP) for name, run in runs.items()}
    shares_v3_all = {name: named_share(top_ids(run), entries, q3, TOP) for name, run in runs.items() if "v3" in name}
    out: dict = {
        "queries": {"v2_test": len(q2), "v3_test": len(q3), "common": len(common)},
        "reference_entries": {"common_queries": sum(len(entries.get(s) or []) for s in common.values())},
        "all_references_named_top100": {name: mean(v) for name, v in shares.items()},
        "all_references_named_top100_v3_test": {name: mean(v) for name, v in shares_v3_all.items()},
        "mustcite_v3_vs_v2": compare(shares["mustcite (v2 pool)"], shares["mustcite (v3 pool: papers and works)"]),
        "mustcite_v3_vs_bm25_v3": compare(shares["BM25 (v3 pool)"], shares["mustcite (v3 pool: papers and works)"]),
        "mustcite_v2_vs_bm25_v2": compare(shares["BM25 (v2 pool)"], shares["mustcite (v2 pool)"]),
        "entries_by_kind": breakdown(entries, common, {p["paper_id"] for p in b2.pool()},
                                     {p["paper_id"] for p in b3.pool()},
                                     {n: top_ids(runs[n])
                                      for n in ("mustcite (v2 pool)", "mustcite (v3 pool: papers and works)")}),
    }
    # v2 figures of the v3 model: its ranking of the v2 test queries with the works (and any paper
    # outside the v2 pool) taken out (ranked DEPTH deep, so that 100 papers remain), on the v2 qrels
    rec = Recommender.load(args.model)
    v2_queries = b2.queries("test")
    v2_pool = {p["paper_id"] for p in b2.pool()}
    tiers = {"type1": "type1", "type2": "type2", "type3": "type3", "mustcite": "must_cite", "cited": "cited"}
    ranked = rec.rank_ids(v2_queries, tuple(dict.fromkeys(tiers.values())), top=DEPTH)
    v2c: dict = {}
    for truth in ("type1", "type2", "type3", "mustcite", "cited"):
        qrels = read_qrels(b2.path / "qrels" / f"test.{truth}.qrels")
        r2 = read_run(b2.path / "runs" / f"mustcite.{truth}.test.trec")
        r3 = papers_only({q: {d: float(DEPTH - i) for i, d in enumerate(ids)}
                          for q, ids in ranked[tiers[truth]].items()}, v2_pool)
        p2, p3 = per_query(r2, qrels, ("MAP", "MRR", "R@100")), per_query(r3, qrels, ("MAP", "MRR", "R@100"))
        v2c[truth] = {m: compare(p2[m], p3[m]) for m in ("MAP", "MRR", "R@100")}
    out["v2_figures_of_the_v3_model"] = v2c
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
