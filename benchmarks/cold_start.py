"""Cold start: wall time and peak RSS of each everyday command from a new process.

Usage::

    python benchmarks/cold_start.py [--before REV] [--model DIR] [--runs 2]
        [--out benchmarks/results/cold_start.json]

Commands, each ``python -m mustcite.cli.main ...`` under ``/usr/bin/time -v`` (peak RSS of the
process), with the model of ``--model`` (default: ``<work>/models/recommender``):

* ``recommend``: one query (``--title`` + ``--abstract`` of a NeurIPS 2024 dev paper, ``--year 2024``);
* ``recommend --queries``: the first 100 NeurIPS 2024 dev queries;
* ``audit markdown``: a NeurIPS 2024 full text (``.md.gz``);
* ``audit latex``: a zipped LaTeX project of 60 references (``audit_latency.make_project``);
* ``serve``: ``mustcite serve`` until ``/api/health`` answers 200 (peak RSS: the server's
  process tree, sampled every 50 ms).

``--before REV`` measures the same commands with the code of git revision ``REV`` too (checked
out into a temporary worktree and put first on ``PYTHONPATH``), in the same run, so the JSON holds
before and after from one machine state. Each command runs once untimed first (the operating
system's file cache warm, any index a version builds at its first load built), then ``--runs``
times; the median run is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from audit_latency import make_project, pick_papers
from bounded_inputs import measure
from common import free_port

ROOT = Path(__file__).resolve().parents[1]


def _queries(n: int) -> list[dict]:
    from mustcite.benchmark import Benchmark
    from mustcite.config import Workspace
    from mustcite.retrieval import read_queries

    b = Benchmark.open(Workspace.resolve().root / "benchmarks" / "neurips-2024")
    return [{"id": d.id, "title": d.title, "abstract": d.abstract, "year": 2024}
            for d in read_queries(b.queries_file("dev"))][:n]


def _inputs(tmp: Path) -> dict[str, Path | dict]:
    from mustcite.config import Workspace, find_data_dir

    work = Workspace.resolve().root
    qs = _queries(100)
    (tmp / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8")
    md = sorted((find_data_dir() / "neurips" / "fulltext_2024").glob("*.md.gz"))[0]
    meta, refs = pick_papers(work / "extract", 1)[0]
    return {"query": qs[0], "queries": tmp / "queries.jsonl", "markdown": md,
            "latex": make_project(meta, refs, tmp / "project")}


def _commands(inp: dict, model: Path, tmp: Path) -> dict[str, list[str]]:
    q = inp["query"]
    return {
        "recommend": ["recommend", "--title", q["title"], "--abstract", q["abstract"], "--year", "2024",
                      "--model", str(model)],
        "recommend --queries (100)": ["recommend", "--queries", str(inp["queries"]), "--model", str(model),
                                      "--format", "json", "--out", str(tmp / "out.json")],
        "audit markdown": ["audit", str(inp["markdown"]), "--model", str(model)],
        "audit latex (60 references)": ["audit", str(inp["latex"]), "--model", str(model)],
    }


def _serve(env: dict, model: Path, timeout: float = 600) -> dict:
    """Seconds until ``/api/health`` is 200 from a new ``serve`` process, and its tree's peak RSS."""
    import httpx
    import psutil

    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "mustcite.cli.main", "serve", "--port", str(port),
                             "--model", str(model)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak, ready = 0.0, None
    try:
        while time.perf_counter() - t0 < timeout and proc.poll() is None:
            try:
                tree = [psutil.Process(proc.pid)] + psutil.Process(proc.pid).children(recursive=True)
                peak = max(peak, sum(p.memory_info().rss for p in tree) / 2**20)
            except psutil.Error:
                pass
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                    ready = time.perf_counter() - t0
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    return {"exit_code": 0 if ready is not None else proc.returncode, "seconds": round(ready, 2) if ready else None,
            "peak_rss_mb": round(peak, 1), "stderr": err.decode("utf-8", "replace")[-2000:]}


def _median_run(runs: list[dict]) -> dict:
    ok = [r for r in runs if r.get("seconds") is not None]
    best = sorted(ok, key=lambda r: r["seconds"])[len(ok) // 2] if ok else runs[-1]
    return {"seconds": best["seconds"], "peak_rss_mb": best["peak_rss_mb"], "exit_code": best["exit_code"],
            "all_seconds": [r.get("seconds") for r in runs],
            "stderr_lines": [ln for ln in (best.get("stderr") or "").splitlines() if ln.strip()][-8:]}


def _measure_version(label: str, src: Path, inp: dict, model: Path, tmp: Path, runs: int) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(src))
    out: dict[str, dict] = {}
    for name, args in _commands(inp, model, tmp).items():
        argv = [sys.executable, "-m", "mustcite.cli.main", *args]
        measure(argv, env=env, timeout=900)                     # untimed: caches warm
        out[name] = _median_run([measure(argv, env=env, timeout=900) for _ in range(runs)])
        print(f"{label:7s} {name:30s} {out[name]['seconds']:>7} s {out[name]['peak_rss_mb']:>8} MB "
              f"exit {out[name]['exit_code']}", file=sys.stderr)
    _serve(env, model)
    out["serve (until /api/health)"] = _median_run([_serve(env, model) for _ in range(runs)])
    print(f"{label:7s} {'serve':30s} {out['serve (until /api/health)']['seconds']:>7} s", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="git revision to measure too (the code before a change)")
    ap.add_argument("--model", type=Path, help="model folder (default: <work>/models/recommender)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "cold_start.json")
    args = ap.parse_args(argv)
    from mustcite.config import Workspace

    model = (args.model or Workspace.resolve().root / "models" / "recommender").resolve()
    report: dict = {"model": str(model), "machine": platform.platform(), "cpus": os.cpu_count(),
                    "python": sys.version.split()[0], "runs": args.runs, "versions": {}}
    with tempfile.TemporaryDirectory(prefix="mustcite-cold-") as d:
        tmp = Path(d)
        inp = _inputs(tmp)
        versions = {"after": ROOT / "src"}
        if args.before:
            tree = tmp / "before"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), args.before],
                           check=True)
            versions = {"before": tree / "src", **versions}
            report["before_rev"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", args.before],
                                                  capture_output=True, text=True).stdout.strip()
        report["after_rev"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                                             capture_output=True, text=True).stdout.strip()
        try:
            for label, src in versions.items():
                report["versions"][label] = _measure_version(label, src, inp, model, tmp, args.runs)
        finally:
            if args.before:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tmp / "before")])
    if "before" in report["versions"]:
        b, a = report["versions"]["before"], report["versions"]["after"]
        report["speedup"] = {k: round(b[k]["seconds"] / a[k]["seconds"], 1)
                             for k in a if b[k]["seconds"] and a[k]["seconds"]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "versions"}, indent=1))
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
