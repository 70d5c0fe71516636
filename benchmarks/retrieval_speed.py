#!/usr/bin/env python
"""Retrieval speed on this machine -> benchmarks/results/retrieval_speed.json.

Measures: MiniLM docs encoded/s on a 2,000-paper sample (fresh cache, so every doc is encoded),
BM25 index build time on the full pool, median/p95 single-query latency for BM25 (full pool) and
MiniLM (query encoding + exact faiss search over the encoded sample), the same over the FULL pool
for MiniLM and MiniLM-NTX when their pool embeddings are cached, exact and HNSW faiss search
latency over a pool-sized matrix of random unit vectors (search cost does not depend on the
values), and peak RSS.

    python benchmarks/retrieval_speed.py [--pool <work>/benchmarks/neurips-2024/pool.parquet]
                                         [--years 2018-2023] [--sample 2000] [--queries 100]

Default pool: the built neurips-2024 benchmark pool, else the corpus store's 2018-2023 papers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import sys
import tempfile
import time
from pathlib import Path


def _pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def _lat(values: list[float]) -> dict:
    return {"median_ms": round(1000 * _pct(values, 0.5), 3), "p95_ms": round(1000 * _pct(values, 0.95), 3),
            "n": len(values)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", type=Path, default=None)
    ap.add_argument("--years", default="2018-2023", help="when the pool is the corpus store")
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--ntx", type=Path, default=None, help="MiniLM-NTX folder (default: <work>/models/minilm-ntx)")
    ap.add_argument("--ntx-seq", type=int, default=128, help="the max tokens MiniLM-NTX encoded the pool with")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "retrieval_speed.json")
    args = ap.parse_args(argv)

    import numpy as np

    from mustcite.config import Workspace
    from mustcite.corpus import load_pool
    from mustcite.retrieval import BM25Retriever, DenseRetriever, build_faiss_index

    work = Workspace.resolve()
    args.ntx = args.ntx or work.root / "models" / "minilm-ntx"
    pool_path = args.pool
    if pool_path is None:
        bench = work.root / "benchmarks" / "neurips-2024" / "pool.parquet"
        pool_path = bench if bench.exists() else work.root / "corpus" / "papers.parquet"
    rows = load_pool(pool_path)
    if "benchmarks" not in str(pool_path) and args.years:
        lo, hi = (int(x) for x in args.years.split("-"))
        rows = [r for r in rows if r.get("year") is not None and lo <= r["year"] <= hi]
    rng = random.Random(0)
    report: dict = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                "python": platform.python_version(),
                                "note": "shared 2-core machine with other jobs running; figures are rough"},
                    "pool": {"path": str(pool_path), "papers": len(rows),
                             "with_abstract": sum(1 for r in rows if (r.get("abstract") or "").strip())}}

    t0 = time.perf_counter()
    bm25 = BM25Retriever()
    bm25.index(rows)
    report["bm25_index_build_s"] = round(time.perf_counter() - t0, 2)
    qrows = rng.sample(rows, args.queries)
    queries = [{"id": f"q{i}", "title": r["title"], "abstract": r.get("abstract") or ""} for i, r in enumerate(qrows)]
    lat = []
    for q in queries:
        t = time.perf_counter()
        bm25.search([q], k=100)
        lat.append(time.perf_counter() - t)
    report["bm25_query_latency"] = _lat(lat)
    t = time.perf_counter()
    bm25.search(queries, k=100)
    report["bm25_batch_qps"] = round(len(queries) / (time.perf_counter() - t), 1)
    report["bm25_params"] = bm25.metadata()

    sample = rng.sample(rows, min(args.sample, len(rows)))
    with tempfile.TemporaryDirectory() as cache:
        dense = DenseRetriever(cache_dir=cache, batch_size=32, device="cpu")
        t = time.perf_counter()
        _ = dense.model
        load_s = time.perf_counter() - t
        t = time.perf_counter()
        dense.index(sample)
        enc_s = time.perf_counter() - t
        report["minilm_encode"] = {"docs": len(sample), "seconds": round(enc_s, 2),
                                   "docs_per_s": round(len(sample) / enc_s, 2), "model_load_s": round(load_s, 2),
                                   "batch_size": 32, "max_seq_length": dense.max_seq_length, "device": "cpu",
                                   "full_pool_estimate_min": round(len(rows) / (len(sample) / enc_s) / 60, 1)}
        lat = []
        for q in queries[:50]:
            t = time.perf_counter()
            dense.search([q], k=100)
            lat.append(time.perf_counter() - t)
        report["minilm_query_latency_encoded_sample"] = _lat(lat)
        t = time.perf_counter()
        again = DenseRetriever(cache_dir=cache)
        again.index(sample)
        report["minilm_reindex_from_cache_s"] = round(time.perf_counter() - t, 3)
        assert again.cache.encoded_last == 0

    # dense retrieval over the FULL pool for every model whose pool embeddings are already cached
    # (MiniLM zero-shot at 256 tokens, MiniLM-NTX at 128): index build from the cache, then per query
    # a fresh encode (the query text is never taken from the cache) plus exact search
    from mustcite.retrieval import Doc, default_model_path
    models = {"minilm": (default_model_path(), 256)}
    if args.ntx and Path(args.ntx).is_dir():
        models["minilm-ntx"] = (str(args.ntx), args.ntx_seq)
    report["dense_full_pool"] = {}
    for name, (path, seq) in models.items():
        dense = DenseRetriever(path, cache_dir=work.cache, max_seq_length=seq, device="cpu")
        texts = [Doc(r["paper_id"], r["title"], r.get("abstract") or "").text for r in rows]
        if sum(t in dense.cache for t in texts) < len(texts):
            report["dense_full_pool"][name] = {"skipped": "pool not fully encoded in the cache"}
            continue
        t = time.perf_counter()
        dense.index(rows)
        build = time.perf_counter() - t
        _ = dense.encode(["warm up"])
        lat = []
        for q in queries[:50]:
            t = time.perf_counter()
            qv = dense.encode([Doc(q["id"], q["title"], q["abstract"]).text])
            dense._index.search(np.ascontiguousarray(qv, dtype=np.float32), 100)
            lat.append(time.perf_counter() - t)
        report["dense_full_pool"][name] = {"docs": len(rows), "max_seq_length": seq, "search": "exact (faiss)",
                                           "index_from_cache_s": round(build, 2),
                                           "query_latency_encode_plus_search": _lat(lat)}

    vecs = np.random.default_rng(0).standard_normal((len(rows), 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    qv = vecs[:50] + 0.01
    for ann in (None, "hnsw"):
        t = time.perf_counter()
        index = build_faiss_index(vecs, ann)
        build = time.perf_counter() - t
        lat = []
        for i in range(len(qv)):
            t = time.perf_counter()
            index.search(qv[i:i + 1], 100)
            lat.append(time.perf_counter() - t)
        report[f"faiss_{ann or 'exact'}_search_pool_size"] = {"vectors": len(vecs), "dim": 384,
                                                             "build_s": round(build, 2), **_lat(lat)}
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
