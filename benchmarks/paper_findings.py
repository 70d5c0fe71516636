#!/usr/bin/env python
"""Do MasterSet's three findings about its baselines hold on our benchmark? Paired comparisons of
test runs -> benchmarks/results/paper_findings.{json,md}.

    .venv/bin/python benchmarks/paper_findings.py

Each finding is a set of pairs (A, B) where A adds one thing to B; for every ground truth and
metric the table gives mean A, mean B, A/B and the paired t-test p over the same test queries
(``mustcite.benchmark.significance``). The findings (seed 000, Sections 7-8):
1. "contrastive fine-tuning is the dominant signal": the same encoder with and without NT-Xent
   (MiniLM-NTX vs MiniLM at the same 128 tokens, ColBERT-NTX vs ColBERT; inCite's citation-context
   tuned MiniLM vs the plain one), next to what a dense
   encoder and late interaction add over BM25;
2. "graph methods fail in cold start": PPR / GNN vs the text methods they start from;
3. "late interaction helps Type III": ColBERT re-ranking BM25's candidates vs BM25's own order,
   and ColBERT over the full pool vs the same MiniLM's pooled vector (MiniLM-128, the ColBERT
   query length) and vs BM25, per tier (a help confined to Type III shows as a larger A/B there
   than for Types I and II).
Runs are read from ``<work>/benchmarks/neurips-2024/runs/<tag>.test.trec``; a missing run drops its
pairs (named in the output).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from mustcite.benchmark import GROUND_TRUTHS, Benchmark, mean, paired_ttest, per_query, read_run  # noqa: E402
from mustcite.config import Workspace  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "paper_findings"
METRICS = ("MAP", "MRR", "nDCG@10", "R@100")
RUNS = {"BM25": "bm25", "MiniLM-256": "minilm-256", "MiniLM-128": "minilm-128", "MiniLM-NTX-128": "minilm-ntx",
        "inCite-MiniLM-512": "incite-minilm", "ColBERT": "colbert",
        "ColBERT-NTX": "colbert-ntx", "ColBERT-full": "colbert-exact", "ColBERT-NTX-full": "colbert-ntx-exact",
        "KTR-PPR": "ppr", "GNN": "gnn"}
FINDINGS = {
    "contrastive fine-tuning is the dominant signal": [("MiniLM-NTX-128", "MiniLM-128"),
                                                       ("MiniLM-NTX-128", "MiniLM-256"),
                                                       ("inCite-MiniLM-512", "MiniLM-256"),
                                                       ("ColBERT-NTX", "ColBERT"), ("ColBERT-NTX-full", "ColBERT-full"),
                                                       ("MiniLM-256", "BM25"), ("ColBERT", "BM25")],
    "graph methods fail in cold start": [("KTR-PPR", "BM25"), ("GNN", "BM25"), ("KTR-PPR", "MiniLM-256"),
                                         ("GNN", "MiniLM-256")],
    "late interaction helps Type III": [("ColBERT", "BM25"), ("ColBERT-NTX", "BM25"), ("ColBERT-full", "MiniLM-128"),
                                        ("ColBERT-full", "BM25")],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--benchmark", default="neurips-2024")
    ap.add_argument("--split", default="test")
    args = ap.parse_args()
    bench = Benchmark.open(Workspace.resolve().root / "benchmarks" / args.benchmark)
    qrels = bench.qrels(args.split, GROUND_TRUTHS)
    files = {name: bench.path / "runs" / f"{tag}.{args.split}.trec" for name, tag in RUNS.items()}
    missing = sorted(n for n, f in files.items() if not f.exists())
    scores = {n: {gt: per_query(read_run(f), qr, METRICS) for gt, qr in qrels.items()} for n, f in files.items()
              if n not in missing}
    out = {"benchmark": args.benchmark, "split": args.split, "runs": {n: str(f) for n, f in files.items()},
           "missing_runs": missing, "test": "paired t-test over queries", "findings": {}}
    md = []
    for finding, pairs in FINDINGS.items():
        rows = []
        md += [f"**{finding}**", "", "| A vs B | truth | " + " | ".join(f"{m} A / B (ratio, p)" for m in METRICS)
               + " |", "|---|---|" + "---|" * len(METRICS)]
        for a, b in pairs:
            if a in missing or b in missing:
                continue
            for gt in qrels:
                cells = {}
                for m in METRICS:
                    va, vb = scores[a][gt][m], scores[b][gt][m]
                    ma, mb = mean(va), mean(vb)
                    cells[m] = {"A": round(ma, 4), "B": round(mb, 4), "ratio": round(ma / mb, 3) if mb else None,
                                "p": round(paired_ttest(va, vb), 4)}
                rows.append({"A": a, "B": b, "truth": gt, "queries": len(scores[a][gt]["MAP"]), "metrics": cells})
                md.append(f"| {a} vs {b} | {gt} | " + " | ".join(
                    f"{c['A']:.3f} / {c['B']:.3f} ({c['ratio']:.2f}, p {c['p']:.3f})" for c in cells.values()) + " |")
        out["findings"][finding] = rows
        md.append("")
    OUT.with_suffix(".json").write_text(json.dumps(out, indent=1) + "\n")
    OUT.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    if missing:
        print(f"missing runs (pairs left out): {', '.join(missing)}", file=sys.stderr)


if __name__ == "__main__":
    main()
