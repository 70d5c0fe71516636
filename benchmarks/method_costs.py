#!/usr/bin/env python
"""Training, pool-encoding and test-run cost of every method of the baselines table (seconds and
peak memory) -> benchmarks/results/method_costs.{json,md}.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/method_costs.py [--only NAME ...]

For each method, measured here, each in its own child process so that its peak RSS is its own
(``os.wait4``'s ``ru_maxrss``):
- **test run**: the method's ``mustcite benchmark run --split test`` (``mustcite recommend`` for
  mustcite) over the 257 test queries, with the pool's vectors, token vectors and indexes already
  in the caches (so: model load + query encoding + search + writing the run; tag ``costs-<tag>``, the
  table's own runs are not touched);
- **pool encoding** (encoders only): ``--sample`` pool texts encoded without the cache, in the
  order of the pool file, as texts/s and the full-pool time that rate implies.
Training time (and training peak RSS where the trainer recorded it) is read from the model's own
training card (or, for a training run before cards recorded memory, from the GNU ``time -v`` report
kept in ``benchmarks/results/gnu_time/``); every figure read rather than measured names its file;
``null`` where the training predates both. The ColBERT rows' test runs
are not re-run by default (25 min for the 384-d model); their figures come from colbert.json
(``benchmarks/colbert.py``: re-ranking BM25's top 50, and the full-pool exhaustive MaxSim search
of all test queries); ``--colbert`` also measures the ColBERT-NTX
row as ``mustcite benchmark run`` runs it (re-ranking BM25's top 100) under ``cli_run_rerank_top100``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "mustcite-work"
BENCH = WORK / "benchmarks" / "neurips-2024"
MODELS = WORK / "models"
RESULTS = ROOT / "benchmarks" / "results"
OUT = RESULTS / "method_costs"
CLI = [sys.executable, "-m", "mustcite"]


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


def _read(path: Path, *keys):
    """``path``'s JSON at ``keys`` with the file it came from, or None where either is missing."""
    if not path.exists():
        return None
    value = json.loads(path.read_text())
    for k in keys:
        if not isinstance(value, dict) or k not in value:
            return None
        value = value[k]
    return {"value": value, "source": _rel(path) + ("" if not keys else ": " + ".".join(keys))}


def _gnu_time_rss(path: Path) -> dict | None:
    """Peak RSS from a GNU ``/usr/bin/time -v`` report (for trainings run before cards recorded it)."""
    if not path.exists():
        return None
    for line in path.read_text().splitlines():
        if "Maximum resident set size (kbytes)" in line:
            return {"value": round(int(line.rsplit(":", 1)[1]) / 1024, 1), "source": _rel(path)}
    return None


def _card_training(card: Path, seconds_keys: tuple, rss_keys: tuple | None = ("peak_rss_mb",),
                   gnu_time: Path | None = None) -> dict:
    seconds = _read(card, *seconds_keys)
    rss = (_read(card, *rss_keys) if rss_keys else None) or (gnu_time and _gnu_time_rss(gnu_time))
    return {"seconds": seconds and seconds["value"], "peak_rss_mb": rss and rss["value"],
            "source": "; ".join(x["source"] for x in (seconds, rss) if x) or None}


# per method: display name, run tag, `benchmark run` spec (None: measured another way), max tokens,
# the encoder for the uncached pool sample (bi-encoders only), where its training figures come from
METHODS = [
    {"name": "BM25", "tag": "bm25", "method": "bm25", "training": None},
    {"name": "MiniLM (int8, 64 tok)", "tag": "minilm-int8-64", "method": "onnx-int8:minilm", "max_len": 64,
     "encoder": "onnx-int8:minilm",
     "training": lambda: {"seconds": (_read(BENCH / "runs/minilm-int8-64.test.meta.json", "onnx", "export_seconds")
                                      or {}).get("value"), "peak_rss_mb": None,
                          "what": "ONNX export + dynamic int8 quantisation, no training",
                          "source": _rel(BENCH / "runs/minilm-int8-64.test.meta.json") + ": onnx.export_seconds"}},
    {"name": "MiniLM (256 tok)", "tag": "minilm-256", "method": "minilm", "max_len": 256, "encoder": "minilm",
     "training": None},
    {"name": "MiniLM (128 tok)", "tag": "minilm-128", "method": "minilm", "max_len": 128, "encoder": "minilm",
     "training": None},
    {"name": "MiniLM-NTX (128 tok)", "tag": "minilm-ntx", "method": str(MODELS / "minilm-ntx"), "max_len": 128,
     "encoder": str(MODELS / "minilm-ntx"),
     "training": lambda: _card_training(MODELS / "minilm-ntx/training_card.json", ("seconds",),
                                        gnu_time=RESULTS / "gnu_time/minilm-ntx.train.txt")},
    {"name": "inCite-MiniLM (512 tok)", "tag": "incite-minilm", "method": "onnx:.models/incite-minilm-onnx",
     "max_len": 512, "encoder": "onnx:.models/incite-minilm-onnx",
     "training": None},
    {"name": "ColBERT (rerank BM25@50)", "tag": "colbert", "method": None,
     "from": ("colbert.json", "rows", "colbert"), "training": None},
    {"name": "ColBERT-NTX (rerank BM25@50)", "tag": "colbert-ntx", "method": f"colbert-rerank:{MODELS / 'colbert-ntx'}",
     "from": ("colbert.json", "rows", "colbert-ntx"),
     "training": lambda: _card_training(MODELS / "colbert-ntx/training_card.json", ("seconds",))},
    {"name": "ColBERT (full pool)", "tag": "colbert-exact", "method": None,
     "from": ("colbert.json", "rows", "colbert-exact"), "training": None},
    {"name": "ColBERT-NTX (full pool)", "tag": "colbert-ntx-exact", "method": None,
     "from": ("colbert.json", "rows", "colbert-ntx-exact"),
     "training": lambda: _card_training(MODELS / "colbert-ntx/training_card.json", ("seconds",))},
    {"name": "BM25 + cross-encoder (rerank @50)", "tag": "rerank-bm25-listwise-1000",
     "method": f"rerank:{MODELS / 'rerank-bm25-listwise-1000'}",
     "training": lambda: _card_training(MODELS / "rerank-bm25-listwise-1000/rerank_model.json",
                                        ("card", "fit_seconds"), ("card", "peak_rss_mb"))},
    {"name": "KTR-PPR", "tag": "ppr", "method": "ppr",
     "training": lambda: {"seconds": (_read(RESULTS / "graph_methods.json", "graph", "build_seconds")
                                      or {}).get("value"),
                          "peak_rss_mb": (_read(RESULTS / "graph_methods.json", "ppr", "peak_rss_mb")
                                          or {}).get("value"),
                          "what": "graph build (no learnt weights)",
                          "source": _rel(RESULTS / "graph_methods.json") + ": graph.build_seconds, ppr.peak_rss_mb"}},
    {"name": "GNN (AR-GNN/LitFM-like)", "tag": "gnn", "method": "gnn",
     "training": lambda: {"seconds": (_read(MODELS / "graph-gnn/graph_model.json", "card", "train", "seconds")
                                      or {}).get("value"),
                          "peak_rss_mb": (_read(RESULTS / "graph_methods.json", "gnn", "peak_rss_mb")
                                          or {}).get("value"),
                          "what": "GNN training after the graph build",
                          "source": _rel(MODELS / "graph-gnn/graph_model.json") + ": card.train.seconds; "
                          + _rel(RESULTS / "graph_methods.json") + ": gnn.peak_rss_mb"}},
    {"name": "mustcite", "tag": "mustcite", "method": None, "recommend": str(MODELS / "bench-neurips-2024"),
     "training": lambda: _card_training(MODELS / "bench-neurips-2024/card.json", ("train_seconds",),
                                        ("train_peak_rss_mb",))},
]


def _child(argv: list[str], log: Path) -> dict:
    """Run ``argv`` as a child process; wall seconds, its peak RSS, exit code."""
    t0 = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    return {"seconds": round(time.perf_counter() - t0, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "rc": os.waitstatus_to_exitcode(status), "load_1min_after": round(os.getloadavg()[0], 2),
            "command": " ".join(argv[2:] if argv[:2] == CLI[:2] else argv)}


def _test_run(m: dict, logs: Path) -> dict | None:
    if m.get("recommend"):
        argv = CLI + ["recommend", "--model", m["recommend"], "--queries", str(BENCH / "queries/test.jsonl"),
                      "--format", "trec", "--top", "100", "--out", str(BENCH / "runs/costs-mustcite.test.trec")]
    elif m["method"]:
        argv = CLI + ["benchmark", "run", "--method", m["method"], "--split", "test", "--tag", f"costs-{m['tag']}"]
        if m.get("max_len"):
            argv += ["--max-seq-length", str(m["max_len"])]
    else:
        return None
    out = _child(argv, logs / f"{m['tag']}.log")
    out["queries"] = sum(1 for line in (BENCH / "queries/test.jsonl").open() if line.strip())
    return out


def _pool_encoding(m: dict, sample: int, logs: Path) -> dict | None:
    if m.get("encoder"):
        argv = [sys.executable, __file__, "encode-sample", "--encoder", m["encoder"],
                "--max-seq-length", str(m["max_len"]), "--sample", str(sample)]
        run = _child(argv, logs / f"{m['tag']}.encode.log")
        lines = (logs / f"{m['tag']}.encode.log").read_text().strip().splitlines()
        if run["rc"] != 0 or not lines:
            return {**run, "error": "see " + str(logs / f"{m['tag']}.encode.log")}
        return {**json.loads(lines[-1]), "peak_rss_mb": run["peak_rss_mb"], "process_seconds": run["seconds"],
                "load_1min_after": run["load_1min_after"]}
    if m.get("from"):
        rate = _read(RESULTS / m["from"][0], "encode_rate_docs_per_s")
        cache = _read(RESULTS / m["from"][0], "token_cache")
        if rate:
            pool = _pool_size()
            return {"texts_per_second": rate["value"], "full_pool_minutes": round(pool / rate["value"] / 60, 1),
                    "pool_texts": pool, "source": rate["source"],
                    "note": "MiniLM token vectors (both rows: ColBERT-NTX keeps MiniLM frozen and projects them), "
                            "float16, cached once per text"
                            + (f"; {cache['value'].get('docs')} texts take "
                               f"{cache['value'].get('bytes_on_disk'):,} bytes"
                               if cache else "")}
    return None


def _pool_size() -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(BENCH / "pool.parquet").metadata.num_rows


def encode_sample(args) -> None:
    """Child: encode the first ``--sample`` pool texts with the encoder, no cache; print one JSON line."""
    import pyarrow.parquet as pq

    from mustcite.retrieval import doc_text, make_retriever
    pool = pq.read_table(BENCH / "pool.parquet", columns=["title", "abstract"]).to_pylist()
    texts = [doc_text(r["title"], r["abstract"]) for r in pool[:args.sample]]
    t0 = time.perf_counter()
    retriever = make_retriever(args.encoder, max_seq_length=args.max_seq_length)
    retriever.encode(texts[:8])  # model load and first batch outside the timed rate
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    retriever.encode(texts)
    secs = time.perf_counter() - t0
    print(json.dumps({"texts": len(texts), "seconds": round(secs, 1), "load_seconds": round(load, 1),
                      "texts_per_second": round(len(texts) / secs, 2), "pool_texts": len(pool),
                      "full_pool_minutes": round(len(pool) / (len(texts) / secs) / 60, 1)}))


def _markdown(res: dict) -> str:
    lines = ["| method | training s | training peak MiB | pool texts/s | full pool min | encode peak MiB "
             "| test run s (257 q, warm caches) | test run peak MiB |", "|---|---:|---:|---:|---:|---:|---:|---:|"]

    def f(v):
        return "-" if v is None else (f"{v:,.1f}" if isinstance(v, float) else f"{v:,}")
    for name, r in res["methods"].items():
        tr, pe, ru = r.get("training") or {}, r.get("pool_encoding") or {}, r.get("test_run") or {}
        lines.append(f"| {name} | {f(tr.get('seconds'))} | {f(tr.get('peak_rss_mb'))} | "
                     f"{f(pe.get('texts_per_second'))} | {f(pe.get('full_pool_minutes'))} | "
                     f"{f(pe.get('peak_rss_mb'))} | {f(ru.get('seconds'))} | {f(ru.get('peak_rss_mb'))} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    enc = sub.add_parser("encode-sample")
    enc.add_argument("--encoder", required=True)
    enc.add_argument("--max-seq-length", type=int, required=True)
    enc.add_argument("--sample", type=int, default=500)
    ap.add_argument("--sample", type=int, default=500, help="pool texts encoded uncached per encoder")
    ap.add_argument("--only", nargs="*", help="method names (or tags) to measure; the others keep their figures")
    ap.add_argument("--colbert", action="store_true", help="also re-run the ColBERT-NTX test run")
    args = ap.parse_args()
    if args.cmd == "encode-sample":
        return encode_sample(args)
    logs = WORK / "cache" / "method_costs"
    logs.mkdir(parents=True, exist_ok=True)
    res = json.loads(OUT.with_suffix(".json").read_text()) if OUT.with_suffix(".json").exists() else {"methods": {}}
    for m in METHODS:
        if args.only and m["name"] not in args.only and m["tag"] not in args.only:
            continue
        print(f"{m['name']} ...", file=sys.stderr, flush=True)
        row = {"training": m["training"]() if m["training"] else {"seconds": 0, "what": "no training"},
               "pool_encoding": _pool_encoding(m, args.sample, logs)}
        if m.get("from"):
            src = _read(RESULTS / m["from"][0], *m["from"][1:])
            key = "search_s_all_queries" if "search_s_all_queries" in (src or {}).get("value", {}) \
                else "rerank_s_all_queries"
            row["test_run"] = src and {"seconds": src["value"].get(key), "peak_rss_mb": None,
                                       "source": f"{src['source']}.{key}"}
            if args.colbert and m["method"]:
                row["cli_run_rerank_top100"] = _test_run(m, logs)
            elif "cli_run_rerank_top100" in res["methods"].get(m["name"], {}):
                row["cli_run_rerank_top100"] = res["methods"][m["name"]]["cli_run_rerank_top100"]
        else:
            row["test_run"] = _test_run(m, logs)
        res["methods"][m["name"]] = row
    order = [m["name"] for m in METHODS]
    res["methods"] = dict(sorted(res["methods"].items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99))
    res["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                      "load_average_1min_at_end": round(os.getloadavg()[0], 2),
                      "note": "2 shared CPU cores; other jobs may run at the same time, so seconds are upper bounds"}
    res["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    OUT.with_suffix(".json").write_text(json.dumps(res, indent=1) + "\n")
    OUT.with_suffix(".md").write_text(_markdown(res))
    print(_markdown(res))


if __name__ == "__main__":
    main()
