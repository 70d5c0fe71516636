"""``mustcite benchmark build|run|train-ntxent``, ``mustcite retrieve`` and ``mustcite evaluate``.

* ``benchmark build``: pool, queries, splits, qrels and manifest from the corpus + labelled references;
* ``benchmark run``: one retrieval method over a split's queries -> TREC run + metric table per ground truth;
* ``benchmark train-ntxent``: NT-Xent fine-tuning on the TRAIN split -> ``<work>/models/<name>/``;
* ``retrieve``: top-K pool papers for queries in a JSONL file (TREC or JSON);
* ``evaluate``: runs vs qrels in the paper's table layout, significance vs the first run.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
from pathlib import Path

import typer

from ..benchmark.recipes import DEFAULT_RECIPE, benchmark_folder
from ..config import Workspace
from ..engine import make_engine, use_engine
from ..errors import DataMissingError, MustciteError, UsageError
from ..io import atomic_write_json, check_output_dir, check_output_file
from .common import write_report

bench_app = typer.Typer(help="Build and run the must-cite retrieval benchmark.", no_args_is_help=True)
METHOD_HELP = ("bm25 | minilm | onnx-int8:minilm | static:minilm | onnx:FOLDER | hf-cls:FOLDER | hf-mean:FOLDER | "
               "BASE+ADAPTER (SPECTER2) | colbert[:FOLDER] | colbert-exact[:FOLDER] | colbert-rerank[:FOLDER] | "
               "ppr | gnn | rerank:FOLDER | <model folder>")


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="benchmark")
    app.command("retrieve")(retrieve_cmd)
    app.command("evaluate")(evaluate_cmd)


def _work():
    return Workspace.resolve()


def _bench_dir(name: str, out: Path | None = None) -> Path:
    return Path(out) if out else benchmark_folder(_work().root / "benchmarks", name)


def _parse_years(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        a, _, b = text.partition("-")
        return (int(a), int(b or a))
    except ValueError:
        raise UsageError(f"--pool-years must look like 2018-2023, got {text!r}") from None


@bench_app.command("build")
def build_cmd(
    recipe: str = typer.Option(DEFAULT_RECIPE, "--recipe", help="neurips-2024-v2 (also: neurips-2024) | "
                               "neurips-2024-v3 (v2 + cited works) | neurips-2024-v1 | masterset-coreml-v1"),
    works: Path = typer.Option(None, "--works", help="the catalogue of cited works for neurips-2024-v3 (default: "
                               "the corpus file's folder)"),
    refs: list[Path] = typer.Option(..., "--refs", help="labelled extraction folder(s) (repeatable)"),
    corpus: Path = typer.Option(None, "--corpus", help="papers.parquet (default: <work>/corpus/papers.parquet)"),
    out: Path = typer.Option(None, "--out", help="output folder (default: <work>/benchmarks/<recipe>)"),
    pool_years: str = typer.Option(None, "--pool-years", help="override, e.g. 2018-2023"),
    query_year: int = typer.Option(None, "--query-year", help="override the query year"),
    seed: int = typer.Option(None, "--seed", help="override the split seed"),
    min_link_score: float = typer.Option(None, "--min-link-score", help="ignore weaker reference links"),
) -> None:
    """Build pool, queries (train/dev/test), qrels per ground truth and a versioned manifest."""
    # loaded when the command runs, not at the command line's start-up
    from ..benchmark.build import build_benchmark
    from ..benchmark.recipes import get_recipe

    r = get_recipe(recipe, pool_years=_parse_years(pool_years), query_year=query_year, seed=seed,
                   min_link_score=min_link_score)
    corpus = corpus or _work().root / "corpus" / "papers.parquet"
    dest = check_output_dir(Path(out) if out else _work().root / "benchmarks" / r.name)
    m = build_benchmark(r, corpus_path=corpus, ref_dirs=list(refs), out_dir=dest, works_dir=works)
    sizes = m["splits"]["sizes"]
    typer.echo(f"{r.name}: pool {m['pool']['papers']} papers ({r.pool_years[0]}-{r.pool_years[1]}), "
               f"{m['queries']['total']} queries (train {sizes['train']}, dev {sizes['dev']}, test {sizes['test']}), "
               f"{m['labels']['pairs']} labelled pairs -> {dest}")
    if m.get("works"):
        cov = m["coverage"]
        typer.echo(f"  works in the pool: {m['works']['in_pool']}; test queries' reference entries the pool holds: "
                   f"{cov['entries_in_pool']:.1%} (corpus papers alone {cov['entries_in_corpus_papers']:.1%}), "
                   f"must-cite ones {cov['must_cite_in_pool']:.1%} ({cov['must_cite_in_corpus_papers']:.1%})")
    for s in ("train", "dev", "test"):
        c = m["counts"][s]
        typer.echo(f"  {s:5s} " + "  ".join(f"{gt} {c[gt]['queries']}q/{c[gt]['pairs']}p"
                                             for gt in ("type1", "type2", "type3", "mustcite", "cited")))


def _resolve_pool(pool: Path | None, benchmark: str) -> Path:
    if pool:
        return pool
    p = _bench_dir(benchmark) / "pool.parquet"
    if not p.exists():
        raise DataMissingError(f"no benchmark pool at {p}",
                               hint="run `mustcite benchmark build` first, or pass --pool FILE (.parquet or .jsonl)")
    return p


def _retriever(method: str, pool_file: Path, *, ann: str | None, batch_size: int, cache: bool,
               max_seq_length: int = 256, pooling: str | None = None):
    """A retriever indexed on the pool; BM25 indexes are cached under <work>/cache/bm25/."""
    # loaded when the command runs, not at the command line's start-up
    from ..corpus.pool import load_pool
    from ..retrieval.registry import make_retriever

    rows = load_pool(pool_file)
    if method == "bm25" and cache:
        from ..retrieval.bm25 import BM25Retriever

        h = hashlib.sha256(str(pool_file.resolve()).encode() + str(pool_file.stat().st_mtime_ns).encode())
        d = _work().cache / "bm25" / h.hexdigest()[:16]
        if (d / "meta.json").exists():
            return BM25Retriever.load(d), rows
        r = BM25Retriever()
        r.index(rows)
        r.save(d)
        return r, rows
    r = make_retriever(method, ann=ann, batch_size=batch_size, max_seq_length=max_seq_length, pooling=pooling)
    r.index(rows)
    return r, rows


def retrieve_cmd(
    queries: Path = typer.Option(..., "--queries", help='JSONL, one {"id","title","abstract"} a line'),
    method: str = typer.Option("bm25", "--method", help=METHOD_HELP),
    top: int = typer.Option(100, "--top", min=1, help="results per query"),
    fmt: str = typer.Option("json", "--format", help="trec | json"),
    pool: Path = typer.Option(None, "--pool", help="pool .parquet/.jsonl (default: the built benchmark's pool)"),
    benchmark: str = typer.Option(DEFAULT_RECIPE, "--benchmark", help="benchmark whose pool is the default"),
    ann: str = typer.Option(None, "--ann", help="dense only: hnsw | ivf (default exact search)"),
    batch_size: int = typer.Option(32, "--batch-size", min=1),
    max_seq_length: int = typer.Option(256, "--max-seq-length", min=16, help="dense only: tokens per text"),
    out: Path = typer.Option(None, "--out", help="write here instead of stdout"),
    engine: str = typer.Option("local", "--engine", help="dense only: where the pool is encoded: local (this "
                               "process) or ray (the batches on a Ray cluster; pip install 'mustcite[ray]')"),
    address: str = typer.Option(None, "--address", help="with --engine ray: the Ray cluster to join "
                                "(default: start a local one)"),
    pooling: str = typer.Option(None, "--pooling", help="dense only: cls | mean, forces the pooling of a model "
                                "folder (default: chosen from the folder: CLS for SPECTER/SPECTER2/SciNCL, "
                                "mean otherwise)"),
) -> None:
    """Top-K pool papers for each query (title + abstract)."""
    # loaded when the command runs, not at the command line's start-up
    from ..benchmark.trec import format_run
    from ..retrieval.queries import read_queries

    if fmt not in ("trec", "json"):
        raise UsageError(f"--format must be trec or json, got {fmt!r}")
    if out:
        check_output_file(out)
    eng = make_engine(engine, address)
    qs = read_queries(queries)
    with use_engine(eng):
        retriever, rows = _retriever(method, _resolve_pool(pool, benchmark), ann=ann, batch_size=batch_size,
                                      cache=True, max_seq_length=max_seq_length, pooling=pooling)
        results = retriever.search(qs, k=top)
    if fmt == "trec":
        text = format_run(results, tag=retriever.name.replace(" ", "_") or "mustcite")
    else:
        info = {r["paper_id"]: r for r in rows}
        lines = []
        for q in qs:
            hits = [{"rank": i, "paper_id": pid, "title": info[pid].get("title"), "year": info[pid].get("year"),
                     "venue": info[pid].get("venue"), "score": round(score, 6)}
                    for i, (pid, score) in enumerate(results.get(q.id, []), 1)]
            lines.append(json.dumps({"id": q.id, "method": retriever.metadata(), "results": hits}, ensure_ascii=False))
        text = "\n".join(lines) + "\n"
    write_report(text, out)


def evaluate_cmd(
    run: list[Path] = typer.Option(..., "--run", help="TREC run file (repeatable; the first is the reference)"),
    qrels: Path = typer.Option(..., "--qrels", help="TREC qrels file"),
    fmt: str = typer.Option("markdown", "--format", help="markdown | csv | latex | json"),
    test: str = typer.Option("ttest", "--test", help="paired test vs the first run: ttest | perm"),
    name: list[str] = typer.Option(None, "--name", help="row names, in --run order (default: file stems)"),
    title: str = typer.Option("", "--title", help="table caption"),
) -> None:
    """Evaluate runs (MAP, MRR, nDCG@10/20/30, R@50/100, HR@10/20) in the paper's table layout."""
    # loaded when the command runs, not at the command line's start-up
    from ..benchmark.evaluate import check_coverage, per_query
    from ..benchmark.report import build_rows, render
    from ..benchmark.significance import TESTS
    from ..benchmark.trec import read_qrels, read_run

    if test not in TESTS:
        raise UsageError(f"--test must be one of {', '.join(TESTS)}")
    if name and len(name) != len(run):
        raise UsageError("give one --name per --run")
    q = read_qrels(qrels)
    names = list(name) if name else [p.stem for p in run]
    scored = []
    for n, p in zip(names, run):
        r = read_run(p)
        warning = check_coverage(r, q, str(p))
        if warning:
            print(f"warning: {p}: {warning}", file=sys.stderr)
        scored.append((n, per_query(r, q)))
    rows = build_rows(scored, test=test)
    typer.echo(render(rows, fmt, title=title), nl=False)


@bench_app.command("run")
def run_cmd(
    method: str = typer.Option("bm25", "--method", help=METHOD_HELP),
    benchmark: str = typer.Option(DEFAULT_RECIPE, "--benchmark"),
    split: str = typer.Option("test", "--split", help="train | dev | test"),
    top: int = typer.Option(100, "--top", min=1),
    ann: str = typer.Option(None, "--ann"),
    tag: str = typer.Option(None, "--tag", help="run name (default: the method)"),
    fmt: str = typer.Option("markdown", "--format", help="table format"),
    max_seq_length: int = typer.Option(256, "--max-seq-length", min=16, help="dense only: tokens per text"),
    pooling: str = typer.Option(None, "--pooling", help="dense only: cls | mean, forces the pooling of a model "
                                "folder (default: chosen from the folder: CLS for SPECTER/SPECTER2/SciNCL, "
                                "mean otherwise)"),
) -> None:
    """Retrieve for a split's queries, write <bench>/runs/<tag>.<split>.trec and print one table per ground truth."""
    # loaded when the command runs, not at the command line's start-up
    from ..benchmark.evaluate import per_query
    from ..benchmark.loader import Benchmark
    from ..benchmark.recipes import GROUND_TRUTHS
    from ..benchmark.report import build_rows, render
    from ..benchmark.trec import write_run
    from ..retrieval.memory import peak_rss_mb
    from ..retrieval.queries import read_queries

    bench = Benchmark.open(_bench_dir(benchmark))
    qfile = bench.queries_file(split)
    t0 = time.time()
    retriever, _ = _retriever(method, bench.pool_file(), ann=ann, batch_size=32, cache=True,
                              max_seq_length=max_seq_length, pooling=pooling)
    results = retriever.search(read_queries(qfile), k=top)
    tag = tag or re.sub(r"[^A-Za-z0-9._-]+", "-", Path(method).name)
    run_file = bench.path / "runs" / f"{tag}.{split}.trec"
    write_run(run_file, results, tag=tag.replace(" ", "_"))
    atomic_write_json(run_file.with_suffix(".meta.json"),
                      {**retriever.metadata(), "split": split, "top": top, "seconds": round(time.time() - t0, 2),
                       "peak_rss_mb": peak_rss_mb()})
    run = {q: dict(h) for q, h in results.items()}
    for gt, qr in bench.qrels(split, GROUND_TRUTHS).items():
        if not qr:
            continue
        typer.echo(render(build_rows([(tag, per_query(run, qr))]), fmt, title=f"{benchmark} {split} - {gt}"))
    typer.echo(f"run -> {run_file}")


def _model_folder(name: str, marker: str, what: str) -> Path:
    """``<work>/models/<name>``: new, empty, or a folder this trainer wrote before (it holds
    ``marker``); anything else is refused rather than overwritten."""
    out = _work().dir("models") / name
    if out.exists() and any(out.iterdir()) and not (out / marker).exists():
        raise MustciteError(f"{out} exists and is not a mustcite {what} folder")
    return out


@bench_app.command("train-ntxent")
def train_cmd(
    name: str = typer.Option(..., "--name", help="model folder name under <work>/models/"),
    benchmark: str = typer.Option(DEFAULT_RECIPE, "--benchmark"),
    truth: str = typer.Option("mustcite", "--truth", help="ground truth whose pairs are positives"),
    base_model: str = typer.Option(None, "--base-model", help="model folder (default: shipped MiniLM)"),
    temperature: float = typer.Option(0.05, "--temperature"),
    epochs: int = typer.Option(1, "--epochs", min=1),
    batch_size: int = typer.Option(32, "--batch-size", min=2),
    lr: float = typer.Option(2e-5, "--lr"),
    seed: int = typer.Option(13, "--seed"),
    max_pairs: int = typer.Option(None, "--max-pairs", help="subsample pairs (quick runs)"),
    max_seq_length: int = typer.Option(256, "--max-seq-length", min=16,
                                       help="tokens per text while training (128 is ~2x faster on CPU)"),
) -> None:
    """NT-Xent fine-tuning on the TRAIN queries' pairs; saves the model and a training card."""
    # loaded when the command runs, not at the command line's start-up
    from ..benchmark.retrieval_training import training_pairs
    from ..retrieval.ntxent import NTXentConfig, train_ntxent

    bdir = _bench_dir(benchmark)
    pairs = training_pairs(bdir, split="train", truth=truth)
    out = _model_folder(name, "training_card.json", "model")
    cfg = NTXentConfig(temperature=temperature, epochs=epochs, batch_size=batch_size, lr=lr, seed=seed,
                       max_pairs=max_pairs, max_seq_length=max_seq_length)
    card = train_ntxent(pairs, out, base_model=base_model, config=cfg,
                        data_note=f"{benchmark} train split, '{truth}' pairs ({bdir / 'manifest.json'})")
    typer.echo(f"trained on {card['pairs']} pairs, loss per epoch {card['loss_per_epoch']} in {card['seconds']} s "
               f"-> {out} (use --method {out})")


@bench_app.command("train-colbert")
def train_colbert_cmd(
    name: str = typer.Option("colbert-ntx", "--name", help="model folder name under <work>/models/"),
    benchmark: str = typer.Option(DEFAULT_RECIPE, "--benchmark"),
    truth: str = typer.Option("mustcite", "--truth", help="ground truth whose pairs are positives"),
    temperature: float = typer.Option(1.0, "--temperature", help="MaxSim scores / temperature (PyLate default 1)"),
    epochs: int = typer.Option(1, "--epochs", min=1),
    batch_size: int = typer.Option(16, "--batch-size", min=2),
    lr: float = typer.Option(1e-3, "--lr", help="learning rate of the projection"),
    dim: int = typer.Option(128, "--dim", min=8, help="token embedding size after the projection"),
    seed: int = typer.Option(13, "--seed"),
    max_pairs: int = typer.Option(3000, "--max-pairs", min=2, help="subsample pairs (CPU budget)"),
    train_encoder: bool = typer.Option(False, "--train-encoder/--frozen-encoder",
                                       help="also fine-tune MiniLM (slow on CPU; default: projection only)"),
    query_length: int = typer.Option(128, "--query-length", min=8),
    document_length: int = typer.Option(180, "--document-length", min=8),
) -> None:
    """ColBERT-NTX: PyLate contrastive (NT-Xent over MaxSim) training on the TRAIN queries' pairs
    -> <work>/models/<name>/ (use --method colbert:FOLDER, colbert-exact:FOLDER or colbert-rerank:FOLDER)."""
    # loaded when the command runs, not at the command line's start-up
    from ..benchmark.retrieval_training import training_pairs
    from ..retrieval.colbert import COLBERT_CONFIG, ColbertTrainConfig, train_colbert

    bdir = _bench_dir(benchmark)
    pairs = training_pairs(bdir, split="train", truth=truth)
    out = _model_folder(name, COLBERT_CONFIG, "ColBERT model")
    cfg = ColbertTrainConfig(temperature=temperature, epochs=epochs, batch_size=batch_size, lr=lr, dim=dim,
                             seed=seed, max_pairs=max_pairs, train_encoder=train_encoder,
                             query_length=query_length, document_length=document_length)
    card = train_colbert(pairs, out, config=cfg,
                         data_note=f"{benchmark} train split, '{truth}' pairs ({bdir / 'manifest.json'})")
    typer.echo(f"trained on {card['pairs']} pairs ({card['steps']} steps), loss per epoch {card['loss_per_epoch']} "
               f"in {card['seconds']} s -> {out} (use --method colbert:{out})")


@bench_app.command("train-rerank")
def train_rerank_cmd(
    name: str = typer.Option("rerank-bm25-minilm", "--name", help="model folder name under <work>/models/"),
    benchmark: str = typer.Option(DEFAULT_RECIPE, "--benchmark"),
    first: str = typer.Option("bm25", "--first", help="the first stage that prefetches (any --method)"),
    queries: int = typer.Option(600, "--queries", min=1, help="train queries sampled (seeded) for the pairs"),
    top: int = typer.Option(50, "--top", min=1,
                            help="first-stage candidates per train query the groups (or pairs) come from"),
    prefetch: int = typer.Option(50, "--prefetch", min=1, help="candidates the cross-encoder re-orders at search time"),
    objective: str = typer.Option("listwise", "--objective", help="listwise (one cited paper + negatives a group) "
                                  "| pointwise (BCE on pairs)"),
    negatives: int = typer.Option(7, "--negatives", min=1, help="listwise: uncited first-stage hits per group"),
    per_query: int = typer.Option(4, "--per-query", min=1, help="listwise: groups (cited papers) per train query"),
    max_length: int = typer.Option(128, "--max-length", min=16, help="tokens per (query, candidate) pair"),
    head: str = typer.Option("segment-cosine", "--head", help="segment-cosine (scaled cosine of the two texts' "
                             "mean token vectors) | late-cross (the same, attention inside each text in the lower "
                             "4 layers: starts as the bi-encoder) | classifier (new layer on [CLS])"),
    epochs: int = typer.Option(1, "--epochs", min=1),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Prefetch and rerank (HAtten-RR family): train a MiniLM cross-encoder on the TRAIN queries'
    first-stage candidates -> <work>/models/<name>/ (use --method rerank:FOLDER)."""
    # loaded when the command runs, not at the command line's start-up
    from ..benchmark.retrieval_training import train_rerank
    from ..retrieval.cross_encoder import HEADS
    from ..retrieval.prefetch_rerank import MODEL_FILE

    if objective not in ("listwise", "pointwise"):
        raise typer.BadParameter("listwise or pointwise", param_hint="--objective")
    if head not in HEADS:
        raise typer.BadParameter(" or ".join(HEADS), param_hint="--head")
    out = _model_folder(name, MODEL_FILE, "re-ranker")
    card = train_rerank(_bench_dir(benchmark), out, first=first, queries=queries, top=top, prefetch=prefetch,
                        epochs=epochs, seed=seed, objective=objective, negatives=negatives, per_query=per_query,
                        max_length=max_length, head=head, log=typer.echo)
    typer.echo(f"trained on {card['pairs']} pairs in {card['fit_seconds']} s -> {out} (use --method rerank:{out})")


@bench_app.command("train-graph")
def train_graph_cmd(
    kind: str = typer.Option(..., "--kind", help="ppr (KTR-like personalised PageRank) | gnn (heterogeneous GNN)"),
    name: str = typer.Option(None, "--name", help="model folder under <work>/models/ (default: graph-ppr / graph-gnn, "
                             "what --method ppr / gnn load)"),
    benchmark: str = typer.Option(DEFAULT_RECIPE, "--benchmark"),
    refs: list[Path] = typer.Option(None, "--refs", help="labelled reference folder(s) of earlier years "
                                    "(default: <work>/extract when it exists)"),
    corpus: Path = typer.Option(None, "--corpus",
                                help="papers.parquet with the authors (default: <work>/corpus/papers.parquet)"),
    graph: Path = typer.Option(None, "--graph", help="reuse the graph of this graph model folder (skips building)"),
    alpha: float = typer.Option(0.4, "--alpha", min=0.01, max=0.99,
                                help="ppr: restart probability (0.4: chosen on dev)"),
    seeds: int = typer.Option(20, "--seeds", min=1, help="ppr: nearest labelled papers the walk restarts from"),
    pool_seeds: int = typer.Option(20, "--pool-seeds", min=0, help="ppr: nearest pool papers in the restart"),
    pool_weight: float = typer.Option(0.0, "--pool-weight", min=0.0, max=1.0, help="ppr: their share of it"),
    layers: int = typer.Option(2, "--layers", min=1, help="gnn: message-passing layers"),
    hidden: int = typer.Option(64, "--hidden", min=8, help="gnn: hidden size"),
    epochs: int = typer.Option(6, "--epochs", min=1, help="gnn: epochs"),
    batch: int = typer.Option(512, "--batch", min=2, help="gnn: citing papers per step"),
    negatives: int = typer.Option(2048, "--negatives", min=1, help="gnn: random pool papers per step"),
    lr: float = typer.Option(2e-3, "--lr", help="gnn: Adam learning rate"),
    similar_k: int = typer.Option(10, "--similar-k", min=1, help="gnn: text-kNN edges per paper (and query)"),
    seed: int = typer.Option(13, "--seed"),
) -> None:
    """Graph methods: build the bibliographic graph from the TRAIN queries (+ earlier labelled papers)
    and save a KTR-like PPR model or train the GNN -> <work>/models/<name>/ (use --method ppr|gnn|FOLDER)."""
    # loaded when the command runs, not at the command line's start-up
    from ..benchmark.retrieval_training import load_or_build_graph
    from ..retrieval.graph import DEFAULT_MODELS

    if kind not in DEFAULT_MODELS:
        raise UsageError(f"--kind must be ppr or gnn, got {kind!r}")
    bdir = _bench_dir(benchmark)
    if not refs:
        default = _work().root / "extract"
        refs = [default] if default.is_dir() else []
    out = _model_folder(name or DEFAULT_MODELS[kind], "graph_model.json", "graph model")
    g = load_or_build_graph(bdir, list(refs), graph_dir=graph, corpus=corpus)
    note = f"{benchmark} train queries + {len(refs)} labelled folder(s) of earlier years ({bdir / 'manifest.json'})"
    if kind == "ppr":
        from ..retrieval.ppr import PPRParams, train_ppr_model

        card = train_ppr_model(g, PPRParams(alpha=alpha, seeds=seeds, pool_seeds=pool_seeds,
                                            pool_weight=pool_weight), out, note=note)
        typer.echo(f"graph {card['graph']} -> {out} (use --method ppr:{out})")
    else:
        from ..retrieval.gnn import GNNParams, train_gnn_model

        card = train_gnn_model(g, GNNParams(hidden=hidden, layers=layers, similar_k=similar_k, epochs=epochs,
                                            batch=batch, negatives=negatives, lr=lr, seed=seed),
                                out, note=note)
        typer.echo(f"trained on {card['train']['examples']} citing papers, loss per epoch "
                   f"{card['train']['loss_per_epoch']} in {card['seconds']} s -> {out} (use --method gnn:{out})")
