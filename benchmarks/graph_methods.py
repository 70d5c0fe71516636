"""Graph-based baselines (MasterSet Table 11: KTR, AR-GNN, LitFM) on the neurips-2024 benchmark.

Builds the bibliographic graph once from the TRAIN queries + earlier labelled papers, chooses a
few hyper-parameters on DEV (PPR: restart probability and restart mix; GNN: epochs, kept as the
best dev checkpoint of one training run), saves both models (``<work>/models/graph-ppr``,
``graph-gnn``, what ``--method ppr`` / ``--method gnn`` load), then runs TEST once and writes
``runs/{ppr,gnn}.{dev,test}.trec`` and ``benchmarks/results/graph_methods.json`` (graph sizes,
build/training time, peak RSS, query latency, the dev grid and choices, the test figures).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/graph_methods.py
    .venv/bin/python benchmarks/benchmark_table.py --run BM25=$B/runs/bm25.test.trec \\
        --run KTR-PPR=$B/runs/ppr.test.trec --run GNN=$B/runs/gnn.test.trec --out /tmp/table_graph
"""

from __future__ import annotations

import argparse
import copy
import json
import resource
import time
from dataclasses import asdict
from pathlib import Path

from mustcite.benchmark import Benchmark, graph_from_benchmark, write_run  # noqa: E402
from mustcite.config import Workspace  # noqa: E402
from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.retrieval import (  # noqa: E402
    GNNParams,
    GNNRetriever,
    GraphTensors,
    PPRParams,
    PPRRetriever,
    knn_edges,
    save_gnn,
    save_ppr,
    train_gnn,
)

OUT = Path(__file__).parent / "results" / "graph_methods.json"
TRUTHS = ("type1", "type2", "type3", "mustcite", "cited")
KEEP = ("MAP", "MRR", "nDCG@10", "R@100")
#: the dev grid of the KTR-like walk (seeds fixed at 20 nearest labelled / pool papers)
PPR_GRID = [dict(alpha=a, pool_weight=w) for a in (0.2, 0.4) for w in (0.0, 0.3)]
SELECT = ("mustcite", "MAP")        # the dev figure that chooses


def rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def scores(bench: Benchmark, results, split: str) -> dict:
    run = {q: dict(h) for q, h in results.items()}
    return {gt: {m: round(v, 4) for m, v in bench.evaluate(run, split, gt).items() if m in KEEP} for gt in TRUTHS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--refs", default=None, help="labelled folder of earlier years (default <work>/extract)")
    ap.add_argument("--epochs", type=int, default=6, help="GNN epochs; the best dev epoch is kept")
    args = ap.parse_args()
    work = Workspace.resolve()
    bdir = work.root / "benchmarks" / args.benchmark
    bench = Benchmark.open(bdir)
    refs = [Path(args.refs)] if args.refs else [work.root / "extract"]
    report: dict = {"benchmark": args.benchmark, "select_on": f"dev {SELECT[0]} {SELECT[1]}"}
    dev_q, test_q = bench.queries("dev"), bench.queries("test")

    t0 = time.perf_counter()
    graph, data = graph_from_benchmark(bdir, refs)
    report["graph"] = {**graph.sizes(), "build_seconds": round(time.perf_counter() - t0, 1),
                       "keywords": graph.info.get("keywords"), "rss_mb_after_build": rss_mb(),
                       "train_queries": len(data.train), "earlier_labelled": len(data.extra)}

    # ---------------------------------------------------------------- KTR-like PPR
    ppr_dir = work.root / "models" / "graph-ppr"
    save_ppr(graph, PPRParams(), ppr_dir, card={"note": "dev grid in progress"})
    grid = []
    retr = PPRRetriever(ppr_dir)
    for cfg in PPR_GRID:
        retr.params = PPRParams(**cfg)
        res = retr.search(dev_q, 100)
        grid.append({"params": cfg, "dev": scores(bench, res, "dev"), "seconds": round(retr.seconds, 1)})
        print("ppr", cfg, grid[-1]["dev"]["mustcite"], flush=True)
    best = max(grid, key=lambda g: g["dev"][SELECT[0]][SELECT[1]])
    params = PPRParams(**best["params"])
    save_ppr(graph, params, ppr_dir, card={"trained_on": f"{args.benchmark} train queries + earlier labelled papers",
                                           "chosen_on_dev": best["params"]})
    retr = PPRRetriever(ppr_dir)
    dev_res = retr.search(dev_q, 100)
    write_run(bdir / "runs" / "ppr.dev.trec", dev_res, tag="ktr-ppr")
    test_res = retr.search(test_q, 100)
    write_run(bdir / "runs" / "ppr.test.trec", test_res, tag="ktr-ppr")
    report["ppr"] = {"dev_grid": grid, "chosen": asdict(params), "test": scores(bench, test_res, "test"),
                     "query_latency_ms": round(1000 * retr.seconds / len(test_q), 1), "training_seconds": 0.0,
                     "peak_rss_mb": rss_mb()}
    atomic_write_json(OUT, report)

    # ---------------------------------------------------------------- GNN
    gparams = GNNParams(hidden=64, layers=2, epochs=args.epochs, batch=512, negatives=2048)
    t0 = time.perf_counter()
    similar = knn_edges(graph, gparams.similar_k)
    tensors = GraphTensors(graph, similar)
    knn_seconds = round(time.perf_counter() - t0, 1)
    epochs, states = [], {}

    def on_epoch(epoch, model):
        r = GNNRetriever(None, model=model, graph=graph, tensors=tensors, params=gparams)
        res = r.search(dev_q, 100)
        epochs.append({"epoch": epoch, "dev": scores(bench, res, "dev")})
        states[epoch] = copy.deepcopy(model.state_dict())
        print("gnn epoch", epoch, epochs[-1]["dev"]["mustcite"], flush=True)

    model, result = train_gnn(graph, tensors, gparams, on_epoch=on_epoch)
    best_e = max(epochs, key=lambda e: e["dev"][SELECT[0]][SELECT[1]])["epoch"]
    model.load_state_dict(states[best_e])
    gparams.epochs = best_e
    gnn_dir = work.root / "models" / "graph-gnn"
    save_gnn(model, graph, tensors, gparams, gnn_dir,
             card={"trained_on": f"{args.benchmark} train queries + earlier labelled papers",
                   "train": asdict(result), "best_dev_epoch": best_e})
    r = GNNRetriever(gnn_dir)
    dev_res = r.search(dev_q, 100)
    write_run(bdir / "runs" / "gnn.dev.trec", dev_res, tag="hetero-gnn")
    test_res = r.search(test_q, 100)
    write_run(bdir / "runs" / "gnn.test.trec", test_res, tag="hetero-gnn")
    report["gnn"] = {"dev_grid": epochs, "chosen": asdict(gparams), "train": asdict(result),
                     "knn_edges_seconds": knn_seconds, "similar_edges": int(similar.shape[1]),
                     "test": scores(bench, test_res, "test"),
                     "query_latency_ms": round(1000 * r.seconds / len(test_q), 1), "peak_rss_mb": rss_mb()}
    atomic_write_json(OUT, report)
    print(json.dumps({k: report[k]["test"]["mustcite"] for k in ("ppr", "gnn")}))


if __name__ == "__main__":
    main()
