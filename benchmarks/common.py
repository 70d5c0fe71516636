"""Helpers shared by the benchmark scripts (each script is run as ``python benchmarks/NAME.py``,
which puts this folder on the import path)."""

from __future__ import annotations

import hashlib
import random
import statistics
import time
from pathlib import Path

import numpy as np

from mustcite.benchmark import Benchmark, mean, randomisation_test
from mustcite.recommend import RecommenderConfig
from mustcite.scidoca import BM25TopK, Example, candidate_text, gold_ids, paragraph_text

#: the ground truths of a benchmark subset (``cited`` is left out: most cited papers are outside it)
SUBSET_TRUTHS = ("type1", "type2", "type3", "mustcite")


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_server(proc, log) -> None:
    """Stop a server subprocess (terminate, then kill after 30 s) and close its log file."""
    import subprocess

    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def latency_summary(ms: list[float]) -> dict:
    """Count, median, p95, mean and max of latencies in milliseconds."""
    return {"n": len(ms), "median_ms": round(statistics.median(ms), 1), "p95_ms": round(percentile(ms, 0.95), 1),
            "mean_ms": round(statistics.fmean(ms), 1), "max_ms": round(max(ms), 1)}


def paired_comparison(per: dict, base: dict, metrics) -> tuple[dict, dict]:
    """Per-query metrics ``per`` against ``base`` (``{truth: {metric: [one value a query]}}``, the
    same queries in the same order): per truth and metric, the ratio of the means and the paired
    randomisation test's p."""
    ratios = {gt: {m: round(mean(per[gt][m]) / max(1e-12, mean(base[gt][m])), 4) for m in metrics} for gt in per}
    ps = {gt: {m: round(randomisation_test(per[gt][m], base[gt][m]), 4) for m in metrics} for gt in per}
    return ratios, ps


def parse_set(pairs: list[str]) -> dict:
    """``KEY=VALUE`` overrides of :class:`RecommenderConfig` (``disable=a+b``; true/false for flags)."""
    defaults = RecommenderConfig()
    out: dict = {}
    for kv in pairs:
        k, sep, v = kv.partition("=")
        if not sep or not hasattr(defaults, k):
            raise SystemExit(f"--set takes KEY=VALUE with a RecommenderConfig field as KEY, got {kv!r}")
        if k == "disable":
            out[k] = tuple(x for x in v.split("+") if x)
        elif isinstance(getattr(defaults, k), bool):      # bool("False") is True: parse it
            if v.lower() not in ("true", "false", "1", "0"):
                raise SystemExit(f"--set {k}= takes true or false, got {v!r}")
            out[k] = v.lower() in ("true", "1")
        else:
            out[k] = type(getattr(defaults, k))(v)
    return out


def benchmark_subset(bench: Path, split: str, n_queries: int, n_random: int, seed: int):
    """``n_queries`` seeded queries of ``split``, the pool papers relevant to them plus ``n_random``
    others, the qrels restricted to both, and a manifest of the subset."""
    rng = random.Random(seed)
    b = Benchmark.open(bench)
    queries = b.queries(split)
    queries = sorted(rng.sample(queries, min(n_queries, len(queries))), key=lambda q: str(q["id"]))
    qids = {str(q["id"]) for q in queries}
    qrels = {gt: {q: d for q, d in t.items() if q in qids} for gt, t in b.qrels(split, SUBSET_TRUTHS).items()}
    relevant = sorted({pid for d in qrels["mustcite"].values() for pid in d})
    pool = b.pool()
    rel = set(relevant)
    others = sorted(p["paper_id"] for p in pool if p["paper_id"] not in rel)
    keep = rel | set(rng.sample(others, min(n_random, len(others))))
    sub = [p for p in pool if p["paper_id"] in keep]
    qrels = {gt: {q: {p: r for p, r in d.items() if p in keep} for q, d in t.items()} for gt, t in qrels.items()}
    qrels = {gt: {q: d for q, d in t.items() if d} for gt, t in qrels.items()}
    digest = hashlib.sha256("\n".join(sorted(keep) + sorted(qids)).encode()).hexdigest()[:16]
    manifest = {"benchmark": str(bench), "split": split, "seed": seed, "queries": len(queries),
                "pool": len(sub), "relevant_mustcite": len(relevant), "random_fill": len(sub) - len(relevant),
                "digest": digest, "qrels_pairs": {gt: sum(len(d) for d in t.values()) for gt, t in qrels.items()}}
    return queries, sub, qrels, manifest


def auc(pos: np.ndarray, neg: np.ndarray) -> float | None:
    """P(a cited candidate scores above a non-cited one), ties half."""
    if not len(pos) or not len(neg):
        return None
    diff = pos[:, None] - neg[None, :]
    return float((diff > 0).mean() + 0.5 * (diff == 0).mean())


def bi_encoder_scores(pairs: list[tuple[str, str]], max_length: int,
                      model_path: str | Path | None = None) -> np.ndarray:
    """A bi-encoder's cosine with each text encoded alone, cut to ``max_length`` tokens: the shipped
    MiniLM (the one the heads start from) or a fine-tuned folder."""
    from sentence_transformers import SentenceTransformer

    from mustcite.retrieval import default_model_path

    model = SentenceTransformer(str(model_path or default_model_path()), device="cpu")
    model.max_seq_length = max_length
    texts = sorted({t for pair in pairs for t in pair})
    vecs = model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=True)
    at = {t: i for i, t in enumerate(texts)}
    return np.array([float(vecs[at[a]] @ vecs[at[b]]) for a, b in pairs])


def scidoca_dev_check(scorers: dict, examples: list[Example], top: int) -> dict:
    """AUC and top-1 precision of each scorer (name -> function of ``(paragraph, candidate text)``
    pairs returning scores) and of BM25, among BM25's ``top`` candidates of each paragraph."""
    plain = [Example(e.id, 1, paragraph_text(e), e.candidates, gold_ids(e)) for e in examples]
    bm25 = BM25TopK(1).score(plain)
    heads = [np.argsort(-s, kind="stable")[:top] for s in bm25]
    pairs = [(ex.text, candidate_text(ex.candidates[i])) for ex, h in zip(plain, heads) for i in h]
    cuts = np.cumsum([len(h) for h in heads])[:-1]
    out: dict = {"paragraphs": len(plain), "top": top, "pairs": len(pairs)}
    rows = []
    for name, score in scorers.items():
        t0 = time.perf_counter()
        rows.append((name, np.split(np.asarray(score(pairs)), cuts), round(len(pairs) / (time.perf_counter() - t0), 1)))
    rows.append(("bm25", [s[h] for s, h in zip(bm25, heads)], None))
    cited = [np.array([ex.candidates[i].id in gold for i in h])
             for ex, h in zip(plain, heads) for gold in [set(ex.gold)]]
    for name, per, rate in rows:
        pos, neg, paras, hit = [], [], [], []
        for y, sc in zip(cited, per):
            pos.append(sc[y])
            neg.append(sc[~y])
            if y.any() and (~y).any():
                paras.append(auc(sc[y], sc[~y]))
                hit.append(float(y[int(np.argmax(sc))]))
        pooled = auc(np.concatenate(pos), np.concatenate(neg))
        out[name] = {"auc_pooled": round(pooled, 4), "auc_per_paragraph": round(float(np.mean(paras)), 4),
                     "top1_cited": round(float(np.mean(hit)), 4), "paragraphs_with_both": len(paras),
                     **({"score_pairs_per_s": rate} if rate is not None else {})}
    return out


def named_share(ranked: dict[str, list[str]], entries: dict[str, list[str | None]],
                source: dict[str, str] | None = None, top: int = 100) -> dict[str, float]:
    """Per query: the share of all its reference entries (``entries``, by citing paper) whose paper
    or work is among the first ``top`` of ``ranked[query]``; ``source`` maps a query id to its
    citing paper (default: the same id)."""
    out = {}
    for qid, stem in (source or {q: q for q in entries}).items():
        refs = entries.get(stem) or []
        if refs:
            ids = set(ranked.get(qid, [])[:top])
            out[qid] = sum(1 for e in refs if e is not None and e in ids) / len(refs)
    return out


def hand_check_cli(doc: str, sample, score, source: tuple[str, Path]) -> None:
    """The command line of a hand check: ``sample [--<source> DIR] [--n 200] [--seed 0]`` draws
    the sample (``sample(source_dir, n, seed)``), ``score`` scores the judgements (``score()``)."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument(f"--{source[0]}", dest="source", type=Path, default=source[1])
    s.add_argument("--n", type=int, default=200)
    s.add_argument("--seed", type=int, default=0)
    sub.add_parser("score")
    args = ap.parse_args()
    if args.cmd == "sample":
        sample(args.source, args.n, args.seed)
    else:
        score()

