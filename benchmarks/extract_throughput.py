"""Throughput of extraction + linking on the real NeurIPS full texts (2024 and 2023 Markdown).

Extracts every ``.md.gz`` in ``neurips/fulltext_2024`` and ``fulltext_2023`` (2,920 papers) with N
workers into a scratch folder, links the references against the corpus store, and reports
papers/s (linking and index build included; target >= 20/s with 2 workers), statuses, reference
and mention counts, and the link rate. Writes ``benchmarks/results/extract_throughput.json``.

    MUSTCITE_WORK=... .venv/bin/python benchmarks/extract_throughput.py [--workers 2] [--limit N]

Needs the corpus store (``mustcite corpus build``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import time
from pathlib import Path

from mustcite.config import Workspace, find_data_dir
from mustcite.errors import DataMissingError
from mustcite.extract import FUZZY_THRESHOLD, extract_paths, link_dir
from mustcite.io import atomic_write_json


def _cpu() -> float:
    """CPU seconds used by this process and its reaped worker processes."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0, help="only the first N papers of each year (0: all)")
    ap.add_argument("--corpus", default=None, help="papers.parquet (default: <work>/corpus/papers.parquet)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "extract_throughput.json"))
    args = ap.parse_args()
    data = find_data_dir(args.data)
    ws = Workspace.resolve()
    corpus = Path(args.corpus) if args.corpus else ws.root / "corpus" / "papers.parquet"
    if not corpus.is_file():
        raise DataMissingError("corpus store not found", path=corpus, hint="run `mustcite corpus build` first")
    inputs: list[Path] = []
    for year in ("fulltext_2024", "fulltext_2023"):
        files = sorted((data / "neurips" / year).glob("*.md.gz"))
        inputs += files[: args.limit] if args.limit else files
    scratch = ws.cache / "bench_extract_throughput"
    if scratch.exists():
        shutil.rmtree(scratch)  # link_dir links every file in the folder: start empty

    load_before = os.getloadavg()
    t0, c0 = time.perf_counter(), _cpu()
    summary = extract_paths(inputs, scratch, workers=args.workers, force=True, progress=True)
    t_extract, c_extract = time.perf_counter() - t0, _cpu() - c0
    t1, c1 = time.perf_counter(), _cpu()
    link = link_dir(scratch, corpus, workers=args.workers, progress=True)
    t_link, c_link = time.perf_counter() - t1, _cpu() - c1
    total = t_extract + t_link
    cpu_per_paper = (c_extract + c_link) / summary.papers
    result = {
        "papers": summary.papers, "workers": args.workers,
        "cpu_count": os.cpu_count(), "python": platform.python_version(),
        "extract_seconds": round(t_extract, 2), "link_seconds": round(t_link, 2),
        "total_seconds": round(total, 2),
        "papers_per_second": round(summary.papers / total, 2),
        "extract_papers_per_second": round(summary.papers / t_extract, 2),
        "link_papers_per_second": round(link.papers / t_link, 2) if t_link else None,
        "target_papers_per_second": 20,
        # wall-clock figures depend on what else runs on the machine; CPU time does much less
        "load_average_1m_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "cpu_ms_per_paper_extract": round(1000 * c_extract / summary.papers, 1),
        "cpu_ms_per_paper_link": round(1000 * c_link / summary.papers, 1),
        "papers_per_second_if_workers_had_free_cores": round(args.workers / cpu_per_paper, 2),
        "status": {"ok": summary.ok, "flagged": summary.flagged, "failed": summary.failed},
        "failure_modes": summary.failure_modes,
        "references": summary.references, "mentions": summary.mentions,
        "linked": link.linked, "linked_exact": link.exact, "link_rate": round(link.rate, 4),
        "fuzzy_threshold": FUZZY_THRESHOLD, "corpus": str(corpus), "corpus_papers": link.corpus_papers,
    }
    atomic_write_json(args.out, result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
