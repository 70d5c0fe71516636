"""``mustcite retrieve`` and ``mustcite evaluate`` on real data."""

from __future__ import annotations

import json

import pytest
from helpers import real_slice

from mustcite.cli.main import main

pytestmark = pytest.mark.data          # every test reads a pool cut from the real paper lists


@pytest.fixture(scope="module")
def files(data_dir, tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    pool = real_slice(3000)
    (d / "pool.jsonl").write_text("\n".join(json.dumps(p) for p in pool) + "\n")
    picks = [pool[10], pool[1500], pool[2900]]
    (d / "queries.jsonl").write_text("\n".join(
        json.dumps({"id": f"q{i}", "title": p["title"], "abstract": p["abstract"]})
        for i, p in enumerate(picks)) + "\n")
    (d / "qrels").write_text("".join(f"q{i} 0 {p['paper_id']} 1\n" for i, p in enumerate(picks)))
    return d, picks


def test_retrieve_json_and_trec(files, capsys, monkeypatch, tmp_path):
    d, picks = files
    monkeypatch.setenv("MUSTCITE_WORK", str(tmp_path / "work"))
    args = ["retrieve", "--method", "bm25", "--queries", str(d / "queries.jsonl"), "--pool", str(d / "pool.jsonl")]
    assert main(args + ["--top", "5", "--format", "json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["id"] for x in lines] == ["q0", "q1", "q2"]
    for line, p in zip(lines, picks):
        top = line["results"][0]
        assert ((top["paper_id"], top["title"], top["year"], top["venue"])
                == (p["paper_id"], p["title"], p["year"], p["venue"]))
        assert len(line["results"]) == 5 and line["method"]["k1"] == 1.5
    assert main(args + ["--top", "20", "--format", "trec", "--out", str(d / "bm25.trec")]) == 0
    rows = (d / "bm25.trec").read_text().splitlines()
    assert len(rows) == 60 and rows[0].split()[:4] == ["q0", "Q0", picks[0]["paper_id"], "1"]
    assert any((tmp_path / "work" / "cache" / "bm25").iterdir())      # the index is cached for reruns


def test_retrieve_bad_query_line(files, tmp_path, capsys):
    d, _ = files
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": "a", "title": "x", "abstract": ""}\n{"id": "b", "abstract": "no title"}\n')
    assert main(["retrieve", "--queries", str(bad), "--pool", str(d / "pool.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "q.jsonl:2" in err and "title" in err
    bad.write_text('{"id": "a", "title": "x"}\n{oops\n')
    assert main(["retrieve", "--queries", str(bad), "--pool", str(d / "pool.jsonl")]) == 1
    assert "q.jsonl:2" in capsys.readouterr().err
    assert main(["retrieve", "--queries", str(bad), "--pool", str(tmp_path / "none.parquet")]) == 1
    assert main(["retrieve", "--queries", str(bad), "--format", "xml", "--pool", str(d / "pool.jsonl")]) == 2


def test_evaluate_table(files, capsys):
    d, _ = files
    worse = d / "shuffled.trec"
    lines = (d / "bm25.trec").read_text().splitlines()
    worse.write_text("".join(f"{' '.join(x.split()[:4])} {1.0 / (1 + i % 20):.4f} rev\n"
                             for i, x in enumerate(reversed(lines))))
    assert main(["evaluate", "--run", str(d / "bm25.trec"), "--run", str(worse), "--qrels", str(d / "qrels"),
                 "--name", "BM25", "--name", "reversed"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| Method | MAP | MRR | nD@10 | nD@20 | nD@30 | R@50 | R@100 | HR@10 | HR@20 |"
    assert out[2].startswith("| BM25 | **1.0000** | **1.0000**")
    assert main(["evaluate", "--run", str(d / "bm25.trec"), "--qrels", str(d / "qrels"), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["rows"][0]["values"]["R@100"] == 1.0 and got["rows"][0]["queries"] == 3
    assert main(["evaluate", "--run", str(d / "qrels"), "--qrels", str(d / "qrels")]) == 1
    assert "qrels:1" in capsys.readouterr().err
