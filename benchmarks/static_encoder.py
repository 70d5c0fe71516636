"""Which dense encoder fits a 20-minute `make demo`? Encode speed and dense-only retrieval quality
of MiniLM (256 / 128 tokens), a static model2vec model distilled from it, and MiniLM as int8 ONNX.

On 2 CPU cores all-MiniLM-L6-v2 encodes ~5-10 title+abstract texts/s, so the ~37K-paper pool
plus ~6K labelled papers of the demo take over an hour. This script measures, for each encoder:

* **speed**: documents/s encoding a fixed seeded sample of ``--sample`` pool papers (2,000), timed
  after loading the model and a warm-up batch, in the batches the retriever uses, without the
  embedding cache; the load (and, for the static model, the distillation) time is reported apart;
* **quality**: dense-only search for the ``--split`` queries (dev) against a sub-pool = every paper
  in the split's ``cited`` or ``mustcite`` qrels plus ``--random`` (3,500) other pool papers (seeded; the
  speed sample is drawn from these), R@100 / MRR / nDCG@10 on ``cited`` and ``mustcite``
  (mustcite.benchmark.evaluate, i.e. ir-measures). The sub-pool holds every relevant paper of the
  split, so recall is not capped by the sampling; it is easier than the full pool (fewer
  distractors), so absolute numbers are higher than on the full pool, the ranking of encoders is
  what counts. BM25 on the same sub-pool is given for reference.

Encoders (``--encoder``, repeatable; default all):

    minilm-256     the current default (sentence-transformers, 256 tokens)
    minilm-128     the same model, 128 tokens
    static         model2vec distilled from the shipped MiniLM: PCA 256, 512 tokens (static:minilm)
    static-384     the same, PCA kept at 384 dimensions (static:minilm:384)
    onnx-int8-128  MiniLM exported to ONNX, int8 dynamic quantisation per channel (onnx-int8:minilm), 128 tokens
    onnx-int8-256  the same, 256 tokens (onnx-int8-64, onnx-int8-96: 64, 96 tokens)
    bm25           BM25 on the same sub-pool (no speed figure)

Embeddings go through the normal cache (``--cache``, default the workspace cache), so a rerun
re-measures speed but not the sub-pool encoding. Writes ``benchmarks/results/static_encoder.json``
(merged per encoder while the subset is the same) and prints a markdown table.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/static_encoder.py
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/static_encoder.py --encoder static --encoder minilm-256
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from mustcite.benchmark import Benchmark, mean, per_query  # noqa: E402
from mustcite.config import Workspace  # noqa: E402
from mustcite.retrieval import DenseRetriever, Doc, text_key  # noqa: E402

OUT = Path(__file__).parent / "results" / "static_encoder.json"
TRUTHS = ("cited", "mustcite")
METRICS = ("R@100", "MRR", "nDCG@10")
ENCODERS = ("bm25", "static", "static-384", "onnx-int8-64", "onnx-int8-96", "onnx-int8-128", "onnx-int8-256",
            "minilm-128", "minilm-256")
DEFAULT_ENCODERS = ENCODERS
#: what `make demo` would encode: the benchmark pool plus about this many labelled papers
DEMO_LABELLED = 6000


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --------------------------------------------------------------------------------------- subset

def subset(bench: Path, split: str, n_random: int, n_sample: int, seed: int):
    b = Benchmark.open(bench)
    queries = b.queries(split)
    qrels = b.qrels(split, TRUTHS)
    pool = b.pool()
    ids = {p["paper_id"] for p in pool}
    relevant = sorted({d for t in qrels.values() for docs in t.values() for d, r in docs.items() if r > 0})
    missing = [d for d in relevant if d not in ids]
    rel = set(relevant) & ids
    others = sorted(ids - rel)
    rng = random.Random(seed)
    fill = rng.sample(others, min(n_random, len(others)))
    if n_sample > len(fill):
        raise SystemExit(f"--sample {n_sample} needs --random >= {n_sample}")
    sample_ids = fill[:n_sample]
    keep = rel | set(fill)
    sub = [p for p in pool if p["paper_id"] in keep]
    by_id = {p["paper_id"]: p for p in pool}
    sample = [by_id[i] for i in sample_ids]
    qrels = {gt: {q: {d: r for d, r in docs.items() if d in keep} for q, docs in t.items()} for gt, t in qrels.items()}
    digest = hashlib.sha256("\n".join(sorted(keep) + sorted(str(q["id"]) for q in queries)).encode()).hexdigest()[:16]
    manifest = b.manifest
    info = {
        "benchmark": str(bench), "benchmark_version": manifest.get("version"),
        "benchmark_built_at": manifest.get("built_at"), "pool_sha256": _sha256(b.pool_file()),
        "full_pool": len(pool), "split": split, "queries": len(queries), "seed": seed,
        "definition": (f"every paper in qrels/{split}.cited.qrels or qrels/{split}.mustcite.qrels (rel>0) plus "
                       f"{n_random} other pool papers drawn with random.Random({seed}).sample(sorted ids); "
                       f"the speed sample is the first {n_sample} of those random papers"),
        "relevant_papers": len(rel), "relevant_missing_from_pool": len(missing), "random_fill": len(fill),
        "sub_pool": len(sub), "speed_sample": len(sample), "digest": digest,
        "qrels_pairs": {gt: sum(1 for t in qrels[gt].values() for r in t.values() if r > 0) for gt in TRUTHS},
    }
    return queries, sub, sample, qrels, info


# --------------------------------------------------------------------------------------- runs

def make(name: str, cache: Path):
    if name == "minilm-256":
        return DenseRetriever(max_seq_length=256, cache_dir=cache)
    if name == "minilm-128":
        return DenseRetriever(max_seq_length=128, cache_dir=cache)
    if name == "static":
        return DenseRetriever("static:minilm", cache_dir=cache)
    if name == "static-384":
        return DenseRetriever("static:minilm:384", cache_dir=cache)
    if name.startswith("onnx-int8-"):
        return DenseRetriever("onnx-int8:minilm", max_seq_length=int(name.rsplit("-", 1)[1]), cache_dir=cache)
    if name == "bm25":
        from mustcite.retrieval import BM25Retriever

        return BM25Retriever()
    raise SystemExit(f"unknown encoder {name!r}; use one of {', '.join(ENCODERS)}")


def speed(retriever, sample_texts: list[str]) -> dict:
    """docs/s over the sample, in the retriever's batches, with the model loaded and warmed up."""
    t0 = time.perf_counter()
    retriever.encode(sample_texts[:8])                      # loads the model, warms up
    load_s = time.perf_counter() - t0
    bs = retriever.batch_size
    load_before = _load()
    cpu0, t0 = time.process_time(), time.perf_counter()
    parts = [np.asarray(retriever.encode(sample_texts[b:b + bs]), dtype=np.float32)
             for b in range(0, len(sample_texts), bs)]
    secs = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    vecs = np.concatenate(parts)
    # the sample is part of the sub-pool: keep its vectors so the quality run does not encode it again
    keys = [text_key(t) for t in sample_texts]
    new = {k: i for i, k in enumerate(keys) if k not in retriever.cache._index}
    if new:
        retriever.cache.add(list(new), vecs[list(new.values())])
    norms = np.linalg.norm(vecs, axis=1)
    return {"docs": len(sample_texts), "seconds": round(secs, 2), "docs_per_s": round(len(sample_texts) / secs, 2),
            "cpu_seconds": round(cpu, 1), "docs_per_cpu_s": round(len(sample_texts) / max(cpu, 1e-9), 2),
            "load_seconds": round(load_s, 2), "batch_size": bs,
            "dim": int(vecs.shape[1]), "norm_min_max": [round(float(norms.min()), 4), round(float(norms.max()), 4)],
            "load_avg_before": load_before, "load_avg_after": _load()}


def quality(retriever, sub: list[dict], queries: list[dict], qrels) -> dict:
    t0 = time.perf_counter()
    cache = getattr(retriever, "cache", None)
    before = len(cache) if cache is not None else 0
    retriever.index(sub)
    qdocs = [Doc(str(q["id"]), q.get("title") or "", q.get("abstract") or "") for q in queries]
    hits = retriever.search(qdocs, k=100)
    secs = time.perf_counter() - t0
    run = {q: dict(h) for q, h in hits.items()}
    out = {"seconds": round(secs, 1), "texts_encoded": (len(cache) - before) if cache is not None else 0}
    for gt in TRUTHS:
        pq = per_query(run, qrels[gt], METRICS)
        out[gt] = {m: round(mean(v), 4) for m, v in pq.items()}
        out[gt]["queries"] = len(next(iter(pq.values())))
    return out


def table(results: dict) -> str:
    """Markdown table; speed as measured in every run of this subset (min-max: the machine is shared,
    so docs/s moves with the load), the demo estimate from that range."""
    n_demo = results["subset"]["full_pool"] + DEMO_LABELLED
    head = ("| encoder | dim | docs/s (runs: min-max) | est. demo encode, min | cited R@100 | cited MRR "
            "| mustcite R@100 | mustcite MRR | mustcite nDCG@10 |")
    rows = [head, "|" + "---|" * 9]
    for name in ENCODERS:
        e = results["encoders"].get(name)
        if not e:
            continue
        runs = [x["docs_per_s"] for x in e.get("speed_history", []) + [e.get("speed") or {}] if x.get("docs_per_s")]
        dim = (e.get("speed") or {}).get("dim", "-")
        if runs:
            lo, hi = min(runs), max(runs)
            dps = f"{lo:.0f}-{hi:.0f}" if len(runs) > 1 else f"{hi:.0f}"
            est = f"{n_demo / hi / 60:.1f}-{n_demo / lo / 60:.1f}" if len(runs) > 1 else f"{n_demo / hi / 60:.1f}"
        else:
            dps = est = "-"
        q = e.get("quality") or {}
        c, m = q.get("cited", {}), q.get("mustcite", {})
        rows.append(f"| {name} | {dim} | {dps} | {est} | {c.get('R@100', '-')} | {c.get('MRR', '-')} | "
                    f"{m.get('R@100', '-')} | {m.get('MRR', '-')} | {m.get('nDCG@10', '-')} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", default="neurips-2024", help="name under <workspace>/benchmarks or a folder")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--random", type=int, default=3500,
                    help="random pool papers added to the relevant ones (3,500 keeps the run near 25 min on 2 "
                         "busy cores; 5,000 takes ~35 min)")
    ap.add_argument("--sample", type=int, default=2000, help="pool papers timed for the speed figure")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--encoder", action="append", default=[], help=f"one of {', '.join(ENCODERS)} (repeatable)")
    ap.add_argument("--no-quality", action="store_true", help="speed only")
    ap.add_argument("--cache", type=Path, default=None, help="embedding cache root (default: the workspace cache)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    work = Workspace.resolve()
    bench = Path(args.benchmark) if Path(args.benchmark).is_dir() else work.root / "benchmarks" / args.benchmark
    cache = args.cache or work.cache
    started = time.perf_counter()
    queries, sub, sample, qrels, info = subset(bench, args.split, args.random, args.sample, args.seed)
    print(json.dumps(info), flush=True)
    old = json.loads(args.out.read_text()) if args.out.exists() else {}
    results = old if old.get("subset", {}).get("digest") == info["digest"] else {}
    results.update(subset=info, metrics=list(METRICS), truths=list(TRUTHS), demo_texts_estimate=
                   {"pool": info["full_pool"], "labelled": DEMO_LABELLED, "total": info["full_pool"] + DEMO_LABELLED})
    results["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                          "torch_threads": _torch_threads()}
    results.setdefault("encoders", {})
    sample_texts = [Doc(p["paper_id"], p.get("title") or "", p.get("abstract") or "").text for p in sample]
    for name in args.encoder or DEFAULT_ENCODERS:
        print(f"== {name} (load avg {_load()})", flush=True)
        t0 = time.perf_counter()
        retriever = make(name, cache)
        entry: dict = {"build_seconds": round(time.perf_counter() - t0, 1)}
        if name != "bm25":
            entry["meta"] = {k: v for k, v in retriever.metadata().items() if k != "docs"}
            entry["speed"] = speed(retriever, sample_texts)
            print(f"   speed {entry['speed']['docs_per_s']} docs/s", flush=True)
        if not args.no_quality:
            entry["quality"] = quality(retriever, sub, queries, qrels)
            print(f"   quality {json.dumps({gt: entry['quality'][gt] for gt in TRUTHS})}", flush=True)
        elif "quality" in results["encoders"].get(name, {}):
            entry["quality"] = results["encoders"][name]["quality"]        # speed-only rerun keeps it
        prev = results["encoders"].get(name, {})
        history = prev.get("speed_history", []) + ([prev["speed"]] if "speed" in prev else [])
        if history:
            entry["speed_history"] = history          # earlier speed runs of the same subset (load differs)
        entry["load_avg_end"] = _load()
        results["encoders"][name] = entry
        results["table"] = table(results)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1))
    results["last_run"] = {"seconds": round(time.perf_counter() - started, 1), "encoders": args.encoder or
                           list(DEFAULT_ENCODERS), "load_avg_end": _load()}
    results["table"] = table(results)
    args.out.write_text(json.dumps(results, indent=1))
    print(results["table"])


def _torch_threads():
    try:
        import torch

        return torch.get_num_threads()
    except ImportError:
        return None


if __name__ == "__main__":
    main()
