"""The names mined from citation contexts, checked by hand: draw a sample, then score the judgements.

    python benchmarks/names_check.py sample [--work DIR] [--n 200] [--seed 0]
        -> benchmarks/results/names_check_sample.jsonl (one name a line: the name, the corpus paper
           or work it is said to stand for, and up to three contexts in which a citing paper uses it)
    python benchmarks/names_check.py score
        -> benchmarks/results/names_check.json (precision, overall and by support)

Judging (one JSON line per name in ``names_check_labels.jsonl``): ``{"n": ..., "key": ...,
"target": ..., "correct": true|false, "note": ...}``; a name is correct when a reader of the
contexts would take it to mean that paper or work (the dataset, method, model or tool it
introduced), not a neighbouring one or a plain word.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

import duckdb
from common import hand_check_cli  # noqa: E402  (benchmarks/ is on the path when run as a script)

from mustcite.extract import NAMES_FILE, WorkIndex, iter_reference_files, marker_starts, name_key
from mustcite.io import read_json

RESULTS = Path(__file__).resolve().parent / "results"
SAMPLE = RESULTS / "names_check_sample.jsonl"
LABELS = RESULTS / "names_check_labels.jsonl"


def _bucket(support: int) -> str:
    return "support 2" if support == 2 else "support 3-9" if support < 10 else "support 10+"


def sample(work: Path, n: int, seed: int) -> None:
    corpus = work / "corpus"
    names = duckdb.sql(f"select * from '{corpus / NAMES_FILE}' order by key, target").fetchall()
    cols = ["key", "name", "target", "support", "share", "first_year"]
    rows = [dict(zip(cols, r)) for r in names]
    picked = random.Random(seed).sample(rows, n)
    works = WorkIndex.load(corpus)
    titles = {pid: (t, y, v, a) for pid, t, y, v, a in duckdb.sql(
        f"select paper_id, title, year, venue, authors from '{corpus / 'papers.parquet'}'").fetchall()}
    want = defaultdict(list)
    for k, r in enumerate(picked):
        want[r["target"]].append(k)
    examples: dict[int, list[str]] = defaultdict(list)
    for stem, path in iter_reference_files(work / "extract", labelled=True):
        refs = read_json(path)
        for ref in refs if isinstance(refs, list) else []:
            if not isinstance(ref, dict):
                continue
            tgt = ref.get("paper_id") or works.work_of(stem, ref.get("target"))
            for k in want.get(tgt, ()):
                if len(examples[k]) >= 3 or any(e.startswith(f"[{stem}]") for e in examples[k]):
                    continue
                for c in ref.get("contexts") or []:
                    text = c.get("context") if isinstance(c, dict) else ""
                    for start in marker_starts(text or "", str(ref.get("cite") or "")):
                        if name_key(picked[k]["name"]) in name_key(text[max(0, start - 80):start]):
                            examples[k].append(f"[{stem}] ...{text[max(0, start - 240):start + 60]}...")
                            break
                    if len(examples[k]) >= 3:
                        break
    out = []
    for k, r in enumerate(picked):
        if r["target"].startswith("w-"):
            w = works.works[r["target"]]
            target = {"title": w["title"], "year": w["year"], "venue": w["venue"], "authors": w["authors"][:3],
                      "kind": w["kind"], "source": "references"}
        else:
            t, y, v, a = titles.get(r["target"], ("?", None, "", []))
            target = {"title": t, "year": y, "venue": v, "authors": list(a or [])[:3], "kind": "paper",
                      "source": "corpus"}
        r["share"] = round(r["share"], 3)
        out.append({"n": k, **r, "stratum": _bucket(r["support"]), "stands_for": target, "contexts": examples[k]})
    RESULTS.mkdir(exist_ok=True)
    with SAMPLE.open("w") as f:
        for r in out:
            f.write(json.dumps(r) + "\n")
    print(f"{len(out)} names -> {SAMPLE}")


def score() -> dict:
    rows = {r["n"]: r for r in map(json.loads, SAMPLE.read_text().splitlines())}
    labels = {r["n"]: r for r in map(json.loads, LABELS.read_text().splitlines())}
    out = {}
    for stratum in ("support 2", "support 3-9", "support 10+", "all"):
        judged = [labels[k] for k, r in rows.items() if k in labels and (stratum == "all" or r["stratum"] == stratum)]
        right = sum(bool(j["correct"]) for j in judged)
        out[stratum] = {"names": len(judged), "correct": right,
                        "precision": round(right / len(judged), 4) if judged else None}
    out["wrong"] = [{"name": rows[k]["name"], "stands_for": rows[k]["stands_for"]["title"], "note": j.get("note", "")}
                    for k, j in sorted(labels.items()) if not j["correct"]]
    (RESULTS / "names_check.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    hand_check_cli(__doc__, sample, score, ("work", Path("mustcite-work")))
