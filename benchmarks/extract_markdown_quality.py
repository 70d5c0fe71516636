"""Quality and speed of the Nougat Markdown extractor over all NeurIPS 2023/2024 full texts.

Runs :func:`mustcite.extract.markdown.extract_markdown` over every ``<id>.md.gz`` of
``neurips/fulltext_2024`` and ``fulltext_2023`` with :func:`mustcite.parallel.pmap` and writes
``benchmarks/results/extract_markdown_quality.json``: papers/s, references per paper, share of
numeric papers whose list is complete (entry count == highest reference number), share of
in-text mentions resolved, counts per failure mode and status.

    .venv/bin/python benchmarks/extract_markdown_quality.py [--workers 2] [--limit N]
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import time
from collections import Counter
from pathlib import Path

from mustcite.config import find_data_dir
from mustcite.extract import extract_markdown
from mustcite.io import atomic_write_json
from mustcite.parallel import pmap

OUT = Path(__file__).parent / "results" / "extract_markdown_quality.json"


def one(path: str) -> dict:
    t0 = time.perf_counter()
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        text = fh.read()
    p = extract_markdown(text, path)
    s = p.stats
    return {"path": path, "status": p.status, "modes": p.failure_modes,
            "style": s.get("citation_style"), "n_refs": len(p.references),
            "n_raw": s.get("n_raw_entries", 0) - s.get("n_superseded", 0), "max_num": s.get("max_ref_number", 0),
            "n_labelled": s.get("n_labelled", 0), "by_position": s.get("numeric_keys_by_position", False),
            "mentions": s.get("mentions_total", 0), "resolved": s.get("mentions_resolved", 0),
            "contexts": s.get("n_contexts", 0), "has_title": bool(p.title),
            "has_abstract": bool(p.abstract), "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    data = find_data_dir()
    files = sorted(str(p) for y in ("fulltext_2024", "fulltext_2023")
                   for p in (data / "neurips" / y).glob("*.md.gz"))
    if args.limit:
        files = files[:args.limit]
    t0 = time.perf_counter()
    rows = list(pmap(one, files, workers=args.workers, desc="extract", chunksize=8))
    wall = time.perf_counter() - t0
    numeric = [r for r in rows if r["style"] == "numeric" and r["n_labelled"] > r["n_raw"] / 2]
    complete = [r for r in numeric if r["n_raw"] == r["max_num"]]
    refs = [r["n_refs"] for r in rows if r["status"] != "failed"]
    modes = Counter(m for r in rows for m in r["modes"])
    tot = sum(r["mentions"] for r in rows)
    res = sum(r["resolved"] for r in rows)
    by_style = {}
    for st in ("numeric", "author-year", "alpha"):
        sub = [r for r in rows if r["style"] == st]
        t, s = sum(r["mentions"] for r in sub), sum(r["resolved"] for r in sub)
        by_style[st] = {"papers": len(sub), "mentions": t, "resolved": s,
                        "resolved_share": round(s / t, 4) if t else None}
    slow = sorted(rows, key=lambda r: -r["seconds"])[:5]
    result = {
        "papers": len(rows), "workers": args.workers, "wall_seconds": round(wall, 2),
        "papers_per_second": round(len(rows) / wall, 2),
        "cpu_seconds_per_paper_mean": round(statistics.mean(r["seconds"] for r in rows), 4),
        "slowest": [{"path": Path(r["path"]).name, "seconds": round(r["seconds"], 3)} for r in slow],
        "status": dict(Counter(r["status"] for r in rows)),
        "failure_modes": dict(modes.most_common()),
        "citation_style": dict(Counter(r["style"] for r in rows)),
        "references_per_paper": {"mean": round(statistics.mean(refs), 2), "median": statistics.median(refs)},
        "numeric_labelled_papers": len(numeric),
        "numeric_complete_share": round(len(complete) / len(numeric), 4) if numeric else None,
        "numeric_keys_by_position_papers": sum(r["by_position"] for r in rows),
        "mentions_total": tot, "mentions_resolved": res,
        "mentions_resolved_share": round(res / tot, 4) if tot else None,
        "by_style": by_style,
        "contexts_total": sum(r["contexts"] for r in rows),
        "papers_with_title": sum(r["has_title"] for r in rows),
        "papers_with_abstract": sum(r["has_abstract"] for r in rows),
        "examples_per_failure_mode": {m: [Path(r["path"]).name for r in rows if m in r["modes"]][:6]
                                      for m in modes},
    }
    atomic_write_json(OUT, result)
    print(result)


if __name__ == "__main__":
    main()
