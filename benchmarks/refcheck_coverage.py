"""Which venue-years ``check-refs`` may answer ``not_found`` for, and how many records each witness check distrusts.

Run::

    .venv/bin/python benchmarks/refcheck_coverage.py --work WORK     # -> benchmarks/results/refcheck_coverage.json

**Completeness** (``venue_years``): for each venue-year of the corpus, the papers held, the papers of
each list it was read from, the measure (:mod:`mustcite.refcheck.coverage`: the proceedings' own
count, the proceedings' own list, or two lists' capture-recapture estimate; one list measures
nothing), the share held, whether it is complete, and its tracks in the side records (papers,
basis, complete). ``not_found_possible`` lists the venue-years where an entry that names only the
venue may be answered ``not_found`` (the main track and every track cited under the main name held
completely); ``pages``: the share of ML Anthology main-track records of a few venue-years with at
most :data:`~mustcite.refcheck.coverage.SHORT_PAGES` pages (the evidence a short page count is).

**Witness checks** (``distrusted``): over the corpus, the records whose sources disagree on the
title or on the authors (by kind: names, count, order), the records read from one list only (their
author list is not trusted against an entry naming more authors), the records whose sources
disagree with a name of one being the start of the other's (a name cut short), and the venue-years
whose DOIs may accuse (confirmed by title witnesses, none contradicted) against those that may not.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "refcheck_coverage.json"
#: ML Anthology files whose page ranges are read for the short-page evidence
PAGE_FILES = ("neurips-2019", "icml-2019", "cvpr-2021", "aistats-2020", "icml-2023", "neurips-2023")


def page_shares(data: Path) -> dict:
    from mustcite.refcheck import SHORT_PAGES

    out = {}
    for f in PAGE_FILES:
        path = data / "anthology" / "records" / f"{f}.jsonl.gz"
        if not path.is_file():
            continue
        counts = []
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                m = re.fullmatch(r"\s*(\d+)\s*-+\s*(\d+)\s*", str(r.get("pages") or ""))
                if m and (r.get("track") or "main") == "main":
                    counts.append(int(m.group(2)) - int(m.group(1)) + 1)
        if counts:
            counts.sort()
            out[f] = {"records_with_pages": len(counts),
                      f"at_most_{SHORT_PAGES}": sum(c <= SHORT_PAGES for c in counts),
                      "p01": counts[len(counts) // 100], "median": counts[len(counts) // 2]}
    return out


def distrusted(index) -> dict:
    from mustcite.refcheck import name_tokens

    by_field: Counter = Counter()
    kinds: Counter = Counter()
    cut = 0
    for fields in index.disputes.values():
        for fld in fields:
            by_field[fld] += 1
        values = fields.get("authors") or []
        lists = [[n.strip() for n in v.split(";") if n.strip()] for _, v in values]
        if lists and len({len(x) for x in lists}) > 1:
            kinds["count"] += 1
        elif lists and len({tuple(sorted(x)) for x in lists}) > 1:
            kinds["names"] += 1
        elif lists:
            kinds["order"] += 1
        fam = [[(name_tokens(n) or [""])[-1] for n in x] for x in lists]
        if any(len(a) >= 3 and a != b and b.startswith(a) for x in fam for y in fam if len(x) == len(y)
               for a, b in zip(x, y)):
            cut += 1
    one_list = sum(1 for n in index.n_lists if n <= 1)
    dois = Counter()
    for (v, y), n in Counter((index.venue[r], index.year[r]) for r, d in enumerate(index.doi) if d).items():
        dois["witnessed" if index.dois_witnessed(v, y) else "not witnessed"] += n
    return {"records": len(index.title), "sources_disagree_title": by_field.get("title", 0),
            "sources_disagree_authors": by_field.get("authors", 0), "authors_disagreement_kinds": dict(kinds),
            "sources_disagree_year": by_field.get("year", 0),
            "a_name_cut_short_in_one_source": cut, "read_from_one_list": one_list,
            "records_with_doi": dict(dois),
            "doi_venue_years_checked": {f"{v} {y}": list(c) for (v, y), c in sorted(index.doi_checks.items())}}


def main(argv: list[str] | None = None) -> int:
    from mustcite.config import Workspace, find_data_dir
    from mustcite.refcheck import TRACKS_UNDER_MAIN_NAME, load_index

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    index = load_index(Workspace.resolve(args.work).root)
    tracks = defaultdict(dict)
    for (v, kind, y), c in index.track_coverage.items():
        tracks[(v, y)][kind] = {"held": c.held, "basis": c.basis, "complete": c.complete}
    rows, possible = [], []
    for (v, y), c in sorted(index.coverage.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        under = [k for k, first in TRACKS_UNDER_MAIN_NAME.get(v, ()) if y >= first]
        ok = c.complete and all(tracks[(v, y)].get(k, {}).get("complete") for k in under)
        rows.append({"venue": v, "year": y, **c.to_json(), "why_not": c.why_not(), "tracks": tracks.get((v, y), {}),
                     "tracks_under_main_name": under, "not_found_possible": ok})
        if ok:
            possible.append(f"{v} {y}")
    per_venue = defaultdict(lambda: {"venue_years": 0, "complete": 0, "not_found_possible": 0, "bases": Counter()})
    for r in rows:
        d = per_venue[r["venue"]]
        d["venue_years"] += 1
        d["complete"] += r["complete"]
        d["not_found_possible"] += r["not_found_possible"]
        d["bases"][r["basis"]] += 1
    doc = {"rules": __doc__, "work": str(args.work), "venue_years": rows, "not_found_possible": possible,
           "per_venue": {v: {**d, "bases": dict(d["bases"])} for v, d in sorted(per_venue.items())},
           "pages": page_shares(find_data_dir()), "distrusted": distrusted(index)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{'venue':10s} {'years':>5s} {'complete':>8s} {'not_found':>9s}  bases")
    for v, d in doc["per_venue"].items():
        print(f"{v:10s} {d['venue_years']:5d} {d['complete']:8d} {d['not_found_possible']:9d}  {d['bases']}")
    print(json.dumps(doc["distrusted"] | {"doi_venue_years_checked": len(doc["distrusted"]["doi_venue_years_checked"])},
                     indent=1))
    print(json.dumps(doc["pages"], indent=1))
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
