"""Do more citing papers help? Held-out bibliographies as queries, before and after, paired.

Two steps. ``split`` picks the held-out papers from an imported bibliography folder (extraction
records without contexts: ``<stem>.json`` + ``<stem>.meta.json``) *before anything is built*: a
seeded sample of ``--per-band`` papers per year band (2016-2018, 2019-2020, 2021-2022, 2023-2024),
written as query records (id, title, abstract, year, the corpus paper they are a version of, field).
Train both models with ``mustcite train --hold-out THAT_FILE`` (their reference lists, under any id
or the same title, then feed nothing), the *before* model on the old folders, the *after* model on
the old folders plus the new one, all other settings identical. ``eval`` then scores both on the
held-out queries (title + abstract, as of their own year):

    python benchmarks/reach_effect.py split --records DIR --out held_out.json [--per-band 60] [--seed 7]
    python benchmarks/reach_effect.py eval --held-out held_out.json --records DIR --works CATALOGUE \\
        --before MODEL --after MODEL [--out PATH]
    python benchmarks/reach_effect.py guard --benchmark BENCH --refs DIR --refs DIR

The right answers of a query are its references that resolve to a corpus paper or a catalogue work
(the same for both sides). Per side: cited R@20 and R@100, the recall of the works among the right
answers, the share of works among the references found in the top 100, BM25 (the before model's
first stage) on the same queries; per year band and per field. The after/before differences are
tested with a paired randomisation test (:func:`mustcite.benchmark.randomisation_test`). A funnel
says where the right answers that are works are lost: not in the pool, not yet visible in the
query's year, not among the candidates, or ranked below 100. Writes
``benchmarks/results/reach_effect.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from common import parse_set

from mustcite.benchmark import randomisation_test
from mustcite.extract import WorkIndex, is_work_id
from mustcite.io import read_json
from mustcite.labels import load_reference_dir

OUT = Path(__file__).parent / "results" / "reach_effect.json"
BANDS = ((2016, 2018), (2019, 2020), (2021, 2022), (2023, 2024))

#: the field of a query by the venue of the corpus paper it is a version of
FIELD_OF_VENUE = {"NeurIPS": "ML", "ICML": "ML", "ICLR": "ML", "AISTATS": "ML", "JMLR": "ML", "UAI": "ML",
                  "COLT": "ML", "TMLR": "ML", "CVPR": "CV", "ICCV": "CV", "ECCV": "CV", "WACV": "CV",
                  "ACL": "NLP", "EMNLP": "NLP", "NAACL": "NLP", "EACL": "NLP", "COLING": "NLP", "TACL": "NLP",
                  "AAAI": "AI", "IJCAI": "AI"}


def band_of(year: int | None) -> str | None:
    for lo, hi in BANDS:
        if year is not None and lo <= year <= hi:
            return f"{lo}-{hi}"
    return None


def field_of(venue: str | None) -> str:
    """ML, CV, NLP or AI from a venue name ("NeurIPS 2023", "ICML"); "unknown" otherwise."""
    head = (venue or "").split()[0] if venue else ""
    return FIELD_OF_VENUE.get(head, "unknown")


def _rank(stem: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{stem}".encode()).hexdigest()


def split(records: Path, per_band: int, seed: int, outside: set[str] | None = None) -> list[dict[str, Any]]:
    """``per_band`` papers of each year band of ``records`` (the smallest seeded hashes of their
    stems, so the choice depends on nothing else), as query records. ``outside``: the ids of a
    trained model's labelled papers, none of which is chosen (the papers that model held out)."""
    papers = load_reference_dir(records)           # every reference file with a title and a reference
    if outside is not None:
        papers = [p for p in papers if p.ids().isdisjoint(outside)]
    chosen: list[dict[str, Any]] = []
    for lo, hi in BANDS:
        band = sorted((p for p in papers if p.year is not None and lo <= p.year <= hi), key=lambda p: _rank(p.id, seed))
        for p in band[:per_band]:
            meta = read_json(records / f"{p.id}.meta.json", missing_ok=True) or {}
            chosen.append({"id": p.id, "title": p.title, "abstract": p.abstract, "year": p.year,
                           "versions": list(p.versions), "venue": meta.get("venue"),
                           "field": field_of(meta.get("venue")), "band": f"{lo}-{hi}"})
    return chosen


def right_answers(records: Path, held: list[dict[str, Any]], works: WorkIndex | None) -> dict[str, set[str]]:
    """Per held-out query: its references resolved to a corpus paper or (with ``works``) a work."""
    ids = {q["id"] for q in held}
    return {p.id: {c.paper_id for c in p.cites} for p in load_reference_dir(records, works=works) if p.id in ids}


def _queries(held: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": q["id"], "title": q["title"], "abstract": q["abstract"], "year": q["year"]} for q in held]


def per_query(ranked: dict[str, list[str]], truth: dict[str, set[str]]) -> dict[str, dict[str, float]]:
    """Per metric, per query: R@20, R@100, works' recall at 100 (queries citing a work only) and the
    works' share of the found references (queries finding any)."""
    out: dict[str, dict[str, float]] = {"R@20": {}, "R@100": {}, "works R@100": {}, "works share of found": {}}
    for qid, rel in truth.items():
        if not rel:
            continue
        got = ranked.get(qid, [])
        found = [p for p in got[:100] if p in rel]
        out["R@20"][qid] = len(set(got[:20]) & rel) / len(rel)
        out["R@100"][qid] = len(found) / len(rel)
        rel_works = {p for p in rel if is_work_id(p)}
        if rel_works:
            out["works R@100"][qid] = len(rel_works & set(found)) / len(rel_works)
        if found:
            out["works share of found"][qid] = sum(1 for p in found if is_work_id(p)) / len(found)
    return out


def _mean(d: dict[str, float], keep: set[str] | None = None) -> float | None:
    vals = [v for k, v in d.items() if keep is None or k in keep]
    return round(float(np.mean(vals)), 4) if vals else None


def compare(sides: dict[str, dict[str, dict[str, float]]], groups: dict[str, set[str]]) -> dict[str, Any]:
    """Means per side and metric, in every group of queries, with the after-vs-before p-value."""
    out: dict[str, Any] = {}
    for name, keep in groups.items():
        row: dict[str, Any] = {"queries": len(keep)}
        for m in sides["after"]:
            cell = {side: _mean(sides[side][m], keep) for side in sides}
            a = {k: v for k, v in sides["after"][m].items() if k in keep}
            b = {k: v for k, v in sides["before"][m].items() if k in keep}
            cell["paired_queries"] = len(set(a) & set(b))
            cell["p"] = randomisation_test(a, b) if cell["paired_queries"] else None
            row[m] = cell
        out[name] = row
    return out


def funnel(rec, queries: list[dict[str, Any]], truth: dict[str, set[str]]) -> dict[str, Any]:
    """Where the right answers are lost, split into corpus papers and works: not in the model's
    pool, in it but later than the query's year (not yet visible), visible but no candidate, a
    candidate ranked below 100, in the top 100."""
    from mustcite.recommend import effective_year, parse_year

    ranked = rec.rank_ids(queries, ("cited",), top=100)["cited"]
    parsed = [(q["id"], effective_year(parse_year(q.get("year")))) for q in queries]
    from mustcite.retrieval import Doc

    docs = [Doc(q["id"], q["title"] or "", q["abstract"] or "") for q in queries]
    cands, _, _ = rec.candidates.generate(docs, years=[y for _, y in parsed])
    row_of, years = rec.candidates.row, rec.candidates.pool_years
    counts = {k: {"not in pool": 0, "not yet visible": 0, "no candidate": 0, "ranked below 100": 0, "top 100": 0}
              for k in ("corpus papers", "works")}
    for (qid, year), cs in zip(parsed, cands):
        cand_ids = {c.paper_id for c in cs}
        top = set(ranked.get(qid, []))
        for pid in truth.get(qid, ()):
            c = counts["works" if is_work_id(pid) else "corpus papers"]
            if pid not in row_of:
                c["not in pool"] += 1
            elif years[row_of[pid]] > year:
                c["not yet visible"] += 1
            elif pid in top:
                c["top 100"] += 1
            elif pid in cand_ids:
                c["ranked below 100"] += 1
            else:
                c["no candidate"] += 1
    return counts


def _bin(value: int | None, edges: tuple[int, ...]) -> str:
    """``value`` as the label of the first bin of ``edges`` (upper bounds) it falls in."""
    if value is None:
        return "none"
    lo = 1
    for hi in edges:
        if value <= hi:
            return f"{lo}-{hi}"
        lo = hi + 1
    return f">{edges[-1]}"


RANK_BINS = (20, 50, 100, 300, 1000)


def diagnose(rec, queries: list[dict[str, Any]], truth: dict[str, set[str]], *, bm25_k: int = 2000) -> dict[str, Any]:
    """Why the right answers that are works, in the pool and visible in the query's year, are no
    candidate: per such work, how many labelled papers the query may use cite it, the rank (by
    similarity to the query) of the nearest of them (the query's ``neighbours`` nearest vote, and
    only the ``vote_k`` best votes join), its rank among the votes, among the co-cited papers of the
    query's seeds, and in BM25 over the pool (up to ``bm25_k``). Each as counts per rank bin."""
    from mustcite.recommend import effective_year, parse_year
    from mustcite.retrieval import Doc

    gen = rec.candidates
    nidx = gen.nindex
    docs = [Doc(q["id"], q["title"] or "", q["abstract"] or "") for q in queries]
    years = [effective_year(parse_year(q.get("year"))) for q in queries]
    cands, neigh, qvecs = gen.generate(docs, years=years)
    sims_all = nidx.similarities(docs, qvecs, None, years)
    bm = gen.bm25_search(docs, years, bm25_k)
    col = {pid: j for j, pid in enumerate(nidx.cited_ids)}
    rows: list[dict[str, Any]] = []
    for i, (q, cs) in enumerate(zip(docs, cands)):
        cand_ids = {c.paper_id for c in cs}
        ok = gen.pool_mask(years[i])[0]
        lost = [p for p in truth.get(q.id, ()) if is_work_id(p) and p in gen.row and ok[gen.row[p]]
                and p not in cand_ids]
        if not lost:
            continue
        sims = sims_all[i]
        order = np.argsort(-sims, kind="stable")
        rank_of_row = np.empty(len(sims), dtype=np.int64)
        rank_of_row[order] = np.arange(1, len(sims) + 1)
        votes = nidx.votes(neigh[i])
        vote_rank = {pid: r for r, (pid, _) in enumerate(
            sorted(votes.items(), key=lambda kv: (-kv[1].score, kv[0])), 1)}
        seeds = sorted(cs, key=lambda c: c.seed_rank or 10**9)[: gen.config.cocite_seeds]
        co = nidx.cocitation([c.paper_id for c in seeds if c.seed_rank], sims)
        co_rank = {pid: r for r, pid in enumerate(co.best(10**6, lambda p: True), 1)}
        bm_rank = {pid: r for r, (pid, _) in enumerate(bm.get(q.id, []), 1)}
        for pid in lost:
            j = col.get(pid)
            citer_rows = [] if j is None else nidx.matrix_t[j].indices
            usable = [int(r) for r in citer_rows if sims[r] >= 0]
            rows.append({"query": q.id, "work": pid, "citers": len(usable),
                         "nearest_citer_rank": min((int(rank_of_row[r]) for r in usable if sims[r] > 0), default=None),
                         "vote_rank": vote_rank.get(pid), "cocite_rank": co_rank.get(pid),
                         "bm25_rank": bm_rank.get(pid)})
    summary: dict[str, Any] = {"works": len(rows), "queries": len({r["query"] for r in rows}),
                               "settings": {k: getattr(gen.config, k) for k in
                                            ("first_k", "vote_k", "neighbours", "cocite_seeds", "cocite_k")}}
    summary["citers the query may use"] = _counts(_bin(r["citers"] or None, (1, 2, 5, 10)) for r in rows)
    for key in ("nearest_citer_rank", "vote_rank", "cocite_rank", "bm25_rank"):
        summary[key] = _counts(_bin(r[key], RANK_BINS) for r in rows)
    return {"summary": summary, "rows": rows}


def _counts(labels) -> dict[str, int]:
    out: dict[str, int] = {}
    for label in labels:
        out[label] = out.get(label, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (kv[0] == "none", kv[0].startswith(">"), len(kv[0]), kv[0])))


def evaluate(args) -> dict[str, Any]:
    from mustcite.recommend import Recommender

    held = json.loads(args.held_out.read_text())
    works = WorkIndex.load(args.works) if args.works else None
    truth = right_answers(args.records, held, works)
    held = [q for q in held if truth.get(q["id"])]
    queries = _queries(held)
    sides, funnels, bm25 = {}, {}, {}
    settings = {"before": parse_set(args.before_set), "after": parse_set(args.after_set)}
    for side in ("before", "after"):
        rec = Recommender.load(getattr(args, side))
        for key, value in settings[side].items():   # the same model with another setting (a paired ablation)
            setattr(rec.config, key, value)
        ranked = rec.rank_ids(queries, ("cited",), top=100)["cited"]
        sides[side] = per_query(ranked, truth)
        funnels[side] = funnel(rec, queries, truth)
        if side == "before":
            # the card's BM25 baseline: the before model's own first stage, under the same time order
            from mustcite.recommend import effective_year, parse_year
            from mustcite.retrieval import Doc

            docs = [Doc(q["id"], q["title"] or "", q["abstract"] or "") for q in queries]
            hits = rec.candidates.bm25_search(docs, [effective_year(parse_year(q["year"])) for q in queries], 100)
            bm25 = per_query({qid: [p for p, _ in h] for qid, h in hits.items()}, truth)
        del rec
    groups: dict[str, set[str]] = {"all": {q["id"] for q in held}}
    for q in held:
        groups.setdefault(f"band {q['band']}", set()).add(q["id"])
        groups.setdefault(f"field {q['field']}", set()).add(q["id"])
    table = compare(sides, groups)
    for name, keep in groups.items():
        for m in ("R@20", "R@100"):
            table[name][m]["bm25"] = _mean(bm25[m], keep)
            after = table[name][m]["after"]
            table[name][m]["after / bm25"] = round(after / table[name][m]["bm25"], 3) \
                if after is not None and table[name][m]["bm25"] else None
    n_rel = sum(len(v) for v in truth.values() if v)
    return {"held_out": str(args.held_out), "records": str(args.records), "before": str(args.before),
            "after": str(args.after),
            "settings": {k: {key: str(v) for key, v in d.items()} for k, d in settings.items()},
            "queries": len(held), "right_answers": n_rel,
            "right_answers_works": sum(1 for v in truth.values() for p in v if is_work_id(p)),
            "fields": sorted({q["field"] for q in held}), "table": table, "funnel": funnels}


def guard(bench: Path, refs: list[Path]) -> dict[str, Any]:
    """How the benchmark's dev and test queries are kept out of the labelled papers of ``refs``
    (:func:`mustcite.benchmark.training_data.benchmark_data`): per folder, its papers, those that
    are a held query by id, only by the corpus paper they are a version of, only by title, and
    those of an earlier year than every query that join as neighbours."""
    from mustcite.benchmark import Benchmark, benchmark_data
    from mustcite.corpus import normalize_title

    b = Benchmark.open(bench)
    held_q = [q for name in ("dev", "test") if name in b.splits() for q in b.queries(name)]
    held = {str(q["id"]) for q in held_q}
    titles = {normalize_title(q.get("title")) for q in held_q}
    data = benchmark_data(bench, refs)
    out: dict[str, Any] = {"benchmark": str(bench), "held_queries": len(held), "extra_neighbours": len(data.extra)}
    for folder in refs:
        papers = load_reference_dir(folder)
        by_id = [p for p in papers if p.id in held]
        by_version = [p for p in papers if p.id not in held and not set(p.versions).isdisjoint(held)]
        by_title = [p for p in papers if p.ids().isdisjoint(held) and normalize_title(p.title) in titles]
        out[str(folder)] = {"papers": len(papers), "held_by_id": len(by_id), "held_by_version_only": len(
            [p for p in by_version if normalize_title(p.title) not in titles]),
            "held_by_version": len(by_version), "held_by_title_only": len(by_title),
            "neighbours": sum(1 for p in data.extra if p.source == str(folder))}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split", help="pick the held-out papers (before building anything)")
    s.add_argument("--records", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--per-band", type=int, default=60)
    s.add_argument("--seed", type=int, default=7)
    s.add_argument("--outside", type=Path, default=None,
                   help="a trained model: choose only papers that are none of its labelled papers")
    e = sub.add_parser("eval", help="score the before and after models on the held-out papers")
    e.add_argument("--held-out", type=Path, required=True)
    e.add_argument("--records", type=Path, required=True)
    e.add_argument("--works", type=Path, default=None, help="the catalogue both models' pools come from")
    e.add_argument("--before", type=Path, required=True)
    e.add_argument("--after", type=Path, required=True)
    e.add_argument("--out", type=Path, default=OUT)
    e.add_argument("--before-set", action="append", default=[], help="KEY=VALUE of the before model's settings")
    e.add_argument("--after-set", action="append", default=[], help="KEY=VALUE of the after model's settings")
    d = sub.add_parser("diagnose", help="why right answers that are works are no candidate of a model")
    d.add_argument("--held-out", type=Path, required=True)
    d.add_argument("--records", type=Path, required=True)
    d.add_argument("--works", type=Path, default=None)
    d.add_argument("--model", type=Path, required=True)
    d.add_argument("--set", action="append", default=[], help="KEY=VALUE of the model's settings")
    d.add_argument("--out", type=Path, default=OUT.with_name("reach_diagnose.json"))
    g = sub.add_parser("guard", help="how a built benchmark's dev/test queries are kept out of --refs")
    g.add_argument("--benchmark", type=Path, required=True)
    g.add_argument("--refs", type=Path, action="append", required=True)
    g.add_argument("--out", type=Path, default=OUT.with_name("reach_guard.json"))
    args = ap.parse_args(argv)
    if args.cmd == "guard":
        report = guard(args.benchmark, args.refs)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1))
        print(json.dumps(report, indent=1))
        return 0
    if args.cmd == "split":
        outside = None
        if args.outside is not None:
            from mustcite.recommend import Recommender

            outside = {pid for p in Recommender.load(args.outside).labelled for pid in p.ids()}
        held = split(args.records, args.per_band, args.seed, outside)
        args.out.write_text(json.dumps(held, indent=1))
        print(f"{len(held)} held-out papers -> {args.out}", file=sys.stderr)
        return 0
    if args.cmd == "diagnose":
        from mustcite.recommend import Recommender

        held = json.loads(args.held_out.read_text())
        truth = right_answers(args.records, held, WorkIndex.load(args.works) if args.works else None)
        rec = Recommender.load(args.model)
        for key, value in parse_set(args.set).items():
            setattr(rec.config, key, value)
        report = diagnose(rec, _queries([q for q in held if truth.get(q["id"])]), truth)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1))
        print(json.dumps(report["summary"], indent=1))
        return 0
    report = evaluate(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report["table"]["all"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
