"""Time the full corpus build (wall and CPU), its peak memory, and the main store reads.

Usage: ``.venv/bin/python benchmarks/corpus_build.py [--data DIR] [--work DIR] [--out FILE]``
Writes ``benchmarks/results/corpus_build.json``. The work dir defaults to a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

from mustcite.config import find_data_dir
from mustcite.corpus import CorpusStore, build_corpus, corpus_stats, load_papers
from mustcite.io import atomic_write_json


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=None, help="data dir (default: as mustcite finds it)")
    ap.add_argument("--work", default=None, help="work dir (default: a temporary folder)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "corpus_build.json"))
    args = ap.parse_args(argv)
    data_dir = find_data_dir(args.data)
    with tempfile.TemporaryDirectory(prefix="mustcite-bench-") as tmp:
        work = Path(args.work or tmp)
        load_before = os.getloadavg()
        t0, c0 = time.perf_counter(), _cpu()
        report = build_corpus(data_dir, work)
        build_wall, build_cpu = time.perf_counter() - t0, _cpu() - c0
        peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

        t0 = time.perf_counter()
        stats = corpus_stats(work)
        stats_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        table = load_papers(work, years=range(2018, 2024), columns=["paper_id", "title", "abstract"])
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        with CorpusStore(work) as store:
            hits = store.by_title("Token Merging: Your ViT But Faster")
        by_title_s = time.perf_counter() - t0
        store_bytes = (work / "corpus" / "papers.parquet").stat().st_size
    result = {
        "build_wall_s": round(build_wall, 2), "build_cpu_s": round(build_cpu, 2),
        "peak_rss_mb": round(peak_rss_mb, 1),
        "records_read": report.records_read, "total": report.total,
        "with_abstract": report.with_abstract, "duplicates_merged": report.duplicates_merged,
        "store_mb": round(store_bytes / 2**20, 2),
        "stats_s": round(stats_s, 3), "load_2018_2023_s": round(load_s, 3),
        "load_2018_2023_rows": table.num_rows, "by_title_s": round(by_title_s, 3),
        "by_title_hits": len(hits), "stats_total": stats.total,
        "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                    "cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before]},
        "data_dir": str(data_dir), "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    atomic_write_json(args.out, result)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
