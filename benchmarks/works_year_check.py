"""The time order of works and names through the user contract (default model after ``make demo``).

    python benchmarks/works_year_check.py   -> benchmarks/results/works_year_check.json

Runs ``mustcite recommend --queries Q.jsonl --format json --top 100`` on one query as of 2019 and
as of 2024 (Adam, CIFAR-10, ImageNet named in the abstract) and on a query that names two talking
face datasets (VoxCeleb, HDTF) as of 2024, and records: how many works each answer holds and the
latest year any result has (a 2019 query must get no work introduced after 2019 and nothing newer
than 2019), the first works, and what the results the abstract names say.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "works_year_check.json"
OPTIM = ("Adam-style adaptive optimizers for training deep networks",
         "We study adaptive gradient methods such as Adam and RMSProp for training convolutional networks on "
         "CIFAR-10 and ImageNet.")
QUERIES = [
    {"id": "q1", "title": OPTIM[0], "abstract": OPTIM[1], "year": 2019},
    {"id": "q2", "title": OPTIM[0], "abstract": OPTIM[1], "year": 2024},
    {"id": "q3", "title": "Audio-driven talking face generation with expressive head motion",
     "abstract": "We generate talking faces from one portrait and a speech clip, with lip sync and natural head "
                 "motion. We evaluate on VoxCeleb and HDTF.", "year": 2024},
]


def main() -> None:
    exe = str(Path(sys.executable).with_name("mustcite"))
    with tempfile.TemporaryDirectory() as tmp:
        q = Path(tmp) / "q.jsonl"
        q.write_text("".join(json.dumps(x) + "\n" for x in QUERIES))
        proc = subprocess.run([exe, "recommend", "--queries", str(q), "--format", "json", "--top", "100"],
                              capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    answers = []
    for line in proc.stdout.splitlines():
        o = json.loads(line)
        rs = o["results"]
        works = [(i, r) for i, r in enumerate(rs, 1) if r["source"] == "references"]
        answers.append({
            "query": o["id"], "year": o["year"], "results": len(rs), "works": len(works),
            "latest_year": max((r["year"] or 0) for r in rs) if rs else None,
            "top_works": [{"rank": i, "title": r["title"], "kind": r["kind"], "year": r["year"]} for i, r in works[:5]],
            "named": [{"rank": i, "title": r["title"], "kind": r["kind"], "source": r["source"],
                       "named": r["evidence"]["named"]} for i, r in enumerate(rs, 1) if r["evidence"].get("named")],
        })
    out = {"command": "mustcite recommend --queries Q.jsonl --format json --top 100 (default model after make demo)",
           "queries": QUERIES, "answers": answers}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(answers, indent=1))


if __name__ == "__main__":
    main()
