"""Time order through the CLI: `mustcite recommend --year Y` never returns a paper after Y.

Runs the documented contract (``mustcite recommend --queries FILE.jsonl --format json``) with
``--year`` on ``--n`` queries (default 50 dev queries of the built benchmark, title + abstract,
their own ``"year"`` removed so that ``--year`` decides), reads every result's year and counts
results after ``Y`` (must be 0) and results of unknown year (must be 0: a pool paper of unknown year
is never eligible). So that the check cannot pass for want of later papers, it also reports how
many pool papers of the model are after ``Y``. Writes ``benchmarks/results/year_check.json``.

    python benchmarks/year_check.py [--year 2021] [--model DIR] [--n 50] [--top 100]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from mustcite.benchmark import Benchmark  # noqa: E402
from mustcite.config import Workspace  # noqa: E402

OUT = Path(__file__).parent / "results" / "year_check.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--year", type=int, default=2021)
    ap.add_argument("--model", type=Path, help="model folder (default: the default model)")
    ap.add_argument("--benchmark", default="neurips-2024", help="where the queries come from")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--top", type=int, default=100)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    import pyarrow.parquet as pq

    from mustcite.recommend import default_model

    model = args.model or default_model()
    bench = Benchmark.open(Workspace.resolve().root / "benchmarks" / args.benchmark)
    queries = [{"id": str(q["id"]), "title": q.get("title") or "", "abstract": q.get("abstract") or ""}
               for q in bench.queries(args.split)][: args.n]
    pool_years = pq.read_table(Path(model) / "pool.parquet", columns=["year"]).column("year").to_pylist()
    later_in_pool = sum(1 for y in pool_years if y is not None and y > args.year)
    with tempfile.TemporaryDirectory() as tmp:
        qpath = Path(tmp) / "queries.jsonl"
        qpath.write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
        cmd = [str(Path(sys.executable).with_name("mustcite")), "recommend", "--queries", str(qpath),
               "--format", "json", "--top", str(args.top), "--year", str(args.year), "--model", str(model)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        return 1
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    years = Counter(r.get("year") for obj in lines for r in obj["results"])
    after = sum(n for y, n in years.items() if y is not None and y > args.year)
    unknown = years.get(None, 0)
    report = {
        "command": " ".join(["mustcite"] + cmd[1:]).replace(str(qpath), "QUERIES.jsonl"),
        "model": str(model), "year": args.year, "queries": len(queries), "top": args.top,
        "answered_year": sorted({obj.get("year") for obj in lines}, key=str),
        "results": sum(years.values()), "results_after_year": after, "results_unknown_year": unknown,
        "pool_papers": len(pool_years), "pool_papers_after_year": later_in_pool,
        "result_years": {str(y): n for y, n in sorted(years.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))},
        "ok": after == 0 and unknown == 0 and len(lines) == len(queries),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "result_years"}, indent=1))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
