"""The Ray engine (:mod:`mustcite.engine`) on a local Ray cluster (``num_cpus=2``) and 16 real
NeurIPS 2024 papers: extract + link, annotate (offline judge) and pool encoding give the same bytes
as the local engine; a worker killed mid-run loses nothing (the paper is reported, the rest is
written) and the rerun does only what was missing; ``--engine ray`` without Ray is a usage error."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from mustcite.cli.main import main
from mustcite.engine import LocalEngine, RayEngine, make_engine
from mustcite.errors import UsageError
from mustcite.extract.link import link_dir
from mustcite.extract.runner import extract_paths
from mustcite.labels.annotate import annotate_dir
from mustcite.run_markers import read_run_state

if importlib.util.find_spec("ray") is None:    # `make test` installs the `ray` extra: run, never skip
    raise ImportError("the Ray engine tests need ray: pip install -e '.[ray]' (make test does)")

from helpers import DATA  # noqa: E402

PAPERS = sorted((DATA / "neurips" / "fulltext_2024").glob("*.md.gz"))[:16]
LISTS = [("nips2017", "NeurIPS", 2017), ("iclr2017", "ICLR", 2017), ("icml2019", "ICML", 2019),
         ("nips2019", "NeurIPS", 2019)]
#: run files with timings in them (compared without their timing fields)
TIMED = {"summary.json", "labels_summary.json"}

# the tests on the 16 real papers are marked data; the others need no data


@pytest.fixture(scope="module")
def corpus(data_dir, tmp_path_factory) -> Path:
    """A small real corpus store: the 3,090 titles of the NeurIPS/ICLR/ICML paper lists test_link uses."""
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    from mustcite.corpus.records import make_paper_id

    cols: dict[str, list] = {"paper_id": [], "title": [], "year": []}
    for name, venue, year in LISTS:
        for line in gzip.open(DATA / "proceedings" / "paperlists" / f"{name}.jsonl.gz", "rt", encoding="utf-8"):
            if line.strip():
                r = json.loads(line)
                cols["paper_id"].append(make_paper_id(r["title"], venue, year, str(r.get("id", ""))))
                cols["title"].append(r["title"])
                cols["year"].append(year)
    out = tmp_path_factory.mktemp("corpus") / "papers.parquet"
    pq.write_table(pa.table(cols), out)
    return out


@pytest.fixture(scope="module")
def cluster():
    engine = RayEngine(num_cpus=2)
    engine.workers()                     # start the local cluster once for the module
    yield engine
    engine.shutdown()


def _files(folder: Path) -> dict[str, bytes]:
    """Every output file under ``folder`` (run markers and timed run files aside)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".mustcite" not in p.parts and p.name not in TIMED}


def _untimed(doc):
    """A run summary without its timings and its own folder's path."""
    if isinstance(doc, dict):
        return {k: _untimed(v) for k, v in doc.items()
                if k not in ("seconds", "elapsed_s", "instances_per_s", "skipped", "out_dir", "folder", "labels_dir")}
    if isinstance(doc, list):
        return [_untimed(x) for x in doc]
    return doc


def _summary(folder: Path, name: str = "summary.json") -> dict:
    return json.loads((folder / name).read_text())


@pytest.fixture(scope="module")
def local_run(data_dir, tmp_path_factory, corpus) -> Path:
    """The reference: extract + link + annotate on the local engine (a 2-process pool)."""
    out = tmp_path_factory.mktemp("local") / "ex"
    extract_paths(PAPERS, out, progress=False, engine=LocalEngine(2))
    link_dir(out, corpus, progress=False, engine=LocalEngine(2))
    annotate_dir(out, progress=False, engine=LocalEngine(2))
    return out


@pytest.mark.data
def test_extract_link_annotate_byte_identical(cluster, local_run, corpus, tmp_path):
    out = tmp_path / "ex"
    s = extract_paths(PAPERS, out, progress=False, engine=cluster)
    assert s.papers == 16 and s.failed == 0 and s.skipped == 0
    link = link_dir(out, corpus, progress=False, engine=cluster)
    assert link.errors == 0 and link.linked > 0
    ann = annotate_dir(out, progress=False, engine=cluster)
    assert ann["failed_calls"] == 0 and ann["skipped"] == 0
    ours, ref = _files(out), _files(local_run)
    assert sorted(ours) == sorted(ref) and len([k for k in ref if k.startswith("labels/")]) == 16
    assert [k for k in ref if ours[k] != ref[k]] == []
    assert _untimed(_summary(out)) == _untimed(_summary(local_run))
    assert _untimed(_summary(out, "labels_summary.json")) == _untimed(_summary(local_run, "labels_summary.json"))
    # a rerun on either engine repeats no work
    again = extract_paths(PAPERS, out, progress=False, engine=cluster)
    assert again.skipped == 16
    assert annotate_dir(out, progress=False, engine=LocalEngine(2))["skipped"] == 16


def _killing(victim: str) -> RayEngine:
    """``engine`` whose workers kill themselves (SIGKILL, as the OOM killer or a lost node would)
    whenever they reach a record that mentions ``victim``: every attempt dies."""

    class Killing(RayEngine):
        def map(self, fn, items, **kw):
            def deadly(item):
                if victim in repr(item):
                    os.kill(os.getpid(), signal.SIGKILL)
                return fn(item)
            return super().map(deadly, items, **kw)

    return Killing(num_cpus=2, batch_size=4)


@pytest.mark.data
def test_worker_killed_mid_extract_loses_nothing(cluster, local_run, corpus, tmp_path):
    victim = PAPERS[5].name.split(".")[0]
    out = tmp_path / "ex"
    s = extract_paths(PAPERS, out, progress=False, engine=_killing(victim))
    # the run completes; the paper whose worker died is reported, its batch-mates are written
    assert s.papers == 16 and s.failed == 1 and s.ok + s.flagged == 15
    lost = [r for r in s.rows if r["status"] == "failed"]
    assert lost[0]["paper"] == victim and lost[0]["failure_modes"] == ["worker_lost"]
    assert "worker lost" in lost[0]["messages"][0]
    assert read_run_state(out, "extract").complete
    assert not (out / f"{victim}.json").exists() and not (out / f"{victim}.meta.json").exists()
    ref = _files(local_run)
    metas = {k: v for k, v in _files(out).items() if k.endswith(".meta.json")}
    assert len(metas) == 15 and all(v == ref[k] for k, v in metas.items())
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.glob("*.json") if p.name != "summary.json"}
    # the rerun extracts only the lost paper and leaves the others' files alone
    again = extract_paths(PAPERS, out, progress=False, engine=cluster)
    assert again.skipped == 15 and again.failed == 0
    assert [r["paper"] for r in again.rows if not r.get("skipped")] == [victim]
    assert {n: (out / n).stat().st_mtime_ns for n in mtimes} == mtimes
    link_dir(out, corpus, progress=False, engine=cluster)
    final = _files(out)
    assert {k: v for k, v in ref.items() if not k.startswith("labels/")} == final


@pytest.mark.data
def test_worker_killed_mid_annotate_rerun_relabels_only_the_lost(cluster, local_run, tmp_path):
    out = tmp_path / "ex"
    shutil.copytree(local_run, out)
    shutil.rmtree(out / "labels")
    victim = PAPERS[2].name.split(".")[0]
    s = annotate_dir(out, progress=False, engine=_killing(f"'{victim}'"))
    assert s["failed_calls"] > 0                       # reported (the CLI exits 1 and says: rerun)
    assert read_run_state(out / "labels", "annotate").complete
    ref = _files(local_run)
    labels = _files(out)
    kept = [k for k in labels if k.startswith("labels/") and labels[k] == ref[k]]
    assert 0 < len(kept) < 16                          # the other batch's papers are labelled
    again = annotate_dir(out, progress=False, engine=cluster)
    assert again["failed_calls"] == 0 and again["skipped"] == len(kept)
    assert _files(out) == ref


@pytest.mark.data
def test_encoding_byte_identical(cluster, local_run, tmp_path_factory):
    """Pool encoding (int8 ONNX MiniLM, as `mustcite train` uses): the batches encoded on Ray
    workers give the same embedding-cache shard, byte for byte, as encoding in this process."""
    pytest.importorskip("onnxruntime")
    from mustcite.retrieval.dense import DenseRetriever
    from mustcite.retrieval.onnx_export import ensure_onnx_int8
    from mustcite.retrieval.vectors import default_model_path

    shared = tmp_path_factory.mktemp("onnx")
    ensure_onnx_int8(default_model_path(), shared)
    metas = [json.loads(p.read_text()) for p in sorted(local_run.glob("*.meta.json"))]
    texts = [f"{m['title']}. {(m['abstract'] or '')[:60 * (1 + i)]}" for m in metas for i in range(4)]
    shards = {}
    for name, engine in (("local", LocalEngine()), ("ray", cluster)):
        cache = tmp_path_factory.mktemp(name)
        shutil.copytree(shared / "onnx", cache / "onnx")
        r = DenseRetriever("onnx-int8:minilm", cache_dir=cache, max_seq_length=64, batch_size=16)
        r.engine = engine
        v = r.embed(texts)
        assert v.shape == (64, 384) and r.cache.encoded_last == 64
        shards[name] = {p.name: p.read_bytes() for p in sorted((cache / "emb").rglob("*.npy"))}
        assert r.embed(texts).tobytes() == v.tobytes() and r.cache.encoded_last == 0   # cached: no work
    assert shards["ray"] == shards["local"] and len(shards["local"]) == 1


def test_an_error_raised_by_the_function_ends_the_map_as_in_process(cluster):
    def broken(x):
        if x == 7:
            raise OSError("disk full")
        return x

    with pytest.raises(OSError, match="disk full"):
        list(RayEngine().map(broken, list(range(20))))
    assert list(RayEngine(batch_size=3).map(abs, [-3, 2, -1, 0, 5])) == [3, 2, 1, 0, 5]   # input order


@pytest.mark.data
def test_cli_engine_ray_prints_rate(cluster, tmp_path, capsys):
    out = tmp_path / "ex"
    assert main(["extract", *map(str, PAPERS[:4]), "-o", str(out), "--engine", "ray", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["engine"] == "ray" and doc["papers"] == 4 and doc["papers_per_s"] > 0


@pytest.mark.data
def test_engine_ray_without_ray_is_a_usage_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)          # as if Ray were not installed
    with pytest.raises(UsageError, match=r"mustcite\[ray\]"):
        make_engine("ray")
    assert main(["extract", str(PAPERS[0]), "-o", str(tmp_path / "x"), "--engine", "ray"]) == 2
    err = capsys.readouterr().err
    assert "needs Ray" in err and "Traceback" not in err and not (tmp_path / "x").exists()
    assert main(["link", str(tmp_path), "--engine", "spark"]) == 2
    assert main(["annotate", str(tmp_path), "--address", "ray://x:1"]) == 2
