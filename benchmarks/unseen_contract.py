"""The user contract on papers the default model never saw, against BM25 on the same pool.

The default model (``make demo``: ``mustcite train --no-refit``) is fit without its hold-out: 10% of
the labelled papers, chosen by a hash of their id (``recommend.train.split_dev``). Its NeurIPS 2024
hold-out papers are therefore unseen papers of the kind a user brings. For each of them this runs
the documented contract through the CLI::

    mustcite recommend --queries FILE.jsonl --format json --top 100     (title + abstract [+ year])

and BM25 over the model's own pool (``mustcite retrieve --method bm25 --pool
<model>/pool.parquet``), and scores both against the paper's linked citations and labels (cited,
must-cite, Types I-III), matching results by paper id. Two conventions are reported: queries with
``"year": 2024`` (mustcite then shows only papers of 2024 or earlier; BM25 is cut to the same
years) and without a year (mustcite uses today's year; BM25 sees the whole pool). The ratio of
mustcite to BM25 is what a check on new NeurIPS 2024 papers would measure.

    python benchmarks/unseen_contract.py [--model DIR] [--year 2024] [--n 0] [--compare EARLIER.json]

Writes ``benchmarks/results/unseen_contract.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from common import named_share  # noqa: E402

from mustcite.extract import WorkIndex, is_work_id, resolved_entries
from mustcite.labels import load_reference_dirs
from mustcite.recommend import default_model, qrels_of, ranking_metrics, split_dev  # noqa: E402

OUT = Path(__file__).parent / "results" / "unseen_contract.json"
TRUTHS = ("cited", "mustcite", "type1", "type2", "type3")


def _mean(v: dict[str, float]) -> float:
    return round(sum(v.values()) / len(v), 4) if v else 0.0


def _cli(args: list[str]) -> list[dict]:
    exe = str(Path(sys.executable).with_name("mustcite"))
    proc = subprocess.run([exe, *args], capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if proc.returncode != 0:
        raise SystemExit(f"mustcite {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, help="model folder (default: the default model)")
    ap.add_argument("--year", type=int, default=2024, help="hold-out papers of this year are the queries")
    ap.add_argument("--n", type=int, default=0, help="at most this many queries (0: all)")
    ap.add_argument("--top", type=int, default=100)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--compare", type=Path, help="an earlier report of this script (another model, the same "
                    "hold-out): write the share of all reference entries named by both, with ratio and p")
    ap.add_argument("--compare-out", type=Path, default=OUT.with_name("unseen_contract_works.json"))
    args = ap.parse_args(argv)

    import pyarrow.parquet as pq

    model = args.model or default_model()
    card = json.loads((Path(model) / "card.json").read_text(encoding="utf-8"))
    data = card.get("data", {})
    if data.get("refit_on_all") or not data.get("dev_papers"):
        raise SystemExit(f"{model} was refit on its hold-out (or has none): its papers are not unseen; "
                         "train with --no-refit")
    pool_path = Path(model) / "pool.parquet"
    pool = pq.read_table(pool_path, columns=["paper_id", "year"]).to_pylist()
    year_of = {p["paper_id"]: p["year"] for p in pool}
    works = WorkIndex.load(data["works"]) if data.get("works") else None
    # the hold-out papers of the reference folders, whatever they cite (so that models with other
    # pools are asked the same queries); the qrels metrics score their citations of corpus papers
    ids = set(year_of) | (set(works.works) if works else set())
    everything = load_reference_dirs(data["reference_folders"], ids, works)
    _, holdout = split_dev(everything, data["dev_fraction"], card.get("seed", 0))
    holdout = [p for p in holdout if any(not is_work_id(c.paper_id) for c in p.cites)]    # as without works
    queries = [p for p in holdout if p.year == args.year]
    if args.n:
        queries = queries[: args.n]
    entries = resolved_entries(data["reference_folders"], {p.id for p in queries}, works)
    for p in queries:      # the qrels metrics: corpus papers only, as in a model without works
        p.cites = [c for c in p.cites if not is_work_id(c.paper_id)]
    # the truth a paper of year Y can be asked for: its citations of year Y or earlier in the pool
    qrels = qrels_of(queries)
    report: dict = {"model": str(model), "pool_papers": len(pool), "holdout_papers": len(holdout),
                    "queries": len(queries), "query_year": args.year, "top": args.top, "conventions": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for convention, with_year in (("with year", True), ("without year", False)):
            qfile = Path(tmp) / f"q{int(with_year)}.jsonl"
            qfile.write_text("".join(json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract,
                                                 **({"year": p.year} if with_year else {})}) + "\n"
                                     for p in queries), encoding="utf-8")
            t0 = time.perf_counter()
            ours = _cli(["recommend", "--queries", str(qfile), "--format", "json", "--top", str(args.top),
                         "--model", str(model)])
            seconds = time.perf_counter() - t0
            bm25 = _cli(["retrieve", "--method", "bm25", "--pool", str(pool_path),
                         "--queries", str(qfile), "--format", "json", "--top", str(10 * args.top)])
            ranked = {o["id"]: [r["paper_id"] for r in o["results"]] for o in ours}
            base = {}
            for o in bm25:
                ids = [r["paper_id"] for r in o["results"]]
                if with_year:   # the same years mustcite may show
                    ids = [pid for pid in ids if (year_of.get(pid) or 9999) <= args.year]
                base[o["id"]] = ids[: args.top]
            m_ours, m_base = ranking_metrics(ranked, qrels), ranking_metrics(base, qrels)
            named = {name: named_share(r, entries) for name, r in (("mustcite", ranked), ("bm25", base))}
            ratios = {gt: {m: round(m_ours[gt][m] / m_base[gt][m], 3) if m_base[gt][m] else None
                           for m in ("R@100", "MRR", "nDCG@10")} for gt in m_ours if gt in m_base}
            report["conventions"][convention] = {"mustcite": m_ours, "bm25": m_base, "ratio": ratios,
                                                 "all_references_named": {k: _mean(v) for k, v in named.items()},
                                                 "all_references_named_per_query": named,
                                                 "mustcite_cli_seconds": round(seconds, 1),
                                                 "titles_in_results": all("title" in r for o in ours
                                                                          for r in o["results"])}
            print(convention, json.dumps({gt: (m_ours[gt]["R@100"], m_ours[gt]["MRR"], r["R@100"], r["MRR"])
                                          for gt, r in ratios.items()}), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if args.compare:
        compare(json.loads(args.compare.read_text(encoding="utf-8")), report, args.compare_out)
    return 0


def compare(before: dict, after: dict, out: Path) -> dict:
    """The share of every reference entry named, of two models on the same queries (``before``:
    an earlier report of this script), with the ratio and a paired t-test per convention."""
    from mustcite.benchmark import paired_ttest

    res: dict = {"before": before["model"], "after": after["model"], "queries": after["queries"],
                 "pool_before": before["pool_papers"], "pool_after": after["pool_papers"], "conventions": {}}
    for conv, a in after["conventions"].items():
        b = before["conventions"][conv]
        x, y = b["all_references_named_per_query"]["mustcite"], a["all_references_named_per_query"]["mustcite"]
        res["conventions"][conv] = {
            "before": b["all_references_named"], "after": a["all_references_named"],
            "mustcite_ratio_after_vs_before": round(_mean(y) / _mean(x), 3) if _mean(x) else None,
            "p": float(f"{paired_ttest(x, y):.3g}"),
            "mustcite_vs_bm25_after": round(_mean(y) / _mean(a["all_references_named_per_query"]["bm25"]), 3)}
    out.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(res["conventions"], indent=1))
    return res


if __name__ == "__main__":
    raise SystemExit(main())
