"""Collect every recorded venue page of shared/data/venue_pages (``--offline``) into a SEPARATE work
folder, build the corpus with the collected records, and write what the import did to
``benchmarks/results/collect_import.json``: per venue-year the collector's counts, and new /
merged / abstracts filled against the paper lists (overall and per venue-year).

    .venv/bin/python benchmarks/collect_import.py [--work /tmp/collect-work]   # a few minutes (corpus build)
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = [("COLT", 2024), ("UAI", 2025), ("ICML", 2024), ("ACL", 2024), ("NAACL", 2024), ("EMNLP", 2023),
        ("CVPR", 2019), ("CVPR", 2020), ("JMLR", 2019)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/collect-work")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "collect_import.json"))
    args = ap.parse_args()
    os.environ["MUSTCITE_WORK"] = args.work
    from mustcite.collect import Fetcher, collect_venue_year, collector_for
    from mustcite.config import find_data_dir
    from mustcite.corpus import BuildReport, ListedPapers, build_corpus, import_all, import_collected

    data = find_data_dir()
    vp = data / "venue_pages"
    out_dir = Path(args.work) / "collect"
    t0 = time.perf_counter()
    collected = []
    with Fetcher(offline=vp) as f:
        for venue, year in RUNS:
            rep = collect_venue_year(collector_for(venue), venue, year, f, out_dir)
            d = rep.to_dict()
            d.pop("errors")
            collected.append(d)
    t_collect = time.perf_counter() - t0

    t1 = time.perf_counter()
    report = build_corpus(data, args.work)
    t_build = time.perf_counter() - t1

    # per venue-year new / merged / filled (same rule as build.import_collected_dir)
    listed = ListedPapers(import_all(data, BuildReport()))
    per = {}
    for path in sorted((out_dir / "records").glob("*.jsonl")):
        row = {"main_track": 0, "new": 0, "merged": 0, "abstracts_filled": 0, "listed_with_abstract": 0,
               "collected_with_abstract": 0}
        for rec in import_collected(path):
            if not rec.main_track:
                continue
            row["main_track"] += 1
            row["collected_with_abstract"] += rec.has_abstract
            had = listed.listed_abstract(rec)
            if had is None:
                row["new"] += 1
                continue
            row["merged"] += 1
            row["listed_with_abstract"] += had
            row["abstracts_filled"] += rec.has_abstract and not had
        per[path.stem] = row
    result = {
        "command": "benchmarks/collect_import.py --work " + args.work,
        "offline_dir": str(vp),
        "collect_seconds": round(t_collect, 2),
        "build_seconds": round(t_build, 2),
        "collected": collected,
        "import": report.collected,
        "import_per_venue_year": per,
        "corpus": {"total": report.total, "with_abstract": report.with_abstract,
                   "duplicates_merged": report.duplicates_merged},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({"import": report.collected, "per": per}, indent=1))


if __name__ == "__main__":
    main()
