"""Dense baselines that are too slow for the full pool on 2 CPU cores, on a stated subset of it.

all-mpnet-base-v2 encodes about 2-3 documents/s here, so the 33,827-paper neurips-2024 pool would
take hours. This script measures every method on the same subset instead:

* queries: ``--queries`` test queries drawn with ``--seed``;
* pool: every paper relevant to one of them under the combined must-cite criterion, plus
  ``--random`` other pool papers drawn with the same seed;
* qrels: the split's qrels restricted to those queries and that pool (the ``cited`` ground truth
  is left out: most cited papers are not in the subset, so it would measure the sampling).

Methods are ``NAME=bm25|minilm|<model folder>[@max tokens, default 256]`` (repeatable); embeddings go through the normal
cache, so a model that has encoded the full pool costs nothing here. Writes
``benchmarks/results/dense_subset.json`` (manifest of the subset, per-method metrics, encoding
speed) and prints the paper-style tables.

    make mpnet
    python benchmarks/dense_subset.py --method BM25=bm25 --method MiniLM-L6=minilm \\
        --method MiniLM-NTX=mustcite-work/models/minilm-ntx@128 --method mpnet=.models/all-mpnet-base-v2
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from common import SUBSET_TRUTHS, benchmark_subset  # noqa: E402

from mustcite.benchmark import build_rows, per_query, render  # noqa: E402
from mustcite.config import Workspace  # noqa: E402
from mustcite.retrieval import Doc, make_retriever  # noqa: E402

TRUTHS = SUBSET_TRUTHS
OUT = Path(__file__).parent / "results" / "dense_subset.json"


def _compact(pq: dict[str, dict[str, float]], qids: list[str]) -> dict[str, list[float | None]]:
    """``{metric: {qid: value}}`` as ``{metric: [value per query id in qids order, None if absent]}``."""
    return {m: [None if q not in v else round(v[q], 5) for q in qids] for m, v in pq.items()}


def _expand(compact: dict[str, list[float | None]], qids: list[str]) -> dict[str, dict[str, float]]:
    return {m: {q: x for q, x in zip(qids, vals) if x is not None} for m, vals in compact.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--split", default="test")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--random", type=int, default=1250)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--method", action="append", default=[], help="NAME=bm25|minilm|<model folder>[@max tokens]")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    work = Workspace.resolve()
    bench = work.root / "benchmarks" / args.benchmark
    queries, pool, qrels, manifest = benchmark_subset(bench, args.split, args.queries, args.random, args.seed)
    print(json.dumps(manifest), flush=True)
    qdocs = [Doc(str(q["id"]), q["title"], q.get("abstract") or "") for q in queries]
    qids = [d.id for d in qdocs]
    manifest["query_ids"] = qids
    old = json.loads(args.out.read_text()) if args.out.exists() else {}
    results = old if old.get("subset", {}).get("digest") == manifest["digest"] else {}
    results.pop("tables", None)
    results["subset"] = manifest
    results.setdefault("methods", {})
    for spec in args.method or ["BM25=bm25", "MiniLM-L6=minilm"]:
        name, _, method = spec.partition("=")
        method, _, seq = method.partition("@")
        retriever = make_retriever(method, batch_size=args.batch_size, cache_dir=work.cache,
                                   max_seq_length=int(seq or 256))
        cached = getattr(retriever, "cache", None)
        before = len(cached) if cached is not None else 0
        t0 = time.perf_counter()
        retriever.index(pool)
        hits = retriever.search(qdocs, k=100)
        secs = time.perf_counter() - t0
        encoded = (len(cached) - before) if cached is not None else 0
        run = {q: dict(h) for q, h in hits.items()}
        entry = {"method": method, "meta": retriever.metadata(), "seconds": round(secs, 1),
                 "texts_encoded": encoded,
                 "docs_per_s": round(encoded / secs, 2) if encoded else None,
                 "per_query": {gt: _compact(per_query(run, qrels[gt]), qids) for gt in TRUTHS}}
        results["methods"][name] = entry
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1))
        print(f"{name}: {secs:.0f} s, {encoded} texts encoded", flush=True)
    for gt in TRUTHS:
        rows = build_rows([(n, _expand(m["per_query"][gt], qids)) for n, m in results["methods"].items()])
        table = render(rows, "markdown", title=f"{args.benchmark} {args.split} subset {manifest['digest']} - {gt}")
        results.setdefault("tables", {})[gt] = table
        print(table)
    args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
