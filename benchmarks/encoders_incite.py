#!/usr/bin/env python
"""Encoding time and peak memory of the encoders added for issue 19 (inCite's citation-tuned MiniLM
as a mustcite encoder, and any local Hugging Face / SPECTER2 folder) -> benchmarks/results/encoders_incite.json.

Three steps, each resumable (the pool's vectors go through mustcite's embedding cache, one shard per
``--chunk`` texts, so an interrupted run keeps what it encoded)::

    B=mustcite-work/benchmarks/neurips-2024
    # 1. the stated subset (as benchmarks/dense_subset.py: 100 test queries drawn with seed 2024, every
    #    pool paper relevant to one of them under 'mustcite' + 1,250 random pool papers) as a benchmark
    #    folder <work>/benchmarks/neurips-2024-sub100 (pool, queries/test.jsonl, qrels/test.*.qrels)
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/encoders_incite.py subset
    # 2. encode the pool through the cache (the subset's papers first, then the rest, until
    #    --minutes), recording texts/s and peak RSS
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/encoders_incite.py encode \\
        --name inCite-MiniLM --method onnx:.models/incite-minilm-onnx --max-seq-length 512 --minutes 60
    # 3. single-query latency (encode one title+abstract, uncached) over N test queries
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/encoders_incite.py latency \\
        --name inCite-MiniLM --method onnx:.models/incite-minilm-onnx --max-seq-length 512

``--method`` is any ``mustcite retrieve --method`` spec (``onnx:FOLDER``, ``hf-cls:FOLDER``,
``BASE+ADAPTER``, ...). Peak RSS is the process's ``ru_maxrss`` (the model, the tokenizer and the
cache index included); throughput counts only texts actually encoded (cached ones are skipped).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

from mustcite.config import Workspace  # noqa: E402
from mustcite.retrieval import as_docs, make_retriever  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "encoders_incite.json"
SUBSET = "neurips-2024-sub100"


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def _record(name: str, key: str, entry: dict) -> None:
    res = json.loads(OUT.read_text()) if OUT.exists() else {}
    res.setdefault("machine", {"cpus": os.cpu_count(), "python": platform.python_version(),
                               "note": "2 shared CPU cores; other jobs ran at the same time (load 4-9), so "
                                       "rates are lower bounds"})
    res.setdefault("methods", {}).setdefault(name, {})[key] = entry
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")


def cmd_subset(args) -> None:
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq
    from common import benchmark_subset

    from mustcite.benchmark import Benchmark

    work = Workspace.resolve()
    bench = work.root / "benchmarks" / args.benchmark
    queries, pool, qrels, manifest = benchmark_subset(bench, "test", args.queries, args.random, args.seed)
    keep = {p["paper_id"] for p in pool}
    qids = {str(q["id"]) for q in queries}
    cited = {q: {p: r for p, r in d.items() if p in keep}
             for q, d in Benchmark.open(bench).qrels("test", ("cited",))["cited"].items() if q in qids}
    qrels["cited"] = {q: d for q, d in cited.items() if d}
    dest = work.root / "benchmarks" / SUBSET
    (dest / "qrels").mkdir(parents=True, exist_ok=True)
    (dest / "queries").mkdir(parents=True, exist_ok=True)
    (dest / "runs").mkdir(parents=True, exist_ok=True)
    src = pq.read_table(bench / "pool.parquet")
    ids = src.column("paper_id").to_pylist()
    pq.write_table(src.take(pa.array([i for i, p in enumerate(ids) if p in keep])), dest / "pool.parquet")
    with open(dest / "queries" / "test.jsonl", "w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    for gt, table in qrels.items():
        with open(dest / "qrels" / f"test.{gt}.qrels", "w", encoding="utf-8") as fh:
            for q in sorted(table):
                for p in sorted(table[q]):
                    fh.write(f"{q} 0 {p} {table[q][p]}\n")
    shutil.copy(bench / "manifest.json", dest / "manifest.source.json")
    manifest.update(source=str(bench), note="stated subset of the test split (benchmarks/dense_subset.py "
                    "sampling); 'cited' qrels are restricted to the subset pool",
                    qrels_pairs={gt: sum(len(d) for d in t.values()) for gt, t in qrels.items()})
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(manifest))


def _retriever(args):
    return make_retriever(args.method, max_seq_length=args.max_seq_length, batch_size=args.batch_size,
                          cache_dir=Workspace.resolve().cache, pooling=args.pooling)


def cmd_encode(args) -> None:
    from mustcite.benchmark import Benchmark

    work = Workspace.resolve()
    r = _retriever(args)
    pool = as_docs(Benchmark.open(work.root / "benchmarks" / args.benchmark).pool())
    first = set()
    sub = work.root / "benchmarks" / SUBSET / "pool.parquet"
    if sub.exists():
        import pyarrow.parquet as pq

        first = set(pq.read_table(sub, columns=["paper_id"]).column("paper_id").to_pylist())
    # the subset's papers first (so a subset evaluation is possible early), then the rest by length
    texts = [d.text for d in sorted(pool, key=lambda d: (d.id not in first, len(d.text)))]
    missing = [t for t in dict.fromkeys(texts) if t not in r.cache]
    print(f"{args.name}: {len(texts)} pool texts, {len(missing)} not cached yet", flush=True)
    deadline = time.time() + 60 * args.minutes
    done, secs = 0, 0.0
    for start in range(0, len(missing), args.chunk):
        if time.time() > deadline:
            break
        chunk = missing[start:start + args.chunk]
        t0 = time.perf_counter()
        r.cache.embed(chunk, r.encode, batch_size=r.batch_size, progress=False)
        secs += time.perf_counter() - t0
        done += len(chunk)
        print(f"  {done}/{len(missing)} encoded, {done / secs:.2f} texts/s", flush=True)
    cached = sum(t in r.cache for t in dict.fromkeys(texts))
    prev = (json.loads(OUT.read_text()) if OUT.exists() else {}).get("methods", {}).get(args.name, {}).get("pool", {})
    total_done, total_secs = prev.get("texts_encoded", 0) + done, prev.get("encode_seconds", 0.0) + secs
    _record(args.name, "pool", {
        "method": args.method, "meta": {k: v for k, v in r.metadata().items() if k != "docs"},
        "pool_texts": len(set(texts)), "cached_now": cached, "texts_encoded": total_done,
        "encode_seconds": round(total_secs, 1),
        "texts_per_second": round(total_done / total_secs, 2) if total_secs else None,
        "peak_rss_mb": max(_rss_mb(), prev.get("peak_rss_mb", 0.0)),
        "command": f"python benchmarks/encoders_incite.py encode --name {args.name} --method {args.method} "
                   f"--max-seq-length {args.max_seq_length}"})
    print(f"{args.name}: {cached}/{len(set(texts))} pool texts cached; peak RSS {_rss_mb()} MB", flush=True)


def cmd_latency(args) -> None:
    from mustcite.benchmark import Benchmark

    work = Workspace.resolve()
    r = _retriever(args)
    qs = as_docs(Benchmark.open(work.root / "benchmarks" / args.benchmark).queries("test"), id_key="id")[:args.n]
    t0 = time.perf_counter()
    r.encode([qs[0].text])                 # loads the model
    load_s = time.perf_counter() - t0
    lat = []
    for q in qs:
        t = time.perf_counter()
        r.encode([q.text])
        lat.append(time.perf_counter() - t)
    _record(args.name, "query", {
        "method": args.method, "queries": len(lat), "model_load_seconds": round(load_s, 2),
        "encode_latency_ms": {"median": round(1000 * _pct(lat, 0.5), 1), "p95": round(1000 * _pct(lat, 0.95), 1)},
        "peak_rss_mb": _rss_mb(),
        "command": f"python benchmarks/encoders_incite.py latency --name {args.name} --method {args.method} "
                   f"--max-seq-length {args.max_seq_length}"})
    print(f"{args.name}: median {1000 * _pct(lat, 0.5):.1f} ms per query; peak RSS {_rss_mb()} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("subset")
    s.add_argument("--benchmark", default="neurips-2024")
    s.add_argument("--queries", type=int, default=100)
    s.add_argument("--random", type=int, default=1250)
    s.add_argument("--seed", type=int, default=2024)
    for name in ("encode", "latency"):
        p = sub.add_parser(name)
        p.add_argument("--name", required=True)
        p.add_argument("--method", required=True)
        p.add_argument("--max-seq-length", type=int, default=256)
        p.add_argument("--pooling", default=None, choices=[None, "cls", "mean"])
        p.add_argument("--batch-size", type=int, default=32)
        p.add_argument("--benchmark", default="neurips-2024")
    sub.choices["encode"].add_argument("--minutes", type=float, default=60)
    sub.choices["encode"].add_argument("--chunk", type=int, default=500)
    sub.choices["latency"].add_argument("--n", type=int, default=50)
    args = ap.parse_args()
    {"subset": cmd_subset, "encode": cmd_encode, "latency": cmd_latency}[args.cmd](args)


if __name__ == "__main__":
    main()
