"""Figures of the import of papers' .bbl bibliographies (``mustcite extract-bibliographies``) and of the
catalogue of cited works grown with them, and the seeded samples checked by hand.

Usage::

    python benchmarks/cs768_import.py --imported W/extract-cs768 --source DATA/citations_cs768/papers.jsonl.xz \\
        --corpus W/corpus [--old-corpus OLD/corpus] [--out benchmarks/results/cs768_import.json]

- ``import``: papers, items (``\\bibitem`` / ``\\entry``), items read, references kept (with a year), with a
  title, with authors, linked to the corpus; the citing year's source; excluded papers and why; all
  by the arXiv id's year.
- ``links``: every reference of the papers kept (not ``excluded/``) resolved to a corpus paper, a work of
  the catalogue (``work_citations.parquet``), or nothing, by the citing year's band.
- ``works``: the catalogue against an older one (``--old-corpus``): works, works kept with the same id,
  new works (by the work's year and by the first citing year), names.
- Hand checks: ``cs768_import_handcheck.json`` (50 items, seeded, over every item of the input: the
  ``.bbl`` text and what was read from it) and ``cs768_link_handcheck.json`` (40 references linked to a
  corpus paper, seeded), written when missing or with ``--write-samples`` (a verdict already written is
  kept for the same item); the figures count the verdicts.
"""

from __future__ import annotations

import argparse
import json
import lzma
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
BANDS = ((2016, 2018), (2019, 2020), (2021, 2022), (2023, 2024))
SEED = 768
#: the items checked by hand (a second draw: the first, seed 768, guided fixes of the reader)
ITEM_SEED = 769


def band(year: int | None) -> str:
    for a, b in BANDS:
        if year is not None and a <= year <= b:
            return f"{a}-{b}"
    return "other"


def import_figures(imported: Path) -> dict:
    doc = json.loads((imported / "summary.json").read_text())
    rows = doc["papers"]
    by_year: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        if r.get("error"):
            continue
        y = str(r.get("arxiv_year") or "unknown")
        c = by_year[y if y >= "2015" or y == "unknown" else "before 2015"]
        c["papers"] += 1
        c["excluded"] += bool(r.get("excluded"))
        c["failed"] += r["status"] == "failed"
        c["items"] += r["n_raw_entries"]
        c["items_read"] += r["n_raw_entries"] - r["n_unreadable"]
        c["references_with_year"] += r["n_references"]
        c["with_title"] += r["n_with_title"]
        c["with_authors"] += r["n_with_authors"]
        c["linked_corpus"] += r["n_linked"]
    total = Counter()
    for c in by_year.values():
        total.update(c)
    s = doc["import"]
    return {"papers": s["papers"], "written": s["written"], "excluded": s["excluded"], "failed": s["failed"],
            "bad_lines": len(s["bad_lines"]), "year_source": s["year_source"], "corpus_link_by": s["corpus_link_by"],
            "totals": dict(total), "by_arxiv_year": {k: dict(by_year[k]) for k in sorted(by_year)},
            "shares": {"items_read": round(total["items_read"] / total["items"], 4),
                       "with_year": round(total["references_with_year"] / total["items"], 4),
                       "with_title": round(total["with_title"] / total["items"], 4),
                       "with_authors": round(total["with_authors"] / total["items"], 4)}}


def link_figures(imported: Path, corpus: Path) -> dict:
    import pyarrow.parquet as pq

    works_of: dict[tuple[str, int], str] = {}
    cit = corpus / "work_citations.parquet"
    if cit.is_file():
        t = pq.read_table(cit, columns=["work_id", "citing", "target"]).to_pylist()
        works_of = {(r["citing"], r["target"]): r["work_id"] for r in t}
    by: dict[str, Counter] = defaultdict(Counter)
    for f in sorted(imported.glob("*.json")):
        if f.name == "summary.json" or f.name.endswith(".meta.json"):
            continue
        stem = f.name[:-5]
        meta = json.loads((imported / f"{stem}.meta.json").read_text())
        c = by[band(meta.get("year"))]
        c["papers"] += 1
        for r in json.loads(f.read_text()):
            c["references"] += 1
            if r.get("paper_id"):
                c["corpus"] += 1
            elif (stem, r["target"]) in works_of:
                c["work"] += 1
            else:
                c["nothing"] += 1
    out = {}
    total = Counter()
    for k in sorted(by):
        total.update(by[k])
    for k, c in [*sorted(by.items()), ("all", total)]:
        n = c["references"] or 1
        out[k] = {**dict(c), **{f"{x}_share": round(c[x] / n, 4) for x in ("corpus", "work", "nothing")}}
    return out


def works_figures(corpus: Path, old: Path | None) -> dict:
    import pyarrow.parquet as pq

    new = pq.read_table(corpus / "works.parquet", columns=["work_id", "year", "first_cited", "n_citing"]).to_pylist()
    out = {"works": len(new), "names": json.loads((corpus / "works.json").read_text())["names"]}
    if old is None:
        return out
    prev = pq.read_table(old / "works.parquet", columns=["work_id"]).column("work_id").to_pylist()
    prev_ids = set(prev)
    ids = {w["work_id"] for w in new}
    added = [w for w in new if w["work_id"] not in prev_ids]
    out.update({"works_before": len(prev), "kept_same_id": len(prev_ids & ids), "lost_ids": len(prev_ids - ids),
                "new_works": len(added),
                "new_by_work_year": dict(sorted(Counter(band(w["year"]) if w["year"] and w["year"] >= 2016 else
                                                        ("before 2016" if w["year"] else "unknown")
                                                        for w in added).items())),
                "new_by_first_citing_year": dict(sorted(Counter(str(w["first_cited"]) for w in added).items())),
                "new_cited_by_two_or_more": sum(w["n_citing"] >= 2 for w in added),
                "names_before": json.loads((old / "works.json").read_text())["names"]})
    return out


def _keep_verdicts(path: Path, sample: list[dict], key) -> list[dict]:
    if path.is_file():
        old = {key(r): r for r in json.loads(path.read_text()).get("sample", [])}
        for r in sample:
            o = old.get(key(r))
            if o:
                r.update({k: v for k, v in o.items() if k.startswith("verdict") or k == "note"})
    return sample


def item_sample(source: Path, n: int = 50, seed: int = SEED) -> list[dict]:
    from mustcite.extract import parse_bbl

    papers = [json.loads(line) for line in lzma.open(source, "rt", encoding="utf-8")]
    sizes = [(i, j, len(re.findall(r"\\bibitem(?![a-zA-Z])|\\entry\{", b["text"])))
             for i, p in enumerate(papers) for j, b in enumerate(p["bbl"])]
    pool = [(i, j, k) for i, j, m in sizes for k in range(m)]
    rng = random.Random(seed)
    out = []
    for i, j, k in sorted(rng.sample(pool, n)):
        p, b = papers[i], papers[i]["bbl"][j]
        entries, messages = parse_bbl(b["text"], b["file"], keep_unreadable=True)
        if k >= len(entries):
            out.append({"paper": p["id"], "file": b["file"], "item": k, "read": None})
            continue
        e = entries[k]
        ln = int(e.source.rsplit(":", 1)[1])
        lines = b["text"].splitlines()[ln - 1:ln + 12]
        text = "\n".join(lines)
        cut = re.search(r"\n\s*\n|\n\\bibitem|\n\\entry", text[1:])
        out.append({"paper": p["id"], "file": b["file"], "item": k, "line": ln,
                    "bbl": text[:cut.start() + 1] if cut else text,
                    "read": {"title": e.title, "authors": e.authors, "year": e.year, "venue": e.venue,
                             "arxiv": e.arxiv, "doi": e.doi, "unreadable": e.unreadable}})
    return out


def link_sample(imported: Path, corpus: Path, n: int = 40) -> list[dict]:
    import pyarrow.parquet as pq

    rows = []
    for f in sorted(imported.glob("*.json")):
        if f.name == "summary.json" or f.name.endswith(".meta.json"):
            continue
        year = json.loads((imported / f"{f.name[:-5]}.meta.json").read_text()).get("year")
        for r in json.loads(f.read_text()):
            if r.get("paper_id"):
                rows.append((f.name[:-5], year, r))
    rng = random.Random(SEED)
    picked = sorted(rng.sample(rows, n), key=lambda x: (x[0], x[2]["target"]))
    ids = {r["paper_id"] for _, _, r in picked}
    t = pq.read_table(corpus / "papers.parquet", columns=["paper_id", "title", "year", "venue"]).to_pylist()
    by_id = {r["paper_id"]: r for r in t if r["paper_id"] in ids}
    return [{"citing": s, "citing_year": y, "target": r["target"], "ref_title": r["title"], "ref_year": r["year"],
             "ref_raw": r["raw"][:300], "link_by": r.get("link_by", "title"), "link_score": r["link_score"],
             "corpus_title": by_id[r["paper_id"]]["title"], "corpus_year": by_id[r["paper_id"]]["year"],
             "corpus_venue": by_id[r["paper_id"]]["venue"]} for s, y, r in picked]


def verdict_counts(sample: list[dict], field: str = "verdict") -> dict:
    return dict(Counter(str(r.get(field)) for r in sample))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--imported", type=Path, required=True)
    ap.add_argument("--source", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--old-corpus", type=Path)
    ap.add_argument("--out", type=Path, default=RESULTS / "cs768_import.json")
    ap.add_argument("--write-samples", action="store_true",
                    help="draw the hand-check samples again (verdicts already written are kept)")
    args = ap.parse_args(argv)
    doc = {"import": import_figures(args.imported), "links": link_figures(args.imported, args.corpus)}
    if (args.corpus / "works.parquet").is_file():
        doc["works"] = works_figures(args.corpus, args.old_corpus)
    items_path = RESULTS / "cs768_import_handcheck.json"
    if args.write_samples or not items_path.is_file():
        sample = _keep_verdicts(items_path, item_sample(args.source, seed=ITEM_SEED),
                                lambda r: (r["paper"], r["file"], r["item"]))
        items_path.write_text(json.dumps({"check": {"seed": ITEM_SEED, "sample": sample}}, indent=1,
                                         ensure_ascii=False) + "\n")
    items = json.loads(items_path.read_text())
    links_path = RESULTS / "cs768_link_handcheck.json"
    if args.write_samples or not links_path.is_file():
        sample = _keep_verdicts(links_path, link_sample(args.imported, args.corpus),
                                lambda r: (r["citing"], r["target"]))
        links_path.write_text(json.dumps({"seed": SEED, "what": "40 references linked to a corpus paper, seeded; "
                                          "verdict: ok (the same work) | wrong", "sample": sample},
                                         indent=1, ensure_ascii=False) + "\n")
    links = json.loads(links_path.read_text())["sample"]
    doc["handcheck"] = {
        "items": {f: verdict_counts(items["check"]["sample"], f"verdict_{f}") for f in ("title", "authors", "year")},
        "items_development_before": items.get("development", {}).get("ok_before"),
        "items_development_after": items.get("development", {}).get("ok_after"),
        "links": verdict_counts(links)}
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    json.dump(doc, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
