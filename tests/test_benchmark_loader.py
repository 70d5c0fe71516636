"""The benchmark loader (``Benchmark.open``) on the small real benchmark of test_benchmark_build (the
``built`` fixture of conftest.py), and the readers built on it (train-only recommender data, NT-Xent pairs)."""

from __future__ import annotations

import json
import shutil

import pytest

from mustcite.benchmark.evaluate import evaluate
from mustcite.benchmark.loader import Benchmark
from mustcite.benchmark.trec import read_qrels
from mustcite.errors import DataMissingError

pytestmark = pytest.mark.data          # every test reads the `built` benchmark (conftest.py)

GTS = ["cited", "mustcite", "type1", "type2", "type3"]
HINT = "run `mustcite benchmark build` first"


def test_reads_pool_queries_qrels_labels_and_manifest(built):
    out, m = built["out"], built["manifest"]
    b = Benchmark.open(out)
    assert b.name == "out" and b.manifest == json.loads(json.dumps(m))
    pool = b.pool()
    assert len(pool) == m["pool"]["papers"] == 23579
    assert {"paper_id", "title", "abstract", "venue", "year"} <= set(pool[0])
    assert b.pool_ids() == {p["paper_id"] for p in pool}
    assert b.splits() == ["train", "dev", "test"]
    for s in b.splits():
        qs = b.queries(s)
        lines = (out / "queries" / f"{s}.jsonl").read_text().splitlines()
        assert [q["id"] for q in qs] == [json.loads(x)["id"] for x in lines]
        assert len(qs) == m["splits"]["sizes"][s] and all(q["year"] == 2024 for q in qs)
        qrels = b.qrels(s)
        assert list(qrels) == GTS
        for gt, table in qrels.items():
            assert table == read_qrels(out / "qrels" / f"{s}.{gt}.qrels")
            assert m["counts"][s][gt] == {"queries": len(table), "pairs": sum(len(v) for v in table.values())}
        assert b.qrels(s, ["type3", "cited"]) == {"type3": qrels["type3"], "cited": qrels["cited"]}
    labels = b.labels()
    assert len(labels) == m["labels"]["pairs"] and {"qid", "paper_id", "mustcite", "split"} <= set(labels[0])


def test_evaluate_scores_a_run_against_the_split_qrels(built):
    b = Benchmark.open(built["out"])
    qrels = b.qrels("test", ["mustcite"])["mustcite"]
    perfect = {q: {pid: 1.0 for pid in docs} for q, docs in qrels.items()}
    got = b.evaluate(perfect, "test", "mustcite", ("MAP", "R@100", "HR@10"))
    assert got == {"MAP": 1.0, "R@100": 1.0, "HR@10": 1.0}
    # half the queries answered with half their papers, plus a wrong one ranked first
    partial = {}
    for i, (q, docs) in enumerate(sorted(qrels.items())):
        if i % 2 == 0:
            ids = sorted(docs)
            half = ids[: max(1, len(ids) // 2)]
            partial[q] = {"not-a-paper": 9.0} | {pid: 1.0 / (k + 1) for k, pid in enumerate(half)}
    got = b.evaluate(partial, "test", "mustcite")
    assert got == evaluate(partial, qrels) and 0 < got["MAP"] < 1 and got["MRR"] == pytest.approx(got["HR@10"] / 2)


def test_missing_files_raise_data_missing_naming_them(built, tmp_path):
    with pytest.raises(DataMissingError) as e:
        Benchmark.open(tmp_path / "nope")
    assert e.value.path.endswith("nope") and e.value.hint == HINT
    folder = tmp_path / "b"
    shutil.copytree(built["out"], folder)
    for f in ("queries/test.jsonl", "qrels/dev.type1.qrels", "pool.parquet", "manifest.json", "labels.jsonl"):
        (folder / f).unlink()
    b = Benchmark.open(folder)
    assert b.splits() == ["train", "dev"] and list(b.qrels("dev")) == ["cited", "mustcite", "type2", "type3"]
    calls = [(lambda: b.queries("test"), "test.jsonl"), (lambda: b.qrels("dev", ["type1"]), "dev.type1.qrels"),
             (b.pool, "pool.parquet"), (b.pool_ids, "pool.parquet"), (lambda: b.manifest, "manifest.json"),
             (b.labels, "labels.jsonl")]
    for call, name in calls:
        with pytest.raises(DataMissingError) as e:
            call()
        assert e.value.path.endswith(name) and e.value.hint == HINT


def test_recommender_data_and_ntxent_pairs_read_through_the_loader(built, tmp_path):
    from mustcite.benchmark.retrieval_training import training_pairs
    from mustcite.benchmark.training_data import benchmark_data

    b = Benchmark.open(built["out"])
    data = benchmark_data(built["out"])
    assert list(data.splits) == ["train", "dev", "test"]
    assert all(data.splits[s] == (b.queries(s), b.qrels(s)) for s in data.splits)
    assert len(data.pool) == len(b.pool()) and not data.extra
    assert {p.id for p in data.train} == {q["id"] for q in b.queries("train")}
    assert {p.source for p in data.train} == {"out:train"}
    pairs = training_pairs(built["out"], split="dev", truth="type1")
    assert len(pairs) == built["manifest"]["counts"]["dev"]["type1"]["pairs"]
    folder = tmp_path / "b"
    shutil.copytree(built["out"], folder)
    (folder / "queries" / "dev.jsonl").unlink()
    with pytest.raises(DataMissingError) as e:
        benchmark_data(folder)
    assert e.value.path.endswith("dev.jsonl") and "split dev" in e.value.message
    (folder / "labels.jsonl").unlink()
    with pytest.raises(DataMissingError) as e:
        training_pairs(folder)
    assert e.value.path.endswith("labels.jsonl")
