#!/usr/bin/env python
"""Peer system inCite (incite-app 0.1.3, Apache-2.0), run as a user would, over our benchmark pool
-> a TREC run + benchmarks/results/peer_incite.json.

inCite runs in its own environment (it must not share mustcite's), installed as
``../shared/dependencies.md`` says::

    python3.11 -m venv .venvs/incite
    .venvs/incite/bin/pip install torch==2.13.0
    .venvs/incite/bin/pip install --no-deps incite-app==0.1.3
    .venvs/incite/bin/pip install "bibtexparser>=2.0.0b1" faiss-cpu nltk rank-bm25 rapidfuzz \\
        onnxruntime optimum optimum-onnx transformers tokenizers
    .venvs/incite/bin/pip install pyarrow      # only to read our pool.parquet (not used by inCite)

    HF_HUB_OFFLINE=1 .venvs/incite/bin/python benchmarks/peer_incite.py --split test
    HF_HUB_OFFLINE=1 .venvs/incite/bin/python benchmarks/peer_incite.py --split dev     # reuses the index

What it does, with inCite's defaults throughout (a peer is run, not tuned):

* exports the pool (``pool.parquet``: paper_id, title, abstract, venue, year) to the corpus JSONL
  inCite's ``load_corpus`` reads (``id``, ``title``, ``abstract``, ``year``, ``journal`` = venue;
  the pool has no authors);
* ``InCiteAgent.from_corpus(jsonl, method="hybrid", embedder_type="minilm-ft-onnx")``: inCite's
  citation-tuned MiniLM (ONNX, mean pooling, L2, max 512 tokens) over ``"title. year. venue.
  abstract"`` (its ``include_metadata`` default) fused by RRF (k=5, 1:1) with a stemmed BM25
  (rank-bm25). The FAISS store is saved under ``--index-dir`` and reused by later runs (a cache of
  the same vectors, passed back through ``from_corpus(index_path=...)``);
* each query of the split is its title + abstract (joined as mustcite joins them) passed to
  ``agent.recommend(text, k=--top)`` with its defaults (query embedding weighted towards the last
  sentence, decay 0.5; duplicate titles removed; no author boost);
* writes ``<bench>/runs/incite-peer.<split>.trec`` and records index-build time, pool texts/s,
  per-query latency and peak RSS under the split in ``benchmarks/results/peer_incite.json``.

Time order: the pool is 2018-2023 and the queries 2024, and only the pool is indexed: nothing
later leaks. ``recommend`` writes ``~/.incite/last_recommendations.json`` on every call; HOME is
pointed at ``<index-dir>/home`` so that it stays out of the user's home.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = Path(os.environ.get("MUSTCITE_WORK", ROOT / "mustcite-work"))


def doc_text(title: str, abstract: str) -> str:
    """mustcite.retrieval.base.doc_text (copied: this script runs without mustcite installed)."""
    title, abstract = (title or "").strip(), (abstract or "").strip()
    if not abstract:
        return title
    sep = " " if title.endswith((".", "?", "!", ":")) else ". "
    return f"{title}{sep}{abstract}"


def export_pool(pool: Path, out: Path) -> int:
    import pyarrow.parquet as pq

    rows = pq.read_table(pool).to_pylist()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for r in rows:
            rec = {"id": r["paper_id"], "title": r.get("title") or "", "abstract": r.get("abstract") or "",
                   "authors": [], "year": r.get("year"), "journal": r.get("venue") or None}
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    tmp.replace(out)
    return len(rows)


def _pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", type=Path, default=WORK / "benchmarks" / "neurips-2024")
    ap.add_argument("--split", default="test")
    ap.add_argument("--top", type=int, default=100)
    ap.add_argument("--index-dir", type=Path, default=WORK / "cache" / "incite-peer")
    ap.add_argument("--limit", type=int, default=None, help="first N queries only (smoke test)")
    ap.add_argument("--method", default="hybrid", choices=["hybrid", "neural", "bm25"],
                    help="inCite's retrieval method (default hybrid, inCite's own default; others are ablations)")
    ap.add_argument("--focus-decay", type=float, default=0.5,
                    help="recommend()'s focus_decay (0.5, inCite's default; 1.0 turns the last-sentence "
                         "weighting of the query embedding off: an ablation)")
    ap.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results" / "peer_incite.json")
    args = ap.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    home = args.index_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["HOME"] = str(home)

    from importlib.metadata import version

    from incite.agent import InCiteAgent

    corpus = args.index_dir / "pool.jsonl"
    pool = args.bench / "pool.parquet"
    if not corpus.exists() or corpus.stat().st_mtime < pool.stat().st_mtime:
        n = export_pool(pool, corpus)
        print(f"exported {n} pool papers -> {corpus}", file=sys.stderr)
    faiss_dir = args.index_dir / "faiss-minilm-ft-onnx"
    reuse = (faiss_dir / "index.faiss").exists()

    t0 = time.perf_counter()
    agent = InCiteAgent.from_corpus(str(corpus), index_path=str(faiss_dir) if reuse else None,
                                    method=args.method, embedder_type="minilm-ft-onnx")
    build_s = time.perf_counter() - t0
    if not reuse and agent._find_neural_store() is not None:
        agent._find_neural_store().save(str(faiss_dir))
    print(f"inCite agent over {agent.corpus_size} papers in {build_s:.1f} s "
          f"({'index reused' if reuse else 'index built'})", file=sys.stderr)

    queries = [json.loads(line) for line in open(args.bench / "queries" / f"{args.split}.jsonl", encoding="utf-8")
               if line.strip()]
    if args.limit:
        queries = queries[:args.limit]
    variant = "" if (args.method, args.focus_decay) == ("hybrid", 0.5) else \
        f"-{args.method}" + ("" if args.focus_decay == 0.5 else f"-decay{args.focus_decay:g}")
    lines, lat = [], []
    for i, q in enumerate(queries, 1):
        t = time.perf_counter()
        resp = agent.recommend(doc_text(q["title"], q.get("abstract") or ""), k=args.top, focus_decay=args.focus_decay)
        lat.append(time.perf_counter() - t)
        for rec in resp.recommendations:
            lines.append(f"{q['id']} Q0 {rec.paper_id} {rec.rank} {rec.score:.6f} incite-peer{variant}")
        if i % 25 == 0:
            print(f"  {i}/{len(queries)} queries, median {1000 * _pct(lat, 0.5):.0f} ms", file=sys.stderr)
    run = args.bench / "runs" / f"incite-peer{variant}.{args.split}.trec"
    if args.limit:
        run = run.with_name(f"incite-peer.{args.split}.limit{args.limit}.trec")
    run.parent.mkdir(parents=True, exist_ok=True)
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")

    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    entry = {
        "system": f"inCite (incite-app 0.1.3), InCiteAgent.from_corpus(method={args.method!r}, "
                  f"embedder_type='minilm-ft-onnx'), recommend(focus_decay={args.focus_decay:g})",
        "benchmark": args.bench.resolve().name, "split": args.split, "queries": len(queries), "top": args.top,
        "run": str(run.relative_to(ROOT)) if run.is_relative_to(ROOT) else str(run),
        "pool_papers": agent.corpus_size, "index_reused": reuse,
        "agent_build_seconds": round(build_s, 1),
        # the whole agent build (model load, BM25 index, ONNX encoding of every pool text) per pool paper
        "pool_texts_per_second": None if reuse else round(agent.corpus_size / build_s, 2),
        "query_latency_ms": {"median": round(1000 * _pct(lat, 0.5), 1), "p95": round(1000 * _pct(lat, 0.95), 1),
                             "mean": round(1000 * sum(lat) / len(lat), 1)},
        "peak_rss_mb": round(rss_mb, 1),
        "settings": {"method": args.method, "fusion": "rrf k=5, neural:bm25 1:1",
                     "document_text": "title. year. venue. abstract", "max_length": 512,
                     "query": "title + abstract, embedding weighted to the last sentence "
                              f"(decay {args.focus_decay:g}; 1 = off)",
                     "deduplicate": True, "author_boost": 1.0},
        "versions": {p: version(p) for p in ("incite-app", "onnxruntime", "optimum", "transformers", "faiss-cpu",
                                             "rank-bm25", "torch")},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "command": f"HF_HUB_OFFLINE=1 .venvs/incite/bin/python benchmarks/peer_incite.py --bench {args.bench} "
                   f"--split {args.split} --index-dir {args.index_dir}",
    }
    res = json.loads(args.results.read_text()) if args.results.exists() else {}
    key = f"{args.bench.resolve().name}/{args.split}{variant}" + (f"-limit{args.limit}" if args.limit else "")
    res[key] = entry
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    print(f"run -> {run}; {json.dumps(entry['query_latency_ms'])}; peak RSS {rss_mb:.0f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
