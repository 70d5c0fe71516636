"""The audit simulation: remove a seeded 30% of each paper's must-cite references, ask the audit
to find them again, with the draft's remaining references as evidence vs from the title and
abstract alone.

For every dev (tuning) or test (read once) query of a benchmark: its pool references are the
``cited`` qrels, its must-cite ones the ``mustcite`` qrels. A seeded 30% (at least one) of the
must-cite references is removed (a per-query seed: the choice does not depend on the other
queries); the rest stay as the draft's bibliography. Both methods list the pool papers the draft
does not cite, best first:

* ``title+abstract``: the recommender's ranking for the title and abstract (today's audit);
* ``audit``: :func:`mustcite.recommend.audit.audit_ranking` (the same recommender plus the
  co-citation and bibliographic-coupling evidence of the remaining references).

Measured on the removed papers: recall@10, recall@20, MRR (first removed paper found), recall@100,
with the ratio audit / title+abstract and paired tests over queries. ``findings``: what the audit
reports, its findings strongest first (:func:`mustcite.recommend.audit.draft_findings` on the same
text and references), against the ranking they come from: recall@10, recall@20 and MRR of the
findings' papers, and ``shown``, the share of the removed papers among the findings at or above the
default confidence threshold. ``--grid`` tries the weights
on the split (use it on dev only) and reports the best by recall@20.

The recommender must be train-only on the benchmark (``mustcite train --benchmark NAME``): its
labelled papers are the earlier-year papers and the train queries, never a dev or test query.

    B=neurips-2024; M=mustcite-work/models/bench-$B
    python benchmarks/audit_simulation.py --model $M --split dev --grid     # tune
    python benchmarks/audit_simulation.py --model $M --split test           # read once

Writes ``benchmarks/results/audit_simulation_<split>.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

from mustcite.benchmark import Benchmark, paired_ttest, randomisation_test  # noqa: E402
from mustcite.config import Workspace  # noqa: E402
from mustcite.recommend import (  # noqa: E402
    DEFAULT_WEIGHTS,
    AuditWeights,
    Recommender,
    blend,
    context_text,
    draft_findings,
    draft_sentences,
    load_finding_calibration,
    missing_order,
    named_candidates,
    score_draft,
    top_indices,
)

OUT = Path(__file__).parent / "results"
DEPTH = 100
GRID = {"cocite": (0.0, 0.25), "share": (0.0, 2.0, 4.0), "coupling": (2.0, 4.0, 8.0),
        "named": (0.0, 2.0, 4.0, 8.0, 16.0), "coupled_k": (10, 30)}


def removed_split(qid: str, must: list[str], fraction: float, seed: int) -> list[str]:
    """The must-cite references removed from query ``qid``: a seeded ``fraction`` (at least one)."""
    rng = random.Random(int(hashlib.sha256(f"{seed}:{qid}".encode()).hexdigest()[:16], 16))
    n = max(1, round(fraction * len(must)))
    return sorted(rng.sample(sorted(must), n))


def scores(order: list[str], removed: set[str]) -> dict[str, float]:
    ranks = [i for i, pid in enumerate(order, 1) if pid in removed]
    n = len(removed)
    return {"R@10": sum(r <= 10 for r in ranks) / n, "R@20": sum(r <= 20 for r in ranks) / n,
            "R@100": sum(r <= 100 for r in ranks) / n, "MRR": 1.0 / ranks[0] if ranks else 0.0}


def findings_order(rec, q: dict, keep: list[str], ds, ref_list: list[dict], removed: set[str],
                   calibration: dict) -> tuple[list[str], list[str]]:
    """The pool papers of the audit's findings for the simulated draft, strongest first, and those
    shown by default: the draft's text is its kept references' citation contexts (as the ranking
    reads it), each with its kept references' markers; the removed references are no reference."""
    drop = {r["cite"] for r in ref_list if r.get("paper_id") in removed}
    kept_refs = [r for r in ref_list if r.get("cite") not in drop]
    passages, seen = [], set()
    for r in kept_refs:
        for c in r.get("contexts") or ():
            text = c.get("context") or ""
            if text in seen:
                continue
            seen.add(text)
            for marker in drop:
                if marker and not marker.isdigit():
                    text = text.replace(marker, " ")
            cites = [[text.find(k["cite"]), [k["cite"]]] for k in kept_refs
                     if k.get("cite") and k["cite"] in text]
            passages.append({"section": c.get("section") or "", "text": text, "cites": cites})
    sents = draft_sentences(passages)
    cands = named_candidates(rec.names, sents, ds.year, rec.pool_years, rec.pool.titles) if rec.names else {}
    named = {rec.pool.ids[row]: c.name for row, c in cands.items()}
    sig = rec.draft_indexes.bibliography(rec.nindex).signals(keep, ds.year, q["title"],
                                                               coupled_k=DEFAULT_WEIGHTS.coupled_k, named=named)
    score = blend(ds, sig, DEFAULT_WEIGHTS)
    refs = [{"cite": r.get("cite"), "bibkey": r.get("cite"), "title": r.get("title"), "paper_id": r.get("paper_id"),
             "contexts": r.get("contexts")} for r in kept_refs]
    draft = SimpleNamespace(paper=SimpleNamespace(sources={}, stats={}), title=q.get("title") or "",
                            abstract=q.get("abstract") or "")
    found = draft_findings(rec, draft, refs, [], ds, score, sig, sents, calibration, cands)
    order = [f.paper_id for f in found if f.paper_id]
    return order, [f.paper_id for f in found if f.paper_id and f.confidence >= calibration["threshold"]]


def summarise(per_query: dict[str, dict[str, dict[str, float]]]) -> dict:
    methods = list(per_query)
    metrics = list(next(iter(per_query[methods[0]].values())))
    out: dict = {"queries": len(per_query[methods[0]]), "methods": {}}
    base = methods[0]
    for m in methods:
        row = {}
        for k in metrics:
            a = {q: v[k] for q, v in per_query[m].items()}
            b = {q: v[k] for q, v in per_query[base].items()}
            mean_a, mean_b = float(np.mean(list(a.values()))), float(np.mean(list(b.values())))
            row[k] = round(mean_a, 4)
            if m != base:
                row[f"{k}_ratio"] = round(mean_a / mean_b, 3) if mean_b else None
                row[f"{k}_p_ttest"] = float(f"{paired_ttest(a, b):.3g}")
                row[f"{k}_p_randomisation"] = float(f"{randomisation_test(a, b):.3g}")
        out["methods"][m] = row
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--model", type=Path, required=True, help="a train-only recommender of the benchmark")
    ap.add_argument("--split", default="dev", choices=("dev", "test"))
    ap.add_argument("--fraction", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--grid", action="store_true", help="try the weight grid (dev only)")
    ap.add_argument("--limit", type=int, default=0, help="first N queries (smoke runs)")
    ap.add_argument("--out", type=Path, default=None,
                    help="result file (default: benchmarks/results/audit_simulation_<split>.json)")
    ap.add_argument("--refs", type=Path, default=None,
                    help="the queries' reference files (default: the benchmark manifest's reference folder)")
    args = ap.parse_args(argv)
    if args.grid and args.split == "test":
        ap.error("--grid tunes: run it on dev, then read test once with the chosen weights")
    bench = Benchmark.open(Workspace.resolve().root / "benchmarks" / args.benchmark)
    qrels = bench.qrels(args.split, ("cited", "mustcite"))
    queries = [q for q in bench.queries(args.split) if qrels["mustcite"].get(q["id"])]
    if args.limit:
        queries = queries[: args.limit]
    t0 = time.perf_counter()
    rec = Recommender.load(args.model, cache_queries=True)
    load_s = time.perf_counter() - t0
    bib = rec.draft_indexes.bibliography(rec.nindex)
    main_tier = rec.tiers.main
    refs_dir = args.refs or Path(json.loads((bench.path / "manifest.json").read_text())["inputs"]["ref_dirs"][0])
    drafts, texts, refs_of = [], {}, {}
    for q in queries:
        cited = sorted(p for p, rel in qrels["cited"].get(q["id"], {}).items() if rel > 0)
        must = sorted(p for p, rel in qrels["mustcite"][q["id"]].items() if rel > 0)
        removed = removed_split(q["id"], must, args.fraction, args.seed)
        drafts.append((q, [p for p in cited if p not in set(removed)], set(removed)))
        # the draft's words around its remaining citations (the removed references' contexts and
        # markers gone): what the audit reads from a real draft's extraction
        ref_list = json.loads((refs_dir / f"{q['source']}.json").read_text(encoding="utf-8"))
        texts[q["id"]] = context_text(ref_list, {r["cite"] for r in ref_list if r.get("paper_id") in set(removed)})
        refs_of[q["id"]] = ref_list

    # title + abstract alone: the recommender's own ranking, one batch
    t0 = time.perf_counter()
    parsed, cands, _, probs = rec.score([{k: q[k] for k in ("id", "title", "abstract", "year") if k in q}
                                         for q, _, _ in drafts], tiers=(main_tier,))
    base_runs = {}
    start = 0
    for (q, keep, _removed), cs in zip(drafts, cands):
        p = probs[main_tier][start:start + len(cs)]
        start += len(cs)
        have = set(keep)
        order = [cs[j].paper_id for j in top_indices(p, cs, DEPTH + len(have)) if cs[j].paper_id not in have][:DEPTH]
        base_runs[q["id"]] = order
    base_s = time.perf_counter() - t0

    # the audit: score each draft once, then blend with each weight setting
    t0 = time.perf_counter()
    scored = []
    widest = replace(DEFAULT_WEIGHTS, coupled_k=max(GRID["coupled_k"]))
    for q, keep, removed in tqdm(drafts, desc=f"audit {args.split}", unit="draft"):
        ds, sig = score_draft(rec, {k: q[k] for k in ("id", "title", "abstract", "year") if k in q}, keep,
                              text=texts[q["id"]], weights=widest)
        scored.append((q, keep, removed, ds, sig.named))
    audit_s = time.perf_counter() - t0

    def run(weights: AuditWeights) -> dict[str, list[str]]:
        out = {}
        for q, keep, _removed, ds, named in scored:
            sig = bib.signals(keep, ds.year, q["title"], coupled_k=weights.coupled_k, named=named)
            order = missing_order(ds, blend(ds, sig, weights), set(keep), DEPTH)
            out[q["id"]] = [ds.candidates[j].paper_id for j in order]
        return out

    def evaluate(runs: dict[str, list[str]]) -> dict[str, dict[str, float]]:
        return {q["id"]: scores(runs[q["id"]], removed) for q, _, removed in drafts}

    result: dict = {"benchmark": args.benchmark, "split": args.split, "model": str(args.model),
                    "fraction": args.fraction, "seed": args.seed, "depth": DEPTH,
                    "queries": len(drafts), "removed": sum(len(r) for _, _, r in drafts),
                    "kept_references_mean": round(float(np.mean([len(k) for _, k, _ in drafts])), 1),
                    "seconds": {"load": round(load_s, 1), "title_abstract": round(base_s, 1),
                                "audit_scoring": round(audit_s, 1)}}
    base_eval = evaluate(base_runs)
    if args.grid:
        grid = []
        for values in tqdm(list(itertools.product(*GRID.values())), desc="grid", unit="setting"):
            w = replace(DEFAULT_WEIGHTS, **dict(zip(GRID, values)))
            ev = evaluate(run(w))
            grid.append({**dict(zip(GRID, values)),
                         **{k: round(float(np.mean([v[k] for v in ev.values()])), 4) for k in ("R@10", "R@20", "MRR")}})
        grid.sort(key=lambda g: (-g["R@20"], -g["MRR"]))
        result["grid"] = grid
        best = replace(DEFAULT_WEIGHTS, **{k: grid[0][k] for k in GRID})
        result["chosen"] = best.to_dict()
        weights = best
    else:
        weights = DEFAULT_WEIGHTS
    result["weights"] = weights.to_dict()
    audit_eval = evaluate(run(weights))
    ceiling = {q["id"]: len(removed & {c.paper_id for c in ds.candidates}) / len(removed)
               for q, _, removed, ds, _ in scored}
    result["removed_named_in_text"] = round(float(np.mean([len(removed & set(named)) / len(removed)
                                                            for _, _, removed, _, named in scored])), 4)
    result["candidate_recall"] = round(float(np.mean(list(ceiling.values()))), 4)
    result.update(summarise({"title+abstract": base_eval, "audit": audit_eval}))
    # what the audit reports: its findings, strongest first, against the ranking they come from
    calibration = load_finding_calibration()
    found_eval, shown_n = {}, []
    for q, keep, removed, ds, _named in tqdm(scored, desc=f"findings {args.split}", unit="draft"):
        order, shown = findings_order(rec, q, keep, ds, refs_of[q["id"]], removed, calibration)
        row = scores(order, removed)
        row["shown"] = len(removed & set(shown)) / len(removed)
        found_eval[q["id"]] = row
        shown_n.append(len(shown))
    ranking = {qid: {k: v[k] for k in ("R@10", "R@20", "MRR")} | {"shown": 0.0} for qid, v in audit_eval.items()}
    versus = summarise({"audit ranking": ranking, "audit findings": found_eval})
    result["findings"] = {"threshold": calibration["threshold"], "shown_per_draft": round(float(np.mean(shown_n)), 2),
                          "methods": versus["methods"]}
    path = args.out or OUT / f"audit_simulation_{args.split}.json"
    path.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "grid"}, indent=1))
    if args.grid:
        print("best settings on", args.split, json.dumps(result["grid"][:5], indent=1))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
