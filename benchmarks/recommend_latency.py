"""Recommender latency: per-query median/p95 via the Python warm path and the REST API, and batch QPS.

Usage::

    python benchmarks/recommend_latency.py [--model DIR] [--queries FILE.jsonl | --n 50] [--top 20]
        [--out benchmarks/results/recommend_latency.json]

Queries: ``--queries`` (``{"id","title","abstract"}`` lines) or ``--n`` pool papers taken at a fixed
stride from the model's own pool (title + abstract). The REST numbers go through uvicorn on
127.0.0.1 with httpx (a real HTTP round trip, one request at a time).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from common import latency_summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, help="model folder (default: <work>/models/recommender)")
    ap.add_argument("--queries", type=Path)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "recommend_latency.json")
    args = ap.parse_args(argv)

    import httpx

    from mustcite.api import create_app, running
    from mustcite.recommend import load_default

    t0 = time.perf_counter()
    rec = load_default(model=args.model)
    load_s = time.perf_counter() - t0
    if args.queries:
        from mustcite.retrieval import read_queries

        queries = [{"id": d.id, "title": d.title, "abstract": d.abstract} for d in read_queries(args.queries)]
    else:
        with_abs = [p for p in rec.pool if p.get("abstract")]
        step = max(1, len(with_abs) // args.n)
        queries = [{"id": f"q{i}", "title": p["title"], "abstract": p["abstract"]}
                   for i, p in enumerate(with_abs[::step][: args.n])]
    for q in queries[:3]:                                   # warm caches
        rec.recommend(q["title"], q["abstract"], args.top)

    py = []
    for q in queries:
        t = time.perf_counter()
        rec.recommend(q["title"], q["abstract"], args.top)
        py.append((time.perf_counter() - t) * 1000)

    t = time.perf_counter()
    rec.recommend_many(queries, top=args.top)
    batch_s = time.perf_counter() - t

    rest = []
    with running(create_app(rec)) as base, httpx.Client(base_url=base, timeout=120) as client:
        client.post("/api/recommend", json={"title": queries[0]["title"], "abstract": queries[0]["abstract"]})
        for q in queries:
            t = time.perf_counter()
            r = client.post("/api/recommend", json={"title": q["title"], "abstract": q["abstract"], "top": args.top})
            rest.append((time.perf_counter() - t) * 1000)
            if r.status_code != 200:
                print(f"REST error {r.status_code}: {r.text[:200]}", file=sys.stderr)
                return 1

    report = {
        "model": rec.describe(), "top": args.top, "queries": len(queries), "load_s": round(load_s, 2),
        "python_warm": latency_summary(py), "rest_api": latency_summary(rest),
        "batch": {"queries": len(queries), "seconds": round(batch_s, 2), "qps": round(len(queries) / batch_s, 2)},
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count(),
                    # > 1 means other jobs competed for the cores while measuring
                    "load_average_1min_at_end": round(__import__("os").getloadavg()[0], 2)},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
