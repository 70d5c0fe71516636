"""Metrics (Appendix G), TREC files and significance tests, checked against ir-measures and by hand."""

from __future__ import annotations

import gzip
import json
import math

import ir_measures
import pytest
from helpers import DATA
from ir_measures import AP, RR, R, Success, nDCG

from mustcite.benchmark.evaluate import METRICS, evaluate, hit_ratio, per_query
from mustcite.benchmark.report import build_rows, compare_with, render
from mustcite.benchmark.significance import paired_ttest, randomisation_test
from mustcite.benchmark.trec import read_qrels, read_run, write_qrels, write_run
from mustcite.errors import MustciteError, UsageError
from mustcite.retrieval.bm25 import BM25Retriever

NIPS2018 = DATA / "proceedings" / "paperlists" / "nips2018.jsonl.gz"


def _nips2018():
    rows = []
    with gzip.open(NIPS2018, "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r.get("abstract"):
                rows.append({"paper_id": f"nips18-{r['id']}", "title": r["title"], "abstract": r["abstract"],
                             "authors": [a.strip() for a in r["author"].split(";")]})
    return rows


@pytest.fixture(scope="module")
def real_run(data_dir):
    """A real-shaped run: BM25 over NeurIPS 2018, queries = 60 papers' abstracts, relevant = the
    other NeurIPS 2018 papers sharing an author with the query paper."""
    papers = _nips2018()
    assert len(papers) == 1008                      # manifest: 1,009 records, 1,008 with abstracts
    by_author = {}
    for p in papers:
        for a in p["authors"]:
            by_author.setdefault(a, set()).add(p["paper_id"])
    queries, qrels = [], {}
    for p in papers[::7]:
        rel = set().union(*(by_author[a] for a in p["authors"])) - {p["paper_id"]}
        if rel:
            qrels[p["paper_id"]] = {d: 1 for d in rel}
            queries.append({"id": p["paper_id"], "title": "", "abstract": p["abstract"]})
        if len(queries) == 60:
            break
    pool = [p for p in papers if p["paper_id"] not in qrels]
    r = BM25Retriever()
    r.index(pool)
    results = r.search(queries, k=100)
    run = {q: {d: s for d, s in hits} for q, hits in results.items()}
    return run, qrels


@pytest.mark.data
def test_metrics_match_ir_measures(real_run):
    run, qrels = real_run
    ours = evaluate(run, qrels)
    ref = ir_measures.calc_aggregate([AP, RR, nDCG @ 10, nDCG @ 20, nDCG @ 30, R @ 50, R @ 100,
                                      Success @ 10, Success @ 20], qrels, run)
    names = dict(zip(METRICS, [AP, RR, nDCG @ 10, nDCG @ 20, nDCG @ 30, R @ 50, R @ 100,
                               Success @ 10, Success @ 20]))
    for m, measure in names.items():
        assert ours[m] == pytest.approx(ref[measure], abs=1e-9), m
    assert 0 < ours["HR@10"] <= ours["HR@20"] <= 1
    assert ours["MAP"] > 0.01                      # co-authored papers are found by BM25 at all


@pytest.mark.data
def test_hit_ratio_matches_success_per_query(real_run):
    run, qrels = real_run
    for k in (1, 10, 20):
        ours = hit_ratio(run, qrels, k)
        ref = {m.query_id: m.value for m in ir_measures.iter_calc([Success @ k], qrels, run)}
        assert ours == pytest.approx(ref)


def test_hand_computed_map_mrr_hr():
    # relevant: a, c, z (z never retrieved); ranking a(1) b(2) c(3) d(4)
    run = {"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}, "q2": {"x": 2.0, "y": 1.0}}
    qrels = {"q1": {"a": 1, "c": 1, "z": 1, "n": 0}, "q2": {"y": 1}, "q3": {"w": 1}}
    pq = per_query(run, qrels)
    assert pq["MAP"]["q1"] == pytest.approx((1 / 1 + 2 / 3) / 3)   # divided by all 3 relevant papers
    assert pq["MRR"] == pytest.approx({"q1": 1.0, "q2": 0.5, "q3": 0.0})
    assert pq["HR@10"] == {"q1": 1.0, "q2": 1.0, "q3": 0.0}        # q3: missing from the run scores 0
    assert pq["R@50"]["q1"] == pytest.approx(2 / 3)
    dcg = 1 + 1 / math.log2(4)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert pq["nDCG@10"]["q1"] == pytest.approx(dcg / idcg)
    assert evaluate(run, qrels)["MRR"] == pytest.approx(1.5 / 3)
    assert hit_ratio({"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 1}}, 1) == {"q": 0.0}


@pytest.mark.data
def test_trec_round_trip(tmp_path, real_run):
    run, qrels = real_run
    results = {q: sorted(d.items(), key=lambda x: -x[1]) for q, d in run.items()}
    write_run(tmp_path / "r.trec", results, tag="bm25")
    write_qrels(tmp_path / "q.qrels", qrels)
    back = read_run(tmp_path / "r.trec")
    assert set(back) == set(run)
    for q in run:
        assert back[q] == pytest.approx(run[q], abs=1e-6)
    assert read_qrels(tmp_path / "q.qrels") == qrels
    assert evaluate(back, read_qrels(tmp_path / "q.qrels")) == pytest.approx(evaluate(run, qrels), abs=1e-6)


@pytest.mark.parametrize("text,reader,line", [
    ("q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 notanumber tag\n", read_run, 2),
    ("q1 Q0 d1 1 0.5\n", read_run, 1),
    ("q1 Q0 d1 1 0.5 t\n\nq1 Q0 d1 2 0.4 t\n", read_run, 3),
    ("q1 0 d1 1\nq1 0 d2\n", read_qrels, 2),
    ("q1 0 d1 yes\n", read_qrels, 1),
])
def test_bad_trec_lines_name_file_and_line(tmp_path, text, reader, line):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(MustciteError) as err:
        reader(p)
    assert f"bad.txt:{line}:" in str(err.value)


@pytest.mark.data
def test_significance(real_run):
    run, qrels = real_run
    # a worse run: the same rankings with the first hit of every query pushed to the end
    worse = {}
    for q, docs in run.items():
        order = sorted(docs, key=lambda d: -docs[d])
        rel = [d for d in order if d in qrels[q]]
        if rel:
            order.remove(rel[0])
            order.append(rel[0])
        worse[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
    a, b = per_query(run, qrels)["MRR"], per_query(worse, qrels)["MRR"]
    assert paired_ttest(a, b) < 0.01
    assert randomisation_test(a, b) < 0.01
    assert paired_ttest(a, a) == 1.0 and randomisation_test(a, a) == 1.0
    rows = build_rows([("BM25", per_query(run, qrels)), ("worse", per_query(worse, qrels))])
    md = render(rows, "markdown")
    assert md.splitlines()[0].startswith("| Method | MAP | MRR | nD@10")
    assert "**" in md.splitlines()[3]           # the worse run's MRR carries a p < 0.01 marker
    assert render(rows, "csv").splitlines()[1].startswith("BM25,")
    assert "\\begin{tabular}" in render(rows, "latex")
    assert json.loads(render(rows, "json"))["rows"][1]["pvalues_vs_first"]["MRR"] < 0.01
    # a second reference row: the first run tested against the worse one, daggers in the table
    three = [("BM25", per_query(run, qrels)), ("worse", per_query(worse, qrels)), ("same", per_query(run, qrels))]
    rows = build_rows(three)
    compare_with(rows, three, "worse")
    assert rows[0].pvalues_vs["MRR"] < 0.01 and rows[1].pvalues_vs["MRR"] is None
    md = render(rows, "markdown", versus="worse").splitlines()
    assert "††" in md[2] and "††" not in md[3] and "vs worse" in md[-1]
    with pytest.raises(UsageError):
        compare_with(rows, three, "nope")
