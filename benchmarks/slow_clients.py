"""Slow and idle clients against ``mustcite serve``: how long the server holds them, and what they
cost a normal request.

Usage::

    python benchmarks/slow_clients.py [--model DIR] [--sockets 300] [--settings new,old]
        [--header-timeout 10] [--observe 30] [--out benchmarks/results/slow_clients.json]

Each setting starts a real server in a subprocess on 127.0.0.1:

* ``new``: the server's limits (:class:`mustcite.api.timeouts.Timeouts`, ``--header-timeout``);
* ``old``: plain uvicorn as the server ran before (only its keep-alive timeout).

With ``--model`` (default: the model ``mustcite serve`` uses, when there is one) the server loads that
model and the normal requests include POST /api/recommend; without one the server's model never
finishes loading and the normal request is GET /api/health (answered 503 "loading" at once, which
still goes through the whole HTTP and middleware path).

Per setting, two runs: ``--sockets`` connections that send nothing (``idle``), then as many that
send half a request head and stall (``half_sent``). Recorded: when the server closed each one
(seconds after it connected; connections still open after ``--observe`` s are counted as held),
how many got a 408, and the latency of normal requests (each on a new connection) with no slow
clients and again while the slow ones are held.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import free_port, percentile, stop_server

HALF_REQUEST = b"POST /api/recommend HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Slow: "
QUERY = {"title": "Graph neural networks for citation recommendation",
         "abstract": "We learn which prior papers a new paper must cite, using the citation graph and "
                     "the text of titles and abstracts, and evaluate on recent conference papers.",
         "top": 20, "year": 2024}


def _child(port: int, model: str, setting: str, header_timeout: float) -> None:
    """The server process: ``new`` serves exactly as ``mustcite serve`` does."""
    import threading

    import uvicorn

    from mustcite.api import ServeSettings, Timeouts, build_app, create_app
    from mustcite.config import Workspace

    settings = ServeSettings(model=model, work=str(Workspace.resolve().root), timeouts=Timeouts(header=header_timeout))
    app = build_app(settings) if model else create_app(loader=threading.Event().wait)   # never loads
    options = settings.timeouts.uvicorn_options() if setting == "new" else {}
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", **options)


def _start(setting: str, args, log) -> tuple[subprocess.Popen, str]:
    import httpx

    port = free_port()
    cmd = [sys.executable, __file__, "--child", str(port), "--setting", setting,
           "--header-timeout", str(args.header_timeout)] + (["--model", str(args.model)] if args.model else [])
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    url = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"{setting}: the server exited (see {log.name})")
        try:
            r = httpx.get(url + "/api/health", timeout=5)
            if r.status_code == 200 or not args.model:
                return proc, url
        except httpx.HTTPError:
            pass
        if time.perf_counter() - t0 > args.load_timeout:
            raise SystemExit(f"{setting}: not ready in {args.load_timeout} s (see {log.name})")
        time.sleep(0.5)


async def _normal(url: str, n: int, with_model: bool) -> dict:
    """``n`` normal requests one after another, each on a new connection: latency and status codes."""
    import httpx

    out = {}
    kinds = [("GET /api/health", "GET", "/api/health", None)]
    if with_model:
        kinds.append(("POST /api/recommend", "POST", "/api/recommend", QUERY))
    for name, method, path, body in kinds:
        lat, codes = [], {}
        for _ in range(n):
            async with httpx.AsyncClient(base_url=url, timeout=30) as c:
                t0 = time.perf_counter()
                try:
                    r = await c.request(method, path, json=body)
                    codes[str(r.status_code)] = codes.get(str(r.status_code), 0) + 1
                    lat.append(time.perf_counter() - t0)
                except httpx.HTTPError as exc:
                    codes[exc.__class__.__name__] = codes.get(exc.__class__.__name__, 0) + 1
        out[name] = {"requests": n, "status": codes,
                     "p50_ms": round(1000 * statistics.median(lat), 2) if lat else None,
                     "p95_ms": round(1000 * percentile(lat, 0.95), 2) if lat else None,
                     "max_ms": round(1000 * max(lat), 2) if lat else None}
    return out


async def _slow_run(url: str, kind: str, args) -> dict:
    """Open ``args.sockets`` slow connections; time when the server closes each; meanwhile measure
    normal requests."""
    host, port = url.rsplit("/", 1)[1].split(":")

    async def one() -> tuple[float | None, bool, str | None]:
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
        except OSError as exc:
            return None, False, exc.__class__.__name__
        t0 = time.perf_counter()
        got = b""
        try:
            if kind == "half_sent":
                writer.write(HALF_REQUEST)
                await writer.drain()
            while True:
                chunk = await asyncio.wait_for(reader.read(65536), timeout=args.observe - (time.perf_counter() - t0))
                if not chunk:
                    return time.perf_counter() - t0, got.startswith(b"HTTP/1.1 408 "), None
                got += chunk
        except TimeoutError:
            return None, False, None                # still held when we stopped watching
        except ConnectionError:
            return time.perf_counter() - t0, got.startswith(b"HTTP/1.1 408 "), None
        finally:
            writer.close()

    tasks = [asyncio.create_task(one()) for _ in range(args.sockets)]
    await asyncio.sleep(0.5)                        # every slow connection open (and half a request sent)
    during = await _normal(url, args.requests, bool(args.model))
    results = await asyncio.gather(*tasks)
    closed = [t for t, _, err in results if t is not None]
    errors = [err for _, _, err in results if err]
    return {"sockets": args.sockets, "closed_by_server": len(closed),
            "still_held_after_observe_s": sum(1 for t, _, err in results if t is None and not err),
            "connect_errors": len(errors),
            "got_408": sum(1 for _, g, _ in results if g),
            "closed_after_s": {"min": round(min(closed), 3), "p50": round(statistics.median(closed), 3),
                               "max": round(max(closed), 3)} if closed else None,
            "normal_requests_while_held": during}


def _setting(setting: str, args) -> dict:
    log = open(args.out.with_suffix(f".{setting}.log"), "w")
    proc, url = _start(setting, args, log)
    try:
        asyncio.run(_normal(url, args.requests, bool(args.model)))   # warm-up
        out = {"baseline_no_slow_clients": asyncio.run(_normal(url, args.requests, bool(args.model)))}
        for kind in ("idle", "half_sent"):
            print(f"== {setting} {kind}", file=sys.stderr)
            out[kind] = asyncio.run(_slow_run(url, kind, args))
            print(json.dumps({k: v for k, v in out[kind].items() if k != "normal_requests_while_held"}),
                  file=sys.stderr)
            time.sleep(1)
        return out
    finally:
        stop_server(proc, log)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, help="model folder (default: the one `mustcite serve` uses, if trained)")
    ap.add_argument("--no-model", action="store_true", help="serve without a model (its load never finishes)")
    ap.add_argument("--sockets", type=int, default=300)
    ap.add_argument("--requests", type=int, default=20, help="normal requests per measurement")
    ap.add_argument("--settings", default="new,old")
    ap.add_argument("--header-timeout", type=float, default=10.0)
    ap.add_argument("--observe", type=float, default=30.0, help="seconds to watch each slow connection")
    ap.add_argument("--load-timeout", type=float, default=600)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "slow_clients.json")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--setting", default="new", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child, str(args.model or ""), args.setting, args.header_timeout)
        return 0
    if args.no_model:
        args.model = None
    elif args.model is None:
        from mustcite.config import Workspace
        from mustcite.recommend import default_model

        folder = default_model(Workspace.resolve().root)
        args.model = folder if (folder / "config.json").exists() else None

    need = 2 * args.sockets + 256                    # the slow sockets, the normal requests, the rest
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    args.out.parent.mkdir(parents=True, exist_ok=True)

    results = {name: _setting(name, args) for name in args.settings.split(",")}
    from mustcite.api import Timeouts

    limits = Timeouts(header=args.header_timeout)
    out = {"model": str(args.model) if args.model else "none (the model never finishes loading: GET /api/health only)",
           "sockets": args.sockets, "observe_s": args.observe,
           "limits_new": {"header_s": limits.header, "body_gap_s": limits.body, "body_total_s": limits.body_total,
                          "keep_alive_s": limits.keep_alive, "max_connections": limits.max_connections},
           "machine": platform.platform(), "cpus": os.cpu_count(),
           "fd_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0], "settings": results}
    from mustcite.io import atomic_write_json

    atomic_write_json(args.out, out)
    print(json.dumps(out, indent=1))
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
