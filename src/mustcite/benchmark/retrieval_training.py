"""Retrieval methods trained on a built benchmark's TRAIN split: the (query, positive) text pairs of
NT-Xent and ColBERT-NTX, the prefetch-and-rerank cross-encoder, and the bibliographic graph of the
graph methods. The methods themselves (:mod:`mustcite.retrieval`) take pairs, groups and papers;
this module reads them out of the benchmark. Dev and test queries never reach training.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from ..config import Workspace
from ..errors import DataMissingError, MustciteError
from ..retrieval.base import as_docs, doc_text
from ..retrieval.cross_encoder import CrossEncoderReranker
from ..retrieval.graph import BiblioGraph, GraphConfig, build_graph, corpus_authors, encoder_for
from ..retrieval.memory import peak_rss_mb
from ..retrieval.prefetch_rerank import PrefetchRerankRetriever, training_groups
from ..retrieval.prefetch_rerank import training_pairs as rerank_pairs
from ..retrieval.registry import make_retriever
from .loader import Benchmark
from .training_data import benchmark_data


def training_pairs(benchmark_dir: str | Path, *, split: str = "train",
                   truth: str = "mustcite") -> list[tuple[str, str]]:
    """(query text, positive pool paper text) for every ``truth`` pair of the split's queries."""
    bench = Benchmark.open(benchmark_dir)
    queries = {o["id"]: doc_text(o["title"], o.get("abstract", "")) for o in bench.queries(split)}
    pool = {r["paper_id"]: doc_text(r["title"], r["abstract"]) for r in bench.pool()}
    pairs = []
    for row in bench.labels():
        if row["qid"] in queries and row.get(truth) and row["paper_id"] in pool:
            pairs.append((queries[row["qid"]], pool[row["paper_id"]]))
    if not pairs:
        raise MustciteError(f"no '{truth}' pairs among the {split} queries of {bench.path}")
    return pairs


def train_rerank(benchmark_dir: str | Path, out_dir: str | Path, *, first: str = "bm25", queries: int = 600,
                 top: int = 50, prefetch: int = 50, epochs: int = 1, seed: int = 0, objective: str = "listwise",
                 negatives: int = 7, per_query: int = 4, max_length: int | None = None,
                 head: str = "segment-cosine", log=print) -> dict[str, Any]:
    """Train the cross-encoder on a seeded sample of ``queries`` TRAIN queries of a built benchmark
    and save a :class:`~mustcite.retrieval.prefetch_rerank.PrefetchRerankRetriever` to ``out_dir``;
    returns its training card. ``objective``: ``listwise``
    (:func:`~mustcite.retrieval.prefetch_rerank.training_groups`) or ``pointwise``
    (:func:`~mustcite.retrieval.prefetch_rerank.training_pairs`); ``head``: the cross-encoder's
    head (:meth:`~mustcite.retrieval.cross_encoder.CrossEncoderReranker.new`)."""
    if objective not in ("listwise", "pointwise"):
        raise MustciteError(f"unknown objective {objective!r} (listwise | pointwise)")
    bench = Benchmark.open(benchmark_dir)
    train = bench.queries("train")
    if not train:
        raise DataMissingError(f"{bench.path}: no train queries")
    sample = sorted(random.Random(seed).sample(train, min(queries, len(train))), key=lambda q: q["id"])
    ids = {q["id"] for q in sample}
    labels: dict[str, dict[str, str]] = {}
    for row in bench.labels():
        if row["qid"] in ids and row.get("cited"):
            labels.setdefault(row["qid"], {})[row["paper_id"]] = "must" if row.get("mustcite") else "cited"
    pool = bench.pool()
    t0 = time.perf_counter()
    stage = make_retriever(first)
    stage.index(pool)
    pool_text = {d.id: d.text for d in as_docs(pool)}
    ce = CrossEncoderReranker.new(seed=seed, head=head, **({"max_length": max_length} if max_length else {}))
    if objective == "listwise":
        groups = training_groups(stage, sample, labels, pool_text, top, negatives=negatives, per_query=per_query,
                                 seed=seed)
        t_pairs = time.perf_counter() - t0
        n_pairs = sum(len(g[1]) for g in groups)
        log(f"{len(groups)} groups ({n_pairs} pairs) from {len(sample)} train queries "
            f"({sum(g[2][0] == 1 for g in groups)} around a must-cite paper) in {t_pairs:.0f} s")
        t0 = time.perf_counter()
        ce.freeze_embeddings().fit_listwise(groups, epochs=epochs, seed=seed)
        sizes = {"groups": len(groups), "negatives": negatives, "per_query": per_query}
    else:
        pairs, targets = rerank_pairs(stage, sample, labels, pool_text, top)
        t_pairs, n_pairs = time.perf_counter() - t0, len(pairs)
        log(f"{len(pairs)} pairs from {len(sample)} train queries ({sum(t == 1 for t in targets)} must-cite, "
            f"{sum(0 < t < 1 for t in targets)} cited) in {t_pairs:.0f} s")
        t0 = time.perf_counter()
        ce.fit(pairs, targets, epochs=epochs, seed=seed)
        sizes = {}
    card = {"benchmark": str(bench.path), "split": "train", "train_queries": len(sample), "first_stage": first,
            "objective": objective, "top": top, "prefetch": prefetch, "pairs": n_pairs, **sizes, "epochs": epochs,
            "seed": seed, "max_length": ce.info["max_length"], "pair_seconds": round(t_pairs, 1),
            "fit_seconds": round(time.perf_counter() - t0, 1), "peak_rss_mb": peak_rss_mb()}
    ce.info.update(card)
    rr = PrefetchRerankRetriever(ce, first=first, prefetch=prefetch, make_first=make_retriever)
    rr.info = {"card": card}
    rr.save(out_dir)
    return card


def graph_from_benchmark(bench: str | Path, refs: list[str | Path] = (), *, corpus: str | Path | None = None,
                         config: GraphConfig | None = None, cache_dir: str | Path | None = None):
    """The bibliographic graph (:func:`~mustcite.retrieval.graph.build_graph`) of a built benchmark,
    from its TRAIN queries and the earlier labelled papers of ``refs``
    (:func:`mustcite.benchmark.training_data.benchmark_data`). Returns ``(graph, data)``."""
    config = config or GraphConfig()
    data = benchmark_data(bench, list(refs))
    labelled = [p for p in data.labelled if p.cites]
    held = {str(q["id"]) for s in ("dev", "test") if s in data.splits for q in data.splits[s][0]}
    if any(p.id in held for p in labelled):                 # benchmark_data guarantees it; check anyway
        raise MustciteError("a dev/test query is among the labelled papers", path=bench)
    enc = encoder_for(config, cache_dir)
    pool_vecs = enc.embed([doc_text(p["title"], p.get("abstract") or "") for p in data.pool], desc="pool vectors")
    lab_vecs = enc.embed([doc_text(p.title, p.abstract) for p in labelled], desc="labelled vectors")
    ids = {p["paper_id"] for p in data.pool} | {p.id for p in labelled}
    authors = corpus_authors(corpus or Workspace.resolve().root / "corpus" / "papers.parquet", ids)
    graph = build_graph(data.pool, labelled, pool_vecs, lab_vecs, authors, config)
    graph.info.update(benchmark=str(bench), reference_folders=[str(r) for r in refs],
                      train_queries=len(data.train), earlier_labelled=len(data.extra),
                      held_out_queries_excluded=len(held))
    return graph, data


def load_or_build_graph(bench: str | Path, refs: list[str | Path] = (), *, graph_dir: str | Path | None = None,
                        corpus: str | Path | None = None, config: GraphConfig | None = None,
                        cache_dir: str | Path | None = None) -> BiblioGraph:
    """The graph saved in ``graph_dir`` (any graph model folder), else built from the benchmark."""
    if graph_dir:
        return BiblioGraph.load(graph_dir)
    return graph_from_benchmark(bench, refs, corpus=corpus, config=config, cache_dir=cache_dir)[0]
