"""The benchmark builder on a small real slice.

Corpus: the real NeurIPS 2017-2024, ICML 2019-2023, ICLR 2020-2023, CVPR 2019 and ACL 2022 paper
lists. Citing papers: 24 real NeurIPS 2024 full texts and 4 NeurIPS 2023 ones; their reference
files hold the real reference lines that name a corpus title, linked to that paper, with labels
assigned by a fixed hand rule (position in the list), since the labelled extraction output of the
other stages is not part of these tests.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mustcite.benchmark.build import build_benchmark, hash_split, split_queries
from mustcite.benchmark.recipes import get_recipe
from mustcite.benchmark.trec import read_qrels
from mustcite.corpus.records import make_paper_id, normalize_title
from mustcite.errors import MustciteError, UsageError

# the `built` fixture (a benchmark built from real papers, once per session): conftest.py and helpers/benchmark.py


@pytest.mark.data
def test_pool_is_core_set_in_pool_years(built):
    m, out = built["manifest"], built["out"]
    pool = pq.read_table(out / "pool.parquet").to_pylist()
    years = {r["year"] for r in pool}
    assert min(years) == 2018 and max(years) == 2023
    by_venue = m["pool"]["by_venue"]
    n_target = sum(1 for r in built["rows"] if r["venue"] in ("NeurIPS", "ICML", "ICLR") and 2018 <= r["year"] <= 2023)
    assert by_venue["NeurIPS"] + by_venue["ICML"] + by_venue["ICLR"] == n_target
    # CVPR 2019 / ACL 2022 papers are in the pool only when a NeurIPS paper cites them
    cited = set()
    for f in built["refs"].glob("*.json"):
        if not f.name.endswith(".meta.json"):
            cited |= {r["paper_id"] for r in json.loads(f.read_text()) if r.get("paper_id")}
    other = {r["paper_id"] for r in pool if r["venue"] in ("CVPR", "ACL")}
    assert other and other <= cited
    assert by_venue.get("CVPR", 0) < 1294 / 10
    assert m["pool"]["papers"] == len(pool) == n_target + len(other) == 23579
    assert by_venue["CVPR"] == 6 and "ACL" not in by_venue
    snapshot = hashlib.sha256("\n".join(sorted(r["paper_id"] for r in pool)).encode()).hexdigest()
    assert m["pool"]["snapshot_sha256"] == snapshot


@pytest.mark.data
def test_queries_split_and_qrels(built):
    m, out = built["manifest"], built["out"]
    n = m["queries"]["total"]
    assert m["queries"]["excluded"] == {"no_mustcite_in_pool": 24 - n}
    assert n == 23                               # the all-background paper is the one excluded
    sizes = m["splits"]["sizes"]
    assert sizes == {"train": round(0.6 * n), "dev": round(0.8 * n) - round(0.6 * n), "test": n - round(0.8 * n)}
    seen = set()
    for s in ("train", "dev", "test"):
        lines = (out / "queries" / f"{s}.jsonl").read_text().splitlines()
        qs = [json.loads(x) for x in lines]
        assert len(qs) == sizes[s]
        assert all(q["title"] and q["year"] == 2024 and q["venue"] == "NeurIPS" for q in qs)
        seen |= {q["source"] for q in qs}
        qrels = {gt: read_qrels(out / "qrels" / f"{s}.{gt}.qrels")
                 for gt in ("type1", "type2", "type3", "mustcite", "cited")}
        assert set(qrels["mustcite"]) == {q["id"] for q in qs}          # every query has a must-cite paper
        for q in qrels["mustcite"]:
            union = set(qrels["type1"].get(q, {})) | set(qrels["type2"].get(q, {})) | set(qrels["type3"].get(q, {}))
            assert set(qrels["mustcite"][q]) == union <= set(qrels["cited"][q])
        for gt, qr in qrels.items():
            assert m["counts"][s][gt] == {"queries": len(qr), "pairs": sum(len(v) for v in qr.values())}
    assert built["stems"][5] not in seen
    assert sum(1 for q in seen if q in built["stems"]) == n
    with_abs = m["queries"]["with_abstract"]
    assert with_abs >= n - 2                     # abstracts come from the full texts


@pytest.mark.data
def test_labels_follow_the_hand_rule(built):
    out = built["out"]
    labels = [json.loads(x) for x in (out / "labels.jsonl").read_text().splitlines()]
    assert labels and all(r["raw"]["type1"] in (0, 1) for r in labels)
    for r in labels:
        raw = r["raw"]
        assert r["type1"] == (raw["type1"] == 1) and r["type2"] == (raw["type2"] >= 4)
        assert r["type3"] == (raw["mentions"] >= 3) and r["cited"]
        assert r["mustcite"] == (r["type1"] or r["type2"] or r["type3"]) == raw["must_cite"]
    m = built["manifest"]
    assert m["labels"]["version"] == "hand-rule-v1" and m["labels"]["pairs"] == len(labels)
    total = sum(m["counts"][s]["cited"]["pairs"] for s in ("train", "dev", "test"))
    assert total == len(labels)


@pytest.mark.data
def test_manifest_checksums_and_determinism(built, tmp_path):
    out, m = built["out"], built["manifest"]
    for name, sha in m["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == sha
    assert "qrels/test.mustcite.qrels" in m["files"] and "pool.parquet" in m["files"]
    again = build_benchmark(get_recipe("neurips-2024-v1"), corpus_path=built["root"] / "papers.parquet",
                            ref_dirs=[built["refs"]], out_dir=tmp_path / "again")
    assert {k: v for k, v in again["files"].items() if k != "pool.parquet"} == \
        {k: v for k, v in m["files"].items() if k != "pool.parquet"}
    assert again["pool"]["snapshot_sha256"] == m["pool"]["snapshot_sha256"]


def test_split_is_seeded():
    ids = [f"q{i:03d}" for i in range(100)]
    a = split_queries(ids, (0.6, 0.2, 0.2), 13)
    assert [len(a[s]) for s in ("train", "dev", "test")] == [60, 20, 20]
    assert a == split_queries(list(reversed(ids)), (0.6, 0.2, 0.2), 13)
    assert a != split_queries(ids, (0.6, 0.2, 0.2), 14)


@pytest.mark.data
def test_bad_inputs(built, tmp_path):
    with pytest.raises(UsageError):
        get_recipe("nope")
    with pytest.raises(UsageError):
        get_recipe("neurips-2024", split_fractions=(0.5, 0.5, 0.5))
    bad = tmp_path / "refs"
    bad.mkdir()
    (bad / "x.json").write_text('[{"target": 1, "title": "t", "year": "1999", "cite": "1", "contexts": []}]')
    with pytest.raises(MustciteError) as err:
        build_benchmark(get_recipe("neurips-2024-v2"), corpus_path=built["root"] / "papers.parquet",
                        ref_dirs=[bad], out_dir=tmp_path / "o")
    assert "x.json" in str(err.value) and "0/year" in str(err.value)


@pytest.mark.data
def test_cli_build_run_and_training_pairs(built, tmp_path, capsys):
    from mustcite.benchmark.retrieval_training import training_pairs
    from mustcite.cli.main import main

    work = tmp_path / "work"
    assert main(["--work", str(work), "benchmark", "build", "--recipe", "neurips-2024-v1", "--refs",
                 str(built["refs"]), "--corpus", str(built["root"] / "papers.parquet")]) == 0
    out = capsys.readouterr().out
    assert "pool 23579 papers (2018-2023), 23 queries (train 14, dev 4, test 5)" in out
    bdir = work / "benchmarks" / "neurips-2024-v1"
    assert json.loads((bdir / "manifest.json").read_text())["pool"]["snapshot_sha256"] == \
        built["manifest"]["pool"]["snapshot_sha256"]
    assert main(["--work", str(work), "benchmark", "run", "--benchmark", "neurips-2024-v1", "--method", "bm25",
                 "--split", "test"]) == 0
    out = capsys.readouterr().out
    assert "neurips-2024-v1 test - mustcite" in out and "| bm25 |" in out
    run = (bdir / "runs" / "bm25.test.trec").read_text().splitlines()
    assert len({x.split()[0] for x in run}) == 5 and len(run) == 500
    meta = json.loads((bdir / "runs" / "bm25.test.meta.json").read_text())
    assert (meta["k1"], meta["b"], meta["split"]) == (1.5, 0.75, "test")
    assert meta["seconds"] > 0 and 50 < meta["peak_rss_mb"] < 24 * 1024   # this process's peak, in MiB
    pairs = training_pairs(bdir, split="train")
    assert len(pairs) == built["manifest"]["counts"]["train"]["mustcite"]["pairs"]
    assert all(q and d for q, d in pairs)


@pytest.mark.data
def test_cli_trains_a_listwise_reranker_on_train_queries_and_runs_it(built, tmp_path, capsys):
    from mustcite.cli.main import main

    work = tmp_path / "work"
    assert main(["--work", str(work), "benchmark", "build", "--recipe", "neurips-2024-v1", "--refs",
                 str(built["refs"]), "--corpus", str(built["root"] / "papers.parquet")]) == 0
    assert main(["--work", str(work), "benchmark", "train-rerank", "--benchmark", "neurips-2024-v1", "--name", "rr",
                 "--queries", "3", "--per-query", "2", "--negatives", "3", "--max-length", "32",
                 "--prefetch", "10"]) == 0
    out = capsys.readouterr().out
    assert "groups" in out and "use --method rerank:" in out
    model = work / "models" / "rr"
    card = json.loads((model / "rerank_model.json").read_text())["card"]
    assert (card["objective"], card["split"], card["train_queries"], card["negatives"]) == ("listwise", "train", 3, 3)
    assert 1 <= card["groups"] <= 6 and card["pairs"] == 4 * card["groups"] and card["max_length"] == 32
    ce = json.loads((model / "cross_encoder" / "mustcite_cross_encoder.json").read_text())
    assert ce["head"] == "segment-cosine" and ce["objective"] == "listwise" and ce["frozen_embeddings"]
    assert main(["--work", str(work), "benchmark", "run", "--benchmark", "neurips-2024-v1", "--method",
                 f"rerank:{model}", "--split", "test", "--tag", "rr"]) == 0
    run = (work / "benchmarks" / "neurips-2024-v1" / "runs" / "rr.test.trec").read_text().splitlines()
    assert len({x.split()[0] for x in run}) == 5
    assert main(["--work", str(work), "benchmark", "train-rerank", "--benchmark", "neurips-2024-v1", "--name", "rr2",
                 "--head", "mean"]) == 2


@pytest.mark.data
def test_second_file_of_a_paper_is_skipped(built, tmp_path):
    import shutil

    refs = tmp_path / "refs"
    shutil.copytree(built["refs"], refs)
    stem = built["stems"][0]
    shutil.copy(refs / f"{stem}.json", refs / "zzzDuplicate.json")          # same paper, second full text
    shutil.copy(refs / f"{stem}.meta.json", refs / "zzzDuplicate.meta.json")
    m = build_benchmark(get_recipe("neurips-2024-v1"), corpus_path=built["root"] / "papers.parquet",
                        ref_dirs=[refs], out_dir=tmp_path / "o")
    dup = m["inputs"]["duplicate_citing_files_skipped"]
    assert [Path(d["file"]).name for d in dup] == ["zzzDuplicate.json"] and Path(dup[0]["kept"]).name == f"{stem}.json"
    assert m["queries"]["total"] == 23 and m["counts"] == built["manifest"]["counts"]


# ---------------------------------------------------------------------------------------- v2


def _pool_ids(out: Path) -> set[str]:
    return set(pq.read_table(out / "pool.parquet", columns=["paper_id"]).column("paper_id").to_pylist())


@pytest.fixture(scope="module")
def built_v2(built, tmp_path_factory):
    """v2 on the same slice, with two 2024 full texts marked as having lost a page in OCR."""
    import shutil

    root = tmp_path_factory.mktemp("bench_v2")
    refs = root / "refs"
    shutil.copytree(built["refs"], refs)
    planned = {s: hash_split(make_paper_id_of(built, s), (0.6, 0.2, 0.2), 13) for s in built["stems"]}
    lossy = [s for s in built["stems"] if planned[s] != "train" and s != built["stems"][5]][:3]
    for f in refs.glob("*.meta.json"):          # as `mustcite extract` writes them: no page lost
        meta = json.loads(f.read_text())
        meta.update(stats={"failed_pages": 0, "missing_pages": 0}, failure_modes=[])
        f.write_text(json.dumps(meta))
    meta = json.loads((refs / f"{lossy[2]}.meta.json").read_text())
    del meta["stats"]                           # no page count at all: unknown, so not held out
    (refs / f"{lossy[2]}.meta.json").write_text(json.dumps(meta))
    for stem, modes in zip(lossy, (["incomplete_bibliography"], [])):
        meta = json.loads((refs / f"{stem}.meta.json").read_text())
        meta.update(stats={"failed_pages": 1, "missing_pages": 1}, failure_modes=modes)
        (refs / f"{stem}.meta.json").write_text(json.dumps(meta))
    out = root / "out"
    m = build_benchmark(get_recipe("neurips-2024-v2"), corpus_path=built["root"] / "papers.parquet",
                        ref_dirs=[refs], out_dir=out)
    return {"root": root, "refs": refs, "out": out, "manifest": m, "lossy": lossy, "planned": planned}


def make_paper_id_of(built, stem: str) -> str:
    """The corpus paper_id the builder resolves a 2024 fixture stem to (by its title)."""
    meta = json.loads((built["refs"] / f"{stem}.meta.json").read_text())
    norm = normalize_title(meta["title"])
    for r in built["rows"]:
        if r["venue"] == "NeurIPS" and r["year"] == 2024 and normalize_title(r["title"]) == norm:
            return r["paper_id"]
    return make_paper_id(meta["title"], "NeurIPS", 2024, stem)


def _query_splits(out: Path) -> dict[str, str]:
    return {json.loads(x)["id"]: s for s in ("train", "dev", "test")
            for x in (out / "queries" / f"{s}.jsonl").read_text().splitlines()}


@pytest.mark.data
def test_v2_manifest_names_its_rules(built_v2):
    m = built_v2["manifest"]
    assert m["version"] == "v2" and m["recipe"]["pool_rule"] == "no-heldout" and m["splits"]["rule"] == "hash"
    assert m["pool"]["rule"] == "no-heldout"
    assert m["pool"]["other_venue"] == m["pool"]["other_venue_cited_by_earlier_years"] + \
        m["pool"]["other_venue_cited_only_by_train_queries"]
    assert m["queries"]["train_only"] == {"failed_page_near_references": 1, "failed_page_in_body": 1,
                                          "failed_pages_unknown": 1}


@pytest.mark.data
def test_v2_pool_never_depends_on_dev_or_test_citations(built, built_v2, tmp_path):
    """Add a citation of an otherwise uncited ACL 2022 paper to a dev or test query: v2's pool is
    unchanged, v1's takes it (so this test fails if the pool depends on held-out citations)."""
    import shutil

    splits = _query_splits(built_v2["out"])
    held = [s for s in built["stems"] if splits.get(make_paper_id_of(built, s)) in ("dev", "test")]
    assert held
    acl = next(r for r in built["rows"] if r["venue"] == "ACL")
    assert acl["paper_id"] not in _pool_ids(built_v2["out"])
    refs = tmp_path / "refs"
    shutil.copytree(built_v2["refs"], refs)
    entries = json.loads((refs / f"{held[0]}.json").read_text())
    entries.append({"target": len(entries) + 1, "title": acl["title"], "year": 2022, "cite": str(len(entries) + 1),
                    "contexts": [], "raw": acl["title"], "mentions": 3, "paper_id": acl["paper_id"],
                    "link_score": 1.0, "type1": 1, "type2": 5, "type3": 1, "must_cite": True, "judge": "hand-rule-v1"})
    (refs / f"{held[0]}.json").write_text(json.dumps(entries))
    corpus = built["root"] / "papers.parquet"
    v2 = build_benchmark(get_recipe("neurips-2024-v2"), corpus_path=corpus, ref_dirs=[refs], out_dir=tmp_path / "v2")
    v1 = build_benchmark(get_recipe("neurips-2024-v1"), corpus_path=corpus, ref_dirs=[refs], out_dir=tmp_path / "v1")
    assert v2["pool"]["snapshot_sha256"] == built_v2["manifest"]["pool"]["snapshot_sha256"]
    assert acl["paper_id"] in _pool_ids(tmp_path / "v1")
    assert v1["pool"]["papers"] == built["manifest"]["pool"]["papers"] + 1
    # and dropping every dev/test query's file altogether leaves the pool as it is
    for stem in held:
        (refs / f"{stem}.json").unlink()
    v2b = build_benchmark(get_recipe("neurips-2024-v2"), corpus_path=corpus, ref_dirs=[refs], out_dir=tmp_path / "v2b")
    assert v2b["pool"]["snapshot_sha256"] == built_v2["manifest"]["pool"]["snapshot_sha256"]


@pytest.mark.data
def test_v2_other_venue_pool_papers_come_from_earlier_or_train_papers(built_v2):
    allowed: set[str] = set()
    for f in built_v2["refs"].glob("*.meta.json"):
        meta = json.loads(f.read_text())
        stem = f.name[: -len(".meta.json")]
        if meta["year"] < 2024 or built_v2["planned"].get(stem) == "train" or stem in built_v2["lossy"]:
            allowed |= {r["paper_id"] for r in json.loads((built_v2["refs"] / f"{stem}.json").read_text())
                        if r.get("paper_id")}
    pool = pq.read_table(built_v2["out"] / "pool.parquet").to_pylist()
    other = {r["paper_id"] for r in pool if r["venue"] not in ("NeurIPS", "ICML", "ICLR")}
    assert other and other <= allowed


@pytest.mark.data
def test_v2_lossy_full_texts_are_train_queries_only(built, built_v2):
    splits = _query_splits(built_v2["out"])
    for stem in built_v2["lossy"]:
        assert built_v2["planned"][stem] in ("dev", "test")        # the hash alone would hold it out
        assert splits.get(make_paper_id_of(built, stem)) == "train"


def test_hash_split_is_per_paper():
    ids = [f"q{i:04d}" for i in range(2000)]
    a = {q: hash_split(q, (0.6, 0.2, 0.2), 13) for q in ids}
    counts = {s: sum(v == s for v in a.values()) for s in ("train", "dev", "test")}
    assert abs(counts["train"] - 1200) < 80 and abs(counts["dev"] - 400) < 60
    assert all(hash_split(q, (0.6, 0.2, 0.2), 13) == a[q] for q in ids[:50])     # no dependence on the others
    assert sum(hash_split(q, (0.6, 0.2, 0.2), 14) != a[q] for q in ids) > 500


def test_neurips_2024_names_its_current_version(tmp_path):
    from mustcite.benchmark import benchmark_folder

    assert get_recipe("neurips-2024") == get_recipe("neurips-2024-v2")
    assert get_recipe("neurips-2024").name == "neurips-2024-v2" and get_recipe("neurips-2024").version == "v2"
    assert [get_recipe(f"neurips-2024-v{v}").version for v in (1, 2, 3)] == ["v1", "v2", "v3"]
    assert benchmark_folder(tmp_path, "neurips-2024") == tmp_path / "neurips-2024-v2"
    (tmp_path / "neurips-2024").mkdir()      # built before each version carried its number
    assert benchmark_folder(tmp_path, "neurips-2024-v2") == tmp_path / "neurips-2024"
    (tmp_path / "neurips-2024-v2").mkdir()
    assert benchmark_folder(tmp_path, "neurips-2024") == tmp_path / "neurips-2024-v2"
    assert benchmark_folder(tmp_path, "neurips-2024-v3") == tmp_path / "neurips-2024-v3"
