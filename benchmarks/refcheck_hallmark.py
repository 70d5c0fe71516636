"""``mustcite check-refs`` on HALLMARK's public development split, scored per kind of hallucination.

Run::

    .venv/bin/python benchmarks/refcheck_hallmark.py --work /tmp/w4 --out /tmp/hallmark.json

**Input.** ``<data>/hallmark/dev_public.jsonl.gz`` (1,119 BibTeX entries labelled ``VALID`` or
``HALLUCINATED``, 14 kinds; see ``PROVENANCE.md`` there). The checker sees only ``bibtex_type`` and
``fields``, written back as a ``.bib`` entry; the label, kind, explanation and the rest are read for
scoring only. No other split is read. Nothing goes online.

**Figures** (overall and per kind): an entry is *flagged* when its status is ``mismatch`` or
``not_found``; ``outdated`` (an earlier version cited where a published one exists), ``verified``
and ``unverifiable`` are not flagged. Detection: the share of HALLUCINATED entries flagged;
false-positive rate: the share of VALID entries flagged; F1 of the HALLUCINATED class over all
entries (as the published baselines count it: an unanswered entry is a miss) and over the answered
entries only; answered share: entries not ``unverifiable``. The published baselines of the split
(``PROVENANCE.md``; bibtex-updater, the co-designed reference, 0.946 / 0.179 / 0.908) are printed beside.

**Witness checks.** ``witness_checks`` counts, per label, the entries where a check of
:mod:`mustcite.refcheck.witness` kept a field from being flagged (its note); ``witness_fired``
lists them, for checking by hand.

**Disputed labels.** A VALID entry flagged where the entry itself shows the label may be wrong
(:func:`disputed`: only its year, one from the record's; only its venue; only a DOI the corpus
gives another paper of the same proceedings; an arXiv DOI on an entry of a complete venue-year that
lacks the paper) is listed as a disputed label (the audit of the labels, ``PROVENANCE.md``, names
such entries); the false-positive rate is given with and without them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ("mismatch", "not_found")
BASELINE = {"tool": "bibtex-updater (co-designed reference)", "detection": 0.946, "fp_rate": 0.179, "f1": 0.908}
TARGETS = {"fp_rate": 0.04, "f1": 0.93, "answered": 0.85}


def bib_text(key: str, kind: str, fields: dict) -> str:
    """One ``.bib`` entry from HALLMARK's type and fields (values keep their braces; a value cut
    inside a brace group, ``Man{\\'e``, gets its closing braces so the entry stays readable)."""
    body = ",\n".join(f"  {k} = {{{v}{'}' * max(0, v.count('{') - v.count('}'))}}}" for k, v in fields.items())
    return f"@{kind}{{{key},\n{body}\n}}\n"


def scores(rows: list[dict]) -> dict:
    """Detection, FP rate, F1 (all entries; answered entries) and answered share of scored rows."""
    hal = [r for r in rows if r["label"] == "HALLUCINATED"]
    val = [r for r in rows if r["label"] == "VALID"]
    tp = sum(r["flagged"] for r in hal)
    fp = sum(r["flagged"] for r in val)
    ans = [r for r in rows if r["status"] != "unverifiable"]
    a_hal = [r for r in ans if r["label"] == "HALLUCINATED"]
    a_fn = len(a_hal) - sum(r["flagged"] for r in a_hal)

    def f1(tp_: int, fp_: int, fn_: int) -> float | None:
        return round(2 * tp_ / (2 * tp_ + fp_ + fn_), 4) if tp_ + fp_ + fn_ else None

    return {"n": len(rows), "hallucinated": len(hal), "valid": len(val),
            "detection": round(tp / len(hal), 4) if hal else None,
            "fp_rate": round(fp / len(val), 4) if val else None,
            "f1": f1(tp, fp, len(hal) - tp), "f1_answered": f1(tp, fp, a_fn),
            "answered": round(len(ans) / len(rows), 4) if rows else None,
            "statuses": dict(Counter(r["status"] for r in rows).most_common())}


def disputed(r: dict) -> bool:
    """A VALID entry flagged where the entry itself shows the label may be wrong: only its year, one
    from the record's; only its venue (and year): the record is at another venue; only its DOI,
    which the corpus gives to another paper of the same proceedings; or an arXiv DOI on an entry
    claiming a venue-year held completely where the paper is not (an arXiv preprint cited as
    published)."""
    if r["label"] != "VALID" or not r["flagged"]:
        return False
    fields = {i["field"] for i in r["issues"]}
    if fields == {"year"}:
        y = next(i for i in r["issues"] if i["field"] == "year")
        return str(y["record"]).isdigit() and str(y["entry"]).isdigit() and abs(int(y["entry"]) - int(y["record"])) == 1
    if fields and fields <= {"venue", "year"}:
        return True
    if fields == {"doi"} and all("identifier of another paper" in i["why"] for i in r["issues"]):
        return True
    arxiv_doi = str(r["fields"].get("doi", "")).lower().startswith("10.48550/")
    return arxiv_doi and (r["status"] == "not_found" or "titled otherwise" in r["why"])


_ARXIV_ID = re.compile(r"(?<!\d)(\d{4})\.\d{4,5}")
_CLAIM = re.compile(r"\b(AAAI|IJCAI|ACL|EMNLP|NAACL|ICLR|ICML|NeurIPS|CVPR|ICCV|ECCV|AISTATS|UAI|COLT|JMLR) (\d{4})")


def unanswered_class(why: str, fields: dict) -> str:
    """What an unanswered (``unverifiable``) entry lacks, as a class (the figures of what each class
    would need): an arXiv preprint newer than the data, a venue-year the data lacks or reads from one
    list, no venue, another track, a venue outside the data, ..."""
    ids = _ARXIV_ID.search(" ".join(str(v) for v in fields.values()))
    claim = _CLAIM.search(why)
    if "arXiv preprint" in why:
        return "arXiv preprint of 2025-2026 (newer than the data)" if ids and ids.group(1) >= "2501" \
            else "arXiv preprint no record or citing paper holds"
    if claim and "does not hold" in why:
        return f"{claim.group(1)} {'2023 or later' if int(claim.group(2)) >= 2023 else 'venue-year'} not in the data"
    if claim and "not known to be held completely" in why:
        return f"{claim.group(1)} venue-year read from one list"
    if why.startswith("no venue"):
        return "no venue, a title no record or citing paper has"
    if "is not a venue the corpus holds" in why:
        return "a venue outside the data"
    if "papers of the data cite it" in why:
        return "a real title (others cite it), not a record of the claimed venue-year"
    if "DOI is of a series" in why:
        return "a DOI of a series the venue's records are not in (another track)"
    return "another track or side venue the data does not hold completely"


def main(argv: list[str] | None = None) -> int:
    from mustcite.config import Workspace, find_data_dir
    from mustcite.refcheck import check_entries, checks_fired, entries_from_bib, load_index

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--data", type=Path, default=None, help="the HALLMARK folder (default: <data>/hallmark)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/refcheck_hallmark.json"))
    ap.add_argument("--citations", type=Path, default=None,
                    help="reference lists of other papers (<data>/citations_cs768/papers.jsonl.xz) as evidence")
    ap.add_argument("--no-citations", action="store_true",
                    help="without the consensus of citing papers built into the work folder (used by default)")
    ap.add_argument("--show", default="", help="print the entries of these kinds (comma-separated; VALID too)")
    args = ap.parse_args(argv)
    folder = args.data or find_data_dir() / "hallmark"
    with gzip.open(folder / "dev_public.jsonl.gz", "rt", encoding="utf-8") as fh:
        items = [json.loads(line) for line in fh if line.strip()]

    t0 = time.perf_counter()
    index = load_index(Workspace.resolve(args.work).root, citations=False if args.no_citations else args.citations)
    consensus = index.consensus is not None
    text = "".join(bib_text(it["bibtex_key"], it["bibtex_type"], it["fields"]) for it in items)
    entries, messages = entries_from_bib(text, "hallmark.bib")
    checks = {c.key: c for c in check_entries(entries, index)}
    seconds = time.perf_counter() - t0

    rows = []
    for it in items:
        c = checks.get(it["bibtex_key"])
        status = c.status if c else "unread"
        rows.append({"key": it["bibtex_key"], "label": it["label"],
                     "kind": it.get("hallucination_type") or ("valid" if it["label"] == "VALID" else "?"),
                     "status": status, "flagged": status in FLAGS, "why": c.why if c else "",
                     "issues": [i.to_json() for i in c.issues] if c else [], "fields": it["fields"],
                     "record": c.record if c else None, "explanation": it.get("explanation", ""),
                     "notes": list(c.notes) if c else [], "checks": checks_fired(c.notes) if c else []})
    by_kind = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    overall = scores(rows)
    dis = [r for r in rows if disputed(r)]
    kept = [r for r in rows if not disputed(r)]
    doc = {"data": str(folder), "citations": str(args.citations or ("the work folder's" if consensus else "")),
           "seconds": round(seconds, 1),
           "reader_messages": messages, "overall": overall,
           "without_disputed_valid": scores(kept), "baseline": BASELINE, "targets": TARGETS,
           "per_kind": {k: scores(v) for k, v in sorted(by_kind.items())},
           "witness_checks": {lab: dict(Counter(k for r in rows if r["label"] == lab for k in r["checks"]))
                              for lab in ("VALID", "HALLUCINATED")},
           "witness_fired": [{k: r[k] for k in ("key", "label", "kind", "status", "checks", "notes", "fields",
                                                "record")} for r in rows if r["checks"]],
           "disputed_valid": [{k: r[k] for k in ("key", "why", "fields", "record")} for r in dis],
           "flagged_valid": [{k: r[k] for k in ("key", "why", "fields", "record")} for r in rows
                             if r["label"] == "VALID" and r["flagged"]],
           "missed": [{k: r[k] for k in ("key", "kind", "status", "why", "fields", "explanation")} for r in rows
                      if r["label"] == "HALLUCINATED" and not r["flagged"]],
           "unanswered_classes": {lab: dict(Counter(unanswered_class(r["why"], r["fields"]) for r in rows
                                                    if r["label"] == lab and r["status"] == "unverifiable")
                                            .most_common())
                                  for lab in ("VALID", "HALLUCINATED")}}
    args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    print(f"{'kind':24s} {'n':>4s} {'flag':>5s} {'det/FP':>7s} {'answ':>6s}  statuses")
    for k, v in sorted(by_kind.items(), key=lambda kv: (kv[0] == "valid", kv[0])):
        s = scores(v)
        rate = s["fp_rate"] if k == "valid" else s["detection"]
        print(f"{k:24s} {s['n']:4d} {sum(r['flagged'] for r in v):5d} {rate:7.3f} {s['answered']:6.3f}  "
              + ", ".join(f"{a} {b}" for a, b in s["statuses"].items()))
    for name, s in (("overall", overall), ("w/o disputed VALID", doc["without_disputed_valid"])):
        print(f"{name}: detection {s['detection']:.3f}  FP {s['fp_rate']:.3f}  F1 {s['f1']:.3f}  "
              f"F1 answered {s['f1_answered']:.3f}  answered {s['answered']:.3f}")
    print(f"baseline {BASELINE['tool']}: detection {BASELINE['detection']}  FP {BASELINE['fp_rate']}  "
          f"F1 {BASELINE['f1']}")
    print(f"targets: FP <= {TARGETS['fp_rate']}, F1 >= {TARGETS['f1']}, answered >= {TARGETS['answered']}; "
          f"{len(dis)} disputed VALID entries; {seconds:.1f} s")
    for k in filter(None, args.show.split(",")):
        for r in by_kind.get(k, []):
            print(f"\n[{r['kind']}] {r['status']} {r['key']}: {json.dumps(r['fields'], ensure_ascii=False)[:300]}\n"
                  f"   why: {r['why'][:250]}\n   truth: {r['explanation'][:200]}")
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
