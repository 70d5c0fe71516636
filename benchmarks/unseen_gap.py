"""Why the benchmark's test queries and unseen papers give different ratios to BM25.

The benchmark (``neurips-2024``, v2) scores a train-only model on its test queries against the
pool papers (2018-2023, the core venues) they cite; the user contract scores the default model on
unseen NeurIPS 2024 papers (the default model's hold-out) over everything it serves: the whole
corpus of 2024 or earlier and the works of the catalogue. This script ranks the unseen papers
once (default model, 400 deep; BM25 over the same serving pool, 4,000 deep, year <= 2024) and
scores the same rankings in steps from the user's view to the benchmark's:

1. ``contract``: results as shown (papers and works), truth = linked corpus citations only;
2. ``contract, all entries``: the same results, truth = every reference that resolves to a pool
   paper or work (what the user sees: a named dataset counts);
3. ``papers only``: works taken out of both rankings before the cut at 100, corpus truth;
4. ``benchmark universe``: rankings and truth restricted to the v2 benchmark's pool papers.

The benchmark's own figure (v2 test, train-only model) is read from
``benchmarks/results/recommend_test_neurips-2024.json``. The same steps on the v2 test queries
that are also in the default model's hold-out are given when there are enough of them.

    python benchmarks/unseen_gap.py [--model DIR] [--bench neurips-2024] [--n 0]
        -> benchmarks/results/unseen_gap.json
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mustcite.benchmark import Benchmark, paired_ttest  # noqa: E402
from mustcite.config import Workspace  # noqa: E402
from mustcite.corpus import normalize_title  # noqa: E402
from mustcite.extract import WorkIndex, is_work_id  # noqa: E402
from mustcite.labels import load_reference_dirs  # noqa: E402
from mustcite.recommend import Recommender, default_model, split_dev  # noqa: E402
from mustcite.retrieval import Doc  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
TOP = 100


def recall(ranked: dict[str, list[str]], truth: dict[str, set[str]]) -> dict[str, float]:
    """R@100 per query with a non-empty truth."""
    return {q: len(set(ranked.get(q, [])[:TOP]) & t) / len(t) for q, t in truth.items() if t}


def mean(v: dict[str, float]) -> float:
    return round(sum(v.values()) / len(v), 4) if v else 0.0


def step(ours: dict[str, list[str]], bm25: dict[str, list[str]], truth: dict[str, set[str]]) -> dict:
    a, b = recall(ours, truth), recall(bm25, truth)
    return {"queries": len(a), "mustcite_R@100": mean(a), "bm25_R@100": mean(b),
            "ratio": round(mean(a) / mean(b), 3) if mean(b) else None, "p": float(f"{paired_ttest(b, a):.3g}")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--bench", default="neurips-2024")
    ap.add_argument("--year", type=int, default=2024)
    ap.add_argument("--n", type=int, default=0)
    args = ap.parse_args()
    model = args.model or default_model()
    card = json.loads((model / "card.json").read_text())
    data = card["data"]
    rec = Recommender.load(model, cache_queries=True)
    works = WorkIndex.load(data["works"]) if data.get("works") else None
    pool_ids = set(rec.row)
    everything = load_reference_dirs(data["reference_folders"], pool_ids, works)
    _, holdout = split_dev(everything, data["dev_fraction"], card.get("seed", 0))
    queries = [p for p in holdout if p.year == args.year and any(not is_work_id(c.paper_id) for c in p.cites)]
    if args.n:
        queries = queries[: args.n]
    # the benchmark's universe and test queries
    b = Benchmark.open(Workspace.resolve(None).root / "benchmarks" / args.bench)
    bench_pool = {p["paper_id"] for p in b.pool()}
    test_titles = {normalize_title(q.get("title")) for q in b.queries("test")}

    qs = [{"id": p.id, "title": p.title, "abstract": p.abstract, "year": p.year} for p in queries]
    ranked = rec.rank_ids(qs, tiers=("cited",), top=4 * TOP)["cited"]
    hits = rec.bm25.search([Doc(p.id, p.title, p.abstract) for p in queries], k=40 * TOP,
                           mask=rec.candidates.pool_mask(args.year)[1])
    bm25 = {q: [d for d, _ in h] for q, h in hits.items()}

    def only(r: dict[str, list[str]], keep) -> dict[str, list[str]]:
        return {q: [d for d in ids if keep(d)] for q, ids in r.items()}

    corpus_truth = {p.id: {c.paper_id for c in p.cites if not is_work_id(c.paper_id)} for p in queries}
    all_truth = {p.id: {c.paper_id for c in p.cites} for p in queries}
    bench_truth = {q: t & bench_pool for q, t in corpus_truth.items()}
    steps = {
        "1 contract (papers and works shown, corpus citations counted)": step(ranked, bm25, corpus_truth),
        "2 contract, every entry in the serving pool counted": step(ranked, bm25, all_truth),
        "3 papers only (works taken out), corpus citations": step(only(ranked, lambda d: not is_work_id(d)),
                                                               only(bm25, lambda d: not is_work_id(d)), corpus_truth),
        "4 benchmark universe (v2 pool papers, their citations)": step(only(ranked, bench_pool.__contains__),
                                                                     only(bm25, bench_pool.__contains__), bench_truth),
    }
    in_test = [p.id for p in queries if normalize_title(p.title) in test_titles]
    shares = {
        "truth_in_bench_pool": round(sum(len(bench_truth[q]) for q in bench_truth)
                                     / max(1, sum(len(t) for t in corpus_truth.values())), 4),
        "corpus_citations_of_2024": round(sum(1 for q, t in corpus_truth.items() for d in t
                                              if (rec.pool[rec.row[d]].get("year") or 0) >= args.year)
                                          / max(1, sum(len(t) for t in corpus_truth.values())), 4),
        "works_in_top100_mustcite": round(sum(sum(is_work_id(d) for d in r[:TOP]) for r in ranked.values())
                                          / len(ranked), 1),
        "works_in_top100_bm25": round(sum(sum(is_work_id(d) for d in r[:TOP]) for r in bm25.values()) / len(bm25), 1),
    }
    bench_fig = {}
    rt = RESULTS / f"recommend_test_{args.bench}.json"
    if rt.is_file():
        tables = json.loads(rt.read_text()).get("tables", {})
        bench_fig = {"source": rt.name, "tables_cited": tables.get("cited")}
    out = {"model": str(model), "queries": len(queries), "holdout_queries_also_in_v2_test": len(in_test),
           "steps": steps, "shares": shares, "benchmark_v2_test": bench_fig}
    if len(in_test) >= 20:
        sub = set(in_test)
        out["steps_on_v2_test_queries_in_the_holdout"] = {
            name: step({q: r for q, r in ranked.items() if q in sub}, {q: r for q, r in bm25.items() if q in sub},
                       {q: t for q, t in truth.items() if q in sub})
            for name, truth in (("corpus citations", corpus_truth), ("benchmark universe", bench_truth))}
    (RESULTS / "unseen_gap.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
