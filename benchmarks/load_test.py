"""Load test of ``mustcite serve``: N requests from C concurrent clients, old setting vs new, one run.

Usage::

    python benchmarks/load_test.py [--model DIR] [--requests 300] [--clients 20]
        [--settings old,new] [--out benchmarks/results/load_test.json]

Each setting starts a real server (``mustcite serve`` in a subprocess, loopback only), waits for
``/api/health``, warms it up, measures one client alone (p50), then sends ``--requests`` POST
/api/recommend from ``--clients`` concurrent httpx clients (each a keep-alive connection) and
records throughput, p50/p95/max latency, status codes and the server's memory (RSS of every
server process, summed, after the run). Settings:

* ``old``: one process computing one request at a time with an unbounded queue (what the server
  did before: one global lock);
* ``new``: ``--workers 2`` (two worker processes, one per core, each loading the model once;
  requests wait in one queue for the next free worker);
* ``new-threads``: one process, ``--concurrency 2`` (two requests compute at once in threads).

Queries: the titles + abstracts of a benchmark split (default neurips-2024 dev), cycled.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import free_port, percentile, stop_server

SETTINGS = {
    "old": ["--workers", "1", "--concurrency", "1", "--queue", "10000"],
    "new": ["--workers", "2"],
    "new-threads": ["--workers", "1", "--concurrency", "2"],
}


def _tree_rss_mb(pid: int) -> float:
    """RSS of ``pid`` and its descendants (MB), from /proc."""
    import psutil

    try:
        p = psutil.Process(pid)
        procs = [p] + p.children(recursive=True)
        return round(sum(x.memory_info().rss for x in procs) / 2**20, 1)
    except psutil.Error:
        return float("nan")


def _queries(bench: str, split: str, n: int) -> list[dict]:
    from mustcite.benchmark import Benchmark
    from mustcite.config import Workspace
    from mustcite.retrieval import read_queries

    b = Benchmark.open(Workspace.resolve().root / "benchmarks" / bench)
    qs = [{"title": d.title, "abstract": d.abstract, "top": 20, "year": 2024}
          for d in read_queries(b.queries_file(split))]
    return [qs[i % len(qs)] for i in range(n)]


async def _drive(url: str, queries: list[dict], clients: int) -> dict:
    import httpx

    todo: asyncio.Queue = asyncio.Queue()
    for q in queries:
        todo.put_nowait(q)
    lat: list[float] = []
    codes: dict[int, int] = {}
    errors: list[str] = []

    async def client() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=120) as c:
            while True:
                try:
                    q = todo.get_nowait()
                except asyncio.QueueEmpty:
                    return
                t0 = time.perf_counter()
                try:
                    r = await c.post("/api/recommend", json=q)
                    codes[r.status_code] = codes.get(r.status_code, 0) + 1
                    if r.status_code == 200:
                        lat.append(time.perf_counter() - t0)
                    else:
                        errors.append(f"{r.status_code}: {r.text[:200]}")
                except httpx.HTTPError as exc:
                    errors.append(f"{exc.__class__.__name__}: {exc}")

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - t0
    return {"requests": len(queries), "clients": clients, "wall_s": round(wall, 2),
            "throughput_rps": round(len(lat) / wall, 2), "ok": len(lat), "errors": len(errors),
            "status": {str(k): v for k, v in sorted(codes.items())}, "error_samples": errors[:5],
            "p50_ms": round(1000 * statistics.median(lat), 1) if lat else None,
            "p95_ms": round(1000 * percentile(lat, 0.95), 1) if lat else None,
            "max_ms": round(1000 * max(lat), 1) if lat else None}


def _run_setting(name: str, args, queries: list[dict]) -> dict:
    import httpx

    port = free_port()
    cmd = [sys.executable, "-m", "mustcite.cli.main", "serve", "--port", str(port), *SETTINGS[name]]
    if args.model:
        cmd += ["--model", str(args.model)]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    log = open(args.out.with_suffix(f".{name}.log"), "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    workers = int(SETTINGS[name][SETTINGS[name].index("--workers") + 1])
    url = f"http://127.0.0.1:{port}"
    try:
        t0 = time.perf_counter()
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"{name}: the server exited (see {log.name})")
            # every worker process logs "model loaded" once its model is in memory
            if Path(log.name).read_text().count("mustcite: model loaded") >= workers:
                break
            if time.perf_counter() - t0 > args.load_timeout:
                raise SystemExit(f"{name}: the model did not load in {args.load_timeout} s")
            time.sleep(1)
        load_s = round(time.perf_counter() - t0, 1)
        if httpx.get(url + "/api/health", timeout=10).status_code != 200:
            raise SystemExit(f"{name}: /api/health is not 200 after loading (see {log.name})")
        asyncio.run(_drive(url, queries[:20], 4))             # warm-up (every worker, every cache)
        single = asyncio.run(_drive(url, queries[:args.single], 1))
        loaded = asyncio.run(_drive(url, queries, args.clients))
        rss = _tree_rss_mb(proc.pid)
        return {"setting": name, "argv": SETTINGS[name], "ready_after_s": load_s, "rss_mb_all_processes": rss,
                "one_client": {k: single[k] for k in ("requests", "p50_ms", "p95_ms", "throughput_rps", "errors")},
                "loaded": loaded}
    finally:
        stop_server(proc, log)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, help="model folder (default: the server's default model)")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--single", type=int, default=30, help="requests of the one-client measurement")
    ap.add_argument("--settings", default="old,new")
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--load-timeout", type=float, default=600)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "load_test.json")
    args = ap.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    queries = _queries(args.benchmark, args.split, args.requests)
    results = {}
    for name in args.settings.split(","):
        print(f"== {name}", file=sys.stderr)
        results[name] = _run_setting(name, args, queries)
        print(json.dumps(results[name]["loaded"]), file=sys.stderr)
    out = {"benchmark": f"{args.benchmark} {args.split} queries (title + abstract, top 20, year 2024)",
           "model": str(args.model) if args.model else "default", "machine": platform.platform(),
           "cpus": os.cpu_count(), "settings": results}
    if "old" in results:
        base = results["old"]["loaded"]["throughput_rps"]
        out["throughput_vs_old"] = {k: round(v["loaded"]["throughput_rps"] / base, 2) for k, v in results.items()}
    from mustcite.io import atomic_write_json

    atomic_write_json(args.out, out)
    print(json.dumps({k: out[k] for k in out if k != "settings"}, indent=1))
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
