"""The catalogue of cited works, checked by hand: draw a sample, then score the judgements.

    python benchmarks/works_check.py sample [--extract DIR] [--n 200] [--seed 0]
        -> benchmarks/results/works_check_sample.jsonl (one work a line: its mention forms, and the
           nearest other works by title, which may be the same work split apart)
    python benchmarks/works_check.py score
        -> benchmarks/results/works_check.json (precision and recall of the clustering)

Judging (one JSON line per work in ``works_check_labels.jsonl``):
``{"work_id": ..., "wrong_forms": [indices of forms that name another work], "same_as": [indices of
near works that are this work]}``. Precision = mentions of the right work / mentions in the
sampled works; recall = mentions in the work / (those + mentions of the same work left in the
near works judged the same).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from common import hand_check_cli  # noqa: E402  (benchmarks/ is on the path when run as a script)
from rapidfuzz import fuzz, process

from mustcite.extract import cluster_mentions, collect_mentions, identifies, make_work

RESULTS = Path(__file__).resolve().parent / "results"
SAMPLE = RESULTS / "works_check_sample.jsonl"
LABELS = RESULTS / "works_check_labels.jsonl"


def sample(extract: Path, n: int, seed: int) -> None:
    mentions = collect_mentions([extract], progress=False)
    works = []
    for g in cluster_mentions(mentions):
        ms = [mentions[i] for i in g]
        if identifies(ms):
            works.append((make_work(ms), ms))
    rng = random.Random(seed)
    multi = [w for w in works if w[0].n_citing >= 2]
    picked = rng.sample(multi, n // 2)
    seen = {w.work_id for w, _ in picked}
    picked += rng.sample([w for w in works if w[0].work_id not in seen], n - n // 2)
    titles = [w.title.lower() for w, _ in works]
    rows = []
    for k, (w, ms) in enumerate(picked):
        forms = Counter((m.title, m.year, m.surname) for m in ms)
        raw_of = {}
        for m in ms:
            raw_of.setdefault((m.title, m.year, m.surname), m.raw[:220])
        near = []
        for _title, score, j in process.extract(w.title.lower(), titles, scorer=fuzz.ratio, limit=8):
            other, oms = works[j]
            if other.work_id == w.work_id or score < 75:
                continue
            near.append({"title": other.title, "year": other.year, "first_author": (other.authors or [""])[0],
                         "mentions": len(oms), "score": round(score, 1), "raw": oms[0].raw[:220]})
        rows.append({
            "n": k, "work_id": w.work_id, "stratum": "cited by 2+" if k < n // 2 else "any work",
            "title": w.title, "year": w.year, "authors": w.authors[:3], "kind": w.kind, "mentions": len(ms),
            "forms": [{"i": i, "title": t, "year": y, "first_author": s, "mentions": c, "raw": raw_of[(t, y, s)]}
                      for i, ((t, y, s), c) in enumerate(forms.most_common(15))],
            "cited_as": sorted([m.citing, m.target] for m in ms),
            "forms_not_shown": max(0, len(forms) - 15),
            "near": near[:5]})
    RESULTS.mkdir(exist_ok=True)
    with SAMPLE.open("w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(f"{len(rows)} works -> {SAMPLE}")


def score() -> dict:
    sample_rows = {r["work_id"]: r for r in map(json.loads, SAMPLE.read_text().splitlines())}
    labels = {r["work_id"]: r for r in map(json.loads, LABELS.read_text().splitlines())}
    out = {}
    for stratum in ("cited by 2+", "any work", "all"):
        right = total = missed = 0
        works = 0
        for wid, row in sample_rows.items():
            if stratum != "all" and row["stratum"] != stratum or wid not in labels:
                continue
            works += 1
            lab = labels[wid]
            wrong = set(lab.get("wrong_forms", []))
            n = sum(f["mentions"] for f in row["forms"])
            bad = sum(f["mentions"] for f in row["forms"] if f["i"] in wrong)
            right += n - bad
            total += n
            missed += sum(row["near"][j]["mentions"] for j in lab.get("same_as", []) if j < len(row["near"]))
        in_stratum = [w for w in sample_rows
                      if w in labels and (stratum == "all" or sample_rows[w]["stratum"] == stratum)]
        out[stratum] = {"works": works, "mentions": total, "precision": round(right / total, 4) if total else None,
                        "recall": round(right / (right + missed), 4) if right + missed else None,
                        "works_with_a_wrong_form": sum(bool(labels[w].get("wrong_forms")) for w in in_stratum),
                        "works_split": sum(bool(labels[w].get("same_as")) for w in in_stratum)}
    (RESULTS / "works_check.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    hand_check_cli(__doc__, sample, score, ("extract", Path("mustcite-work/extract")))
