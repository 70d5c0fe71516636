"""Late interaction (ColBERT via PyLate) on the benchmark: zero-shot ColBERT and ColBERT-NTX.

Two rows per model:

* re-rank: BM25's test run (``runs/bm25.test.trec``) re-scored with exact MaxSim
  (``pylate.rank.rerank``): the top ``--rerank-k`` BM25 candidates are re-scored, BM25's ranks
  ``K+1..100`` follow below them (a cascade), so recall@100 equals BM25's by construction;
* full pool (``colbert-exact``, :class:`mustcite.retrieval.colbert.FlatTokenIndex`): every query
  against every one of the 37,040 pool papers by exhaustive MaxSim over the cached token vectors
  -- what an index would approximate, with no build step (``--no-exact`` skips it).

The library's approximate index (PyLate Voyager HNSW over every token) is measured on
``--index-docs`` pool papers for build time, storage, RAM and query latency, and extrapolated.

Token embeddings of MiniLM are encoded once (cached, float16) and shared by both rows: ColBERT-NTX's
projection is applied on the fly (see :mod:`mustcite.retrieval.colbert`). ColBERT-NTX must be trained
first (``mustcite benchmark train-colbert``); nothing is chosen on dev, test is evaluated once.

    .venv/bin/python benchmarks/colbert.py            # -> benchmarks/results/colbert.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from mustcite.benchmark import Benchmark, read_run, write_run  # noqa: E402
from mustcite.config import Workspace  # noqa: E402
from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.retrieval import ColbertRetriever, as_docs, pylate_version  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "colbert.json"


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cascade(reranked: list[tuple[str, float]], bm25: list[str], top: int) -> list[tuple[str, float]]:
    """Re-ranked candidates first, then BM25's remaining ranks below them (scores strictly lower)."""
    seen = {p for p, _ in reranked}
    floor = min((s for _, s in reranked), default=0.0)
    tail = [p for p in bm25 if p not in seen][: max(0, top - len(reranked))]
    return reranked + [(p, floor - 1.0 - i * 1e-3) for i, p in enumerate(tail)]


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--split", default="test")
    ap.add_argument("--rerank-k", type=int, default=50)
    ap.add_argument("--model", default=None, help="ColBERT-NTX folder (default <work>/models/colbert-ntx)")
    ap.add_argument("--index-docs", type=int, default=1000, help="pool papers in the measured Voyager index")
    ap.add_argument("--table-out", default="/tmp/table_colbert")
    ap.add_argument("--no-exact", action="store_true", help="skip the full-pool (exhaustive MaxSim) rows")
    args = ap.parse_args()

    ws = Workspace.resolve()
    bench = Benchmark.open(ws.root / "benchmarks" / args.benchmark)
    model_dir = Path(args.model) if args.model else ws.root / "models" / "colbert-ntx"
    prev = json.loads(OUT.read_text()) if OUT.exists() else {}
    pool = {d.id: d for d in as_docs(bench.pool())}
    queries = as_docs(bench.queries(args.split), id_key="id")
    bm25_file = bench.path / "runs" / f"bm25.{args.split}.trec"
    bm25 = {q: [p for p, _ in sorted(h.items(), key=lambda x: -x[1])] for q, h in read_run(bm25_file).items()}
    cands = {q.id: [p for p in bm25.get(q.id, []) if p in pool][: args.rerank_k] for q in queries}
    report: dict = {"benchmark": str(bench.path), "split": args.split, "queries": len(queries),
                    "library": f"pylate {pylate_version()}", "rerank_k": args.rerank_k,
                    "first_stage": str(bm25_file), "rows": {}}
    runs = {}
    for name, folder in (("colbert", None), ("colbert-ntx", model_dir)):
        r = ColbertRetriever(folder, mode="rerank")
        r._docs = {pid: pool[pid].text for pid in dict.fromkeys(p for c in cands.values() for p in c)}
        r._ids = list(r._docs)
        t0 = time.perf_counter()
        qv = r.encoder.encode([q.text for q in queries], is_query=True, desc=f"{name} queries")
        t_q = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = r.rerank(queries, qv, cands, k=args.rerank_k)
        t_all = time.perf_counter() - t0
        st = r.encoder.stats
        results = {q.id: cascade(res.get(q.id, []), bm25.get(q.id, []), 100) for q in queries}
        run_file = bench.path / "runs" / f"{name}.{args.split}.trec"
        write_run(run_file, results, tag=name)
        atomic_write_json(run_file.with_suffix(".meta.json"), {**r.metadata(), "split": args.split,
                                                              "cascade": f"MaxSim on BM25 top-{args.rerank_k}, "
                                                                         "BM25 ranks after"})
        runs[name] = run_file
        row = {"run": str(run_file), "mode": f"re-rank of BM25 top-{args.rerank_k} (exact MaxSim), BM25 order below",
               "dim": r.model.dim, "candidate_docs": len(r._docs), "query_encode_s": round(t_q, 2),
               "rerank_s_all_queries": round(t_all, 2),
               "rerank_ms_per_query_incl_cached_lookup": round(1000 * t_all / max(1, len(queries)), 1)}
        if st.encoded:
            row["encoded_texts"] = st.encoded
            row["encode_rate_texts_per_s"] = round(st.encoded / st.seconds, 2)
        else:
            row["encoded_texts"] = 0
            row["encode_note"] = "all token embeddings came from the cache"
        if folder is not None:
            card_f = Path(folder) / "training_card.json"
            row["training_card"] = json.loads(card_f.read_text()) if card_f.exists() else None
        report["rows"][name] = row
        cache = r.encoder.caches["doc"]
        report["token_cache"] = {
            "path": str(cache.dir), "docs": len(cache), "bytes_on_disk": cache.bytes_on_disk(),
            "dtype": "float16", "dims": 384,
            "layout": "per shard: keys (n,32) uint8 sha256 of the text, offsets (n+1) int64, vecs (tokens,384) "
                      "float16; memory-mapped, one doc's tokens read on demand"}
    # full pool: exhaustive MaxSim of every query against every pool paper
    for name, folder in (() if args.no_exact else (("colbert", None), ("colbert-ntx", model_dir))):
        r = ColbertRetriever(folder, mode="exact")
        rss0 = rss_mb()
        t0 = time.perf_counter()
        r.index(list(pool.values()))
        build_s = time.perf_counter() - t0
        rss1 = rss_mb()
        t0 = time.perf_counter()
        results = r.search(queries, k=100)
        search_s = time.perf_counter() - t0
        run_file = bench.path / "runs" / f"{name}-exact.{args.split}.trec"
        write_run(run_file, results, tag=f"{name}-exact")
        meta = r.metadata()
        atomic_write_json(run_file.with_suffix(".meta.json"), {**meta, "split": args.split})
        runs[f"{name}-exact"] = run_file
        report["rows"][f"{name}-exact"] = {
            "run": str(run_file), "mode": "full pool: exhaustive MaxSim over every pool paper's token vectors",
            "dim": r.model.dim, "docs": meta["docs"], "token_vectors": meta["token_vectors"],
            "index_bytes": meta["index_bytes"], "storage": meta["storage"],
            "load_from_cache_s": round(build_s, 1), "rss_growth_mb": round(rss1 - rss0, 1),
            "search_s_all_queries": round(search_s, 1), "search_s_per_query": round(search_s / len(queries), 2),
            "torch_threads": torch.get_num_threads()}
        del r

    # encoding rate: measured by whichever run encoded (first run); keep the earlier figure on a cached rerun
    rates = [row.get("encode_rate_texts_per_s") for row in report["rows"].values()
             if row.get("encode_rate_texts_per_s")]
    report["encode_rate_docs_per_s"] = rates[0] if rates else prev.get("encode_rate_docs_per_s")

    # token statistics of the cached candidate docs
    r0 = ColbertRetriever(None, mode="rerank")
    sample_ids = list(dict.fromkeys(p for c in cands.values() for p in c))
    toks = [len(v) for v in r0.encoder.raw([pool[p].text for p in sample_ids], is_query=False, progress=False)]
    report["tokens_per_doc"] = {"mean": round(float(np.mean(toks)), 1), "median": float(np.median(toks)),
                                "max": int(np.max(toks)), "docs": len(toks)}

    # full-index path: PyLate Voyager over --index-docs papers (from the cache), both models
    report["voyager"] = {}
    for name, folder in (("colbert-ntx", model_dir), ("colbert", None)):
        ids = sample_ids[: args.index_docs]
        rv = ColbertRetriever(folder, mode="index", index_dir=ws.cache / "colbert-index" / f"bench-{name}")
        vecs = rv.encoder.encode([pool[p].text for p in ids], is_query=False, progress=False)
        rss0 = rss_mb()
        t0 = time.perf_counter()
        rv._ids, rv._docs = ids, {p: pool[p].text for p in ids}
        rv._voyager = rv._build_voyager(ids, vecs)
        build_s = time.perf_counter() - t0
        rss1 = rss_mb()
        qv = rv.encoder.encode([q.text for q in queries[:20]], is_query=True, progress=False)
        from pylate import retrieve

        ret = retrieve.ColBERT(index=rv._voyager)
        t0 = time.perf_counter()
        ret.retrieve(queries_embeddings=qv, k=100, device="cpu")
        lat = (time.perf_counter() - t0) / len(qv)
        n_vec = int(sum(len(v) for v in vecs))
        disk = dir_bytes(rv._voyager_dir())
        per_doc = disk / len(ids)
        report["voyager"][name] = {
            "docs": len(ids), "token_vectors": n_vec, "dims": rv.model.dim, "dtype": "float32 (Voyager Space.Cosine)",
            "M": 64, "ef_construction": 200, "ef_search": 200, "build_s": round(build_s, 2),
            "build_vectors_per_s": round(n_vec / build_s, 1), "bytes_on_disk": disk,
            "rss_growth_mb": round(rss1 - rss0, 1), "query_latency_ms_k100": round(1000 * lat, 1),
            "extrapolated_full_pool": {"docs": len(pool), "token_vectors": int(n_vec / len(ids) * len(pool)),
                                       "bytes_on_disk": int(per_doc * len(pool)),
                                       "build_hours_at_measured_rate": round(n_vec / len(ids) * len(pool)
                                                                             / (n_vec / build_s) / 3600, 2)}}
    report["peak_rss_mb"] = round(peak_mb(), 1)
    rate = report["encode_rate_docs_per_s"]
    if rate:
        report["full_pool_encode_hours_at_measured_rate"] = round(len(pool) / rate / 3600, 2)

    # evaluation once, on test, with the project's table script (paired t-test vs BM25)
    cmd = [sys.executable, str(ROOT / "benchmarks" / "benchmark_table.py"), "--benchmark", args.benchmark,
           "--split", args.split, "--run", f"BM25={bm25_file}",
           "--run", f"ColBERT-rerank{args.rerank_k}={runs['colbert']}",
           "--run", f"ColBERT-NTX-rerank{args.rerank_k}={runs['colbert-ntx']}", "--out", args.table_out]
    for name, label in (("colbert-exact", "ColBERT (full pool)"), ("colbert-ntx-exact", "ColBERT-NTX (full pool)")):
        if name in runs:
            cmd += ["--run", f"{label}={runs[name]}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    report["table"] = json.loads(Path(args.table_out + ".json").read_text())["tables"]
    report["created_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    atomic_write_json(OUT, report)
    print(json.dumps({k: v for k, v in report.items() if k != "table"}, indent=1))
    print(Path(args.table_out + ".md").read_text())


if __name__ == "__main__":
    main()
