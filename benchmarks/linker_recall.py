"""Recall of the citation linker: which unlinked references are really corpus papers, and why missed.

Three steps (all read-only on ``mustcite-work``; nothing is written there):

``sample``     draws a seeded random sample of unlinked references (``paper_id`` null in
               ``mustcite-work/extract/*.json``) and, for each, the nearest corpus papers (year <=
               citing year) by rapidfuzz ``token_set_ratio`` on normalised titles (the parsed title and
               the title recovered from ``raw``) and ``partial_ratio`` of corpus titles inside ``raw``.
               Writes ``benchmarks/results/linker_recall_candidates.json`` for the hand check.
``relink``     links every reference file of the folder in memory with the library's
               :func:`mustcite.extract.link.link_references` and compares with the stored
               ``paper_id`` fields (the old linker's output): links before/after, new, changed, lost.
               Writes ``benchmarks/results/linker_recall_relink.json`` (with a seeded sample of new links
               for the precision hand check).
``summary``    (default) joins the hand verdicts in ``benchmarks/results/linker_recall_judgments.json`` with the
               two files above; prints a JSON summary and writes ``benchmarks/results/linker_recall.json``.

    .venv/bin/python benchmarks/linker_recall.py sample
    .venv/bin/python benchmarks/linker_recall.py relink
    .venv/bin/python benchmarks/linker_recall.py summary
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq
from rapidfuzz import fuzz, process

from mustcite.corpus import normalize_title
from mustcite.extract import (
    META_SUFFIX,
    TitleIndex,
    clean_title,
    iter_reference_files,
    link_references,
    match_reference,
    recover_title,
)
from mustcite.io import atomic_write_json

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "mustcite-work"
EXTRACT = WORK / "extract"
CORPUS = WORK / "corpus" / "papers.parquet"
RESULTS = Path(__file__).parent / "results"
CANDIDATES = RESULTS / "linker_recall_candidates.json"
RELINK = RESULTS / "linker_recall_relink.json"
SUMMARY = RESULTS / "linker_recall.json"
JUDGMENTS = Path(__file__).parent / "results" / "linker_recall_judgments.json"

SEED, N_SAMPLE, N_PRECISION = 20250607, 400, 100


def _files() -> list[tuple[str, Path, int | None]]:
    out = []
    for stem, path in iter_reference_files(EXTRACT):
        try:
            year = json.loads(path.with_name(stem + META_SUFFIX).read_text(encoding="utf-8")).get("year")
        except (OSError, ValueError):
            year = None
        out.append((stem, path, year if isinstance(year, int) else None))
    return out


def _read(path: Path) -> list[dict]:
    try:
        refs = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return refs if isinstance(refs, list) else []


def _corpus() -> list[dict]:
    return pq.read_table(CORPUS, columns=["paper_id", "title", "year", "venue", "title_norm"]).to_pylist()


def _hash(key: str) -> str:
    return hashlib.sha1(f"{SEED}:{key}".encode()).hexdigest()


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if not n:
        return (0.0, 0.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (round(c - h, 4), round(c + h, 4))


# ------------------------------------------------------------------------------------ sample


def cmd_sample() -> None:
    files = _files()
    unlinked = []
    for stem, path, year in files:
        for i, r in enumerate(_read(path)):
            if isinstance(r, dict) and not r.get("paper_id"):
                unlinked.append((f"{stem}:{i}", year, r))
    rng = random.Random(SEED)
    sample = rng.sample(unlinked, N_SAMPLE)
    corpus = _corpus()
    norms = [r["title_norm"] or normalize_title(r["title"]) for r in corpus]
    years = [r["year"] for r in corpus]
    # inverted index of significant words, for the raw-string partial match
    post: dict[str, list[int]] = defaultdict(list)
    for i, n in enumerate(norms):
        for w in set(n.split()):
            if len(w) > 2:
                post[w].append(i)
    rows = []
    t0 = time.perf_counter()
    for key, cyear, r in sample:
        title, raw = r.get("title") or "", r.get("raw") or ""
        queries = {normalize_title(clean_title(title)), normalize_title(clean_title(recover_title(title, raw)))}
        queries.discard("")
        allowed = [i for i in range(len(norms)) if cyear is None or years[i] is None or years[i] <= cyear]
        choices = {i: norms[i] for i in allowed}
        cands: dict[int, dict] = {}
        for q in queries:
            for _, s, i in process.extract(q, choices, scorer=fuzz.token_set_ratio, score_cutoff=80, limit=3):
                c = cands.setdefault(i, {})
                c["token_set"] = max(c.get("token_set", 0), round(s, 1))
                c["ratio"] = max(c.get("ratio", 0), round(fuzz.ratio(q, norms[i]), 1))
        rawn = normalize_title(raw)
        words = [w for w in set(rawn.split()) if len(w) > 2 and len(post.get(w, ())) < 5000]
        hits = Counter(i for w in words for i in post.get(w, ()))
        pool = {i: norms[i] for i, h in hits.items()
                if h >= 2 and h >= 0.5 * len([w for w in set(norms[i].split()) if len(w) > 2]) and i in choices}
        for _, s, i in process.extract(rawn, pool, scorer=fuzz.partial_ratio, processor=None,
                                       score_cutoff=85, limit=3) if pool else ():
            if len(norms[i]) < 12:
                continue
            c = cands.setdefault(i, {})
            c["partial_raw"] = round(s, 1)
        rows.append({
            "key": key, "citing_year": cyear, "title": title, "year": r.get("year"), "raw": raw[:400],
            "recovered": recover_title(title, raw),
            "candidates": [{"paper_id": corpus[i]["paper_id"], "title": corpus[i]["title"],
                            "year": corpus[i]["year"], "venue": corpus[i]["venue"], **sc}
                           for i, sc in sorted(cands.items(), key=lambda kv: -max(kv[1].values()))],
        })
    RESULTS.mkdir(parents=True, exist_ok=True)
    atomic_write_json(CANDIDATES, {"seed": SEED, "unlinked_total": len(unlinked), "sample": rows})
    print(json.dumps({"unlinked_total": len(unlinked), "sample": len(rows),
                      "with_candidates": sum(1 for r in rows if r["candidates"]),
                      "elapsed_s": round(time.perf_counter() - t0, 1)}))


# ------------------------------------------------------------------------------------ relink


def cmd_relink() -> None:
    t0 = time.perf_counter()
    index = TitleIndex.from_parquet(CORPUS)
    titles = {r["paper_id"]: (r["title"], r["year"], r["venue"]) for r in _corpus()}
    refs_n = before = after = 0
    new, changed, lost = [], [], []
    for stem, path, year in _files():
        refs = _read(path)
        linked = link_references([r for r in refs if isinstance(r, dict)], index, year)
        for i, (old, nw) in enumerate(zip([r for r in refs if isinstance(r, dict)], linked)):
            refs_n += 1
            a, b = old.get("paper_id"), nw.get("paper_id")
            before += bool(a)
            after += bool(b)
            if a == b:
                continue
            hit = match_reference(nw, index, year) if b else None
            row = {"key": f"{stem}:{i}", "citing_year": year, "rule": hit[2] if hit else None,
                   "title": old.get("title"), "raw": (old.get("raw") or "")[:300],
                   "old": a, "new": b, "score": nw.get("link_score"), "by": nw.get("link_by"),
                   "new_title": titles.get(b, (None,))[0] if b else None,
                   "new_year": titles.get(b, (None, None))[1] if b else None}
            (new if not a else lost if not b else changed).append(row)
    doc = {"references": refs_n, "linked_before": before, "linked_after": after,
           "new_links": len(new), "changed_links": len(changed), "lost_links": len(lost),
           "new_by_rule": dict(Counter(r["rule"] for r in new).most_common()),
           # a stable sample: the new links with the smallest seeded hash of their key, so that a
           # small change of the rules keeps most of the hand-checked links in it
           "precision_sample": sorted(new, key=lambda r: _hash(r["key"]))[:N_PRECISION],
           "changed": changed[:200], "lost": lost[:200], "elapsed_s": round(time.perf_counter() - t0, 1)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    atomic_write_json(RELINK, doc)
    print(json.dumps({k: v for k, v in doc.items() if not isinstance(v, list)}))


# ----------------------------------------------------------------------------------- summary


def cmd_summary() -> dict:
    cand = json.loads(CANDIDATES.read_text(encoding="utf-8"))
    judg = json.loads(JUDGMENTS.read_text(encoding="utf-8"))
    rec = judg["recall"]
    sample = cand["sample"]
    missing = [r["key"] for r in sample if r["key"] not in rec]
    judged = [rec[r["key"]] for r in sample if r["key"] in rec]
    corpus_papers = [j for j in judged if j.get("match")]
    causes = Counter(j["cause"] for j in corpus_papers)
    fixed = Counter(j["cause"] for j in corpus_papers if j.get("fixed"))
    k, n = len(corpus_papers), len(judged)
    out: dict = {
        "sample": n, "unjudged": len(missing), "unlinked_total": cand["unlinked_total"],
        "corpus_papers": k, "share": round(k / n, 4) if n else None, "share_ci95": wilson(k, n),
        "est_unlinked_corpus_papers": round(k / n * cand["unlinked_total"]) if n else None,
        "causes": dict(causes.most_common()), "fixed_by_new_rules": dict(fixed.most_common()),
        "fixed_total": sum(fixed.values()),
    }
    if RELINK.exists():
        rl = json.loads(RELINK.read_text(encoding="utf-8"))
        out["whole_folder"] = {k2: rl[k2] for k2 in ("references", "linked_before", "linked_after", "new_links",
                                                     "changed_links", "lost_links", "new_by_rule")}
        prec = judg.get("precision", {})
        checked = [prec[r["key"]] for r in rl["precision_sample"] if r["key"] in prec]
        good = sum(1 for v in checked if v)
        out["new_link_precision"] = {"checked": len(checked), "correct": good,
                                     "precision": round(good / len(checked), 4) if checked else None,
                                     "ci95": wilson(good, len(checked))}
        ch = judg.get("changed", {})
        if ch:
            out["changed_links_checked"] = {"checked": len(ch), "new_correct": sum(1 for v in ch.values() if v)}
    # the new rules on the recall sample itself: every link they make there, against the verdicts
    index = TitleIndex.from_parquet(CORPUS)
    linked_ok = linked_wrong = 0
    refs_by_file: dict[str, list] = {}
    for r in sample:
        if r["key"] not in rec:
            continue
        stem, i = r["key"].rsplit(":", 1)
        refs = refs_by_file.setdefault(stem, _read(EXTRACT / f"{stem}.json"))
        hit = match_reference(refs[int(i)], index, r["citing_year"])
        if hit:
            linked_ok += hit[0] == rec[r["key"]].get("match")
            linked_wrong += hit[0] != rec[r["key"]].get("match")
    out["sample_links_by_new_code"] = {"correct": linked_ok, "wrong": linked_wrong,
                                       "corpus_papers_still_missed": k - linked_ok}
    out["recall_of_unlinked_corpus_papers_in_sample"] = round(linked_ok / k, 4) if k else None
    atomic_write_json(SUMMARY, out)
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "summary"
    {"sample": cmd_sample, "relink": cmd_relink, "summary": cmd_summary}[cmd]()
