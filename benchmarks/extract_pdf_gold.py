"""Gold evaluation of the PDF and TEI extraction paths on the two real s2orc-doc2json PDFs.

Gold: the S2ORC JSON next to each PDF (``pdf_parse.bib_entries`` titles/years; ``cite_spans`` of
``body_text`` and ``back_matter`` for mentions). A predicted reference matches a gold entry when
their normalised titles reach rapidfuzz ``ratio`` >= 90 (one-to-one, best pairs first).
Reports per paper and path: reference precision/recall/F1, year accuracy on matched pairs, and
mention precision/recall (per matched pair, min(predicted, gold) mentions count as correct).

Note: the S2ORC JSON was produced by doc2json from the same GROBID TEI, so the TEI path is close
to the gold by construction; the PDF path is the independent measurement.

    .venv/bin/python benchmarks/extract_pdf_gold.py [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from rapidfuzz import fuzz

from mustcite.config import find_data_dir
from mustcite.corpus import normalize_title
from mustcite.extract import extract_pdf, parse_tei
from mustcite.io import atomic_write_json

THRESHOLD = 90.0
STEMS = ["N18-3011", "2020.acl-main.207"]


def gold_of(path: Path) -> tuple[list[dict], Counter]:
    doc = json.loads(path.read_text(encoding="utf-8"))["pdf_parse"]
    entries = [{"id": k, "title": v.get("title") or "", "year": v.get("year")}
               for k, v in doc["bib_entries"].items()]
    mentions: Counter = Counter()
    for para in doc.get("body_text", []) + doc.get("back_matter", []):
        for span in para.get("cite_spans", []):
            if span.get("ref_id"):
                mentions[span["ref_id"]] += 1
    return entries, mentions


def match(pred: list[dict], gold: list[dict]) -> list[tuple[int, int, float]]:
    pairs = []
    for i, p in enumerate(pred):
        pn = normalize_title(p["title"])
        for j, g in enumerate(gold):
            s = fuzz.ratio(pn, normalize_title(g["title"]))
            if s >= THRESHOLD:
                pairs.append((s, i, j))
    used_p, used_g, out = set(), set(), []
    for s, i, j in sorted(pairs, reverse=True):
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
            out.append((i, j, s))
    return out


def evaluate(pred: list[dict], gold: list[dict], gold_mentions: Counter) -> dict:
    m = match(pred, gold)
    tp = len(m)
    prec = tp / len(pred) if pred else 0.0
    rec = tp / len(gold) if gold else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    year_ok = sum(1 for i, j, _ in m if pred[i]["year"] == gold[j]["year"])
    pred_m = sum(r.get("mentions", 0) for r in pred)
    gold_m = sum(gold_mentions.values())
    correct = sum(min(pred[i].get("mentions", 0), gold_mentions.get(gold[j]["id"], 0)) for i, j, _ in m)
    return {"predicted": len(pred), "gold": len(gold), "matched": tp,
            "precision": round(prec, 4), "recall": round(rec, 4), "f1": round(f1, 4),
            "year_accuracy": round(year_ok / tp, 4) if tp else None,
            "mentions_predicted": pred_m, "mentions_gold": gold_m,
            "mention_precision": round(correct / pred_m, 4) if pred_m else None,
            "mention_recall": round(correct / gold_m, 4) if gold_m else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "extract_pdf_gold.json"))
    args = ap.parse_args()
    folder = find_data_dir(args.data) / "pdfs" / "s2orc-doc2json" / "pdf"
    result: dict = {"threshold_ratio": THRESHOLD, "matcher": "rapidfuzz.fuzz.ratio on normalize_title",
                    "note": ("gold = doc2json output of the same GROBID TEI: its titles carry GROBID's own "
                             "errors and its cite_spans hold only callouts GROBID resolved, so PDF-path "
                             "mention 'precision' is a lower bound"),
                    "papers": {}, "totals": {}}
    agg: dict[str, Counter] = {"pdf": Counter(), "tei": Counter()}
    for stem in STEMS:
        gold, gold_m = gold_of(folder / f"{stem}.json")
        t0 = time.perf_counter()
        pdf = extract_pdf(folder / f"{stem}.pdf")
        t_pdf = time.perf_counter() - t0
        tei = parse_tei((folder / f"{stem}.tei.xml").read_bytes())
        result["papers"][stem] = {}
        for name, paper, secs in (("pdf", pdf, t_pdf), ("tei", tei, None)):
            r = evaluate(paper.to_reference_list(), gold, gold_m)
            r["status"] = paper.status
            if secs is not None:
                r["seconds"] = round(secs, 3)
            if name == "pdf":
                r["citation_source"] = paper.stats.get("citation_source")
            result["papers"][stem][name] = r
            for k in ("predicted", "gold", "matched", "mentions_predicted", "mentions_gold"):
                agg[name][k] += r[k]
            i_m = match(paper.to_reference_list(), gold)
            refs = paper.to_reference_list()
            agg[name]["mention_correct"] += sum(min(refs[i].get("mentions", 0), gold_m.get(gold[j]["id"], 0))
                                                for i, j, _ in i_m)
    for name, a in agg.items():
        p = a["matched"] / a["predicted"] if a["predicted"] else 0.0
        r = a["matched"] / a["gold"] if a["gold"] else 0.0
        result["totals"][name] = {
            **dict(a), "precision": round(p, 4), "recall": round(r, 4),
            "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "mention_precision": (round(a["mention_correct"] / a["mentions_predicted"], 4)
                                  if a["mentions_predicted"] else None),
            "mention_recall": round(a["mention_correct"] / a["mentions_gold"], 4) if a["mentions_gold"] else None}
    atomic_write_json(args.out, result)
    print(json.dumps(result["totals"], indent=1))


if __name__ == "__main__":
    main()
