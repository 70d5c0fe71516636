"""Run markers (:mod:`mustcite.run_markers`) and crash recovery of the long stages: ``annotate`` resumes
(skipping papers already labelled by the same judge), ``labels stats`` refuses a partial label
folder, and a real ``kill -9`` of ``mustcite annotate`` on 40 real NeurIPS 2024 papers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import DATA
from helpers.waiting import wait_until

from mustcite.cli.main import main
from mustcite.errors import MustciteError
from mustcite.extract.runner import extract_paths
from mustcite.labels.annotate import annotate_dir
from mustcite.run_markers import marker_path, read_run_state, run_marker, warn_if_partial

PAPERS = sorted((DATA / "neurips" / "fulltext_2024").glob("*.md.gz"))[:40]
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def extracted(data_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "ex"
    extract_paths(PAPERS, out, workers=1, progress=False)
    return out


@pytest.fixture(scope="module")
def fresh_labels(extracted, tmp_path_factory) -> dict[str, bytes]:
    """Label files of one uninterrupted run (default chunking) on a copy of the extraction."""
    d = tmp_path_factory.mktemp("fresh") / "ex"
    shutil.copytree(extracted, d)
    annotate_dir(d, progress=False)
    return _labels(d)


@pytest.fixture()
def ex(extracted, tmp_path) -> Path:
    d = tmp_path / "ex"
    shutil.copytree(extracted, d)
    return d


def _labels(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "labels").glob("*.json"))}


def _mtimes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (folder / "labels").glob("*.json")}


def _fake_dead_writer(folder: Path, stage: str = "annotate") -> None:
    """Turn a marker into one left ``running`` by a process that is gone (our pid, another start time)."""
    path = marker_path(folder, stage)
    doc = json.loads(path.read_text())
    doc.update(state="running", finished=None, counts={}, pid=os.getpid(), pid_start="1")
    path.write_text(json.dumps(doc))


# ---- the marker ----------------------------------------------------------------------------

def test_marker_running_then_complete(tmp_path):
    with run_marker(tmp_path, "annotate", expected=3, options={"force": False}) as counts:
        st = read_run_state(tmp_path)
        assert st.state == "running" and st.stage == "annotate" and st.pid == os.getpid() and st.expected == 3
        assert "still running" in warn_if_partial(tmp_path, "label folder")
        counts.update(papers=3, skipped=1)
    st = read_run_state(tmp_path, "annotate")
    assert st.complete and st.finished and st.counts == {"papers": 3, "skipped": 1}
    assert st.options == {"force": False} and st.path == tmp_path / ".mustcite" / "run-annotate.json"
    assert warn_if_partial(tmp_path, "label folder") is None
    assert [p.name for p in tmp_path.glob("*.json")] == []          # hidden from glob("*.json") readers


def test_marker_failed_keeps_the_error(tmp_path):
    with pytest.raises(MustciteError, match="boom"):
        with run_marker(tmp_path, "link", expected=2):
            raise MustciteError("boom: corpus unreadable")
    st = read_run_state(tmp_path)
    assert st.state == "failed" and st.error == "boom: corpus unreadable" and st.finished
    msg = warn_if_partial(tmp_path, "extraction folder")
    assert "failed: boom" in msg and str(st.path) in msg


def test_marker_interrupted_after_the_process_dies(tmp_path):
    code = ("import sys, time\nfrom mustcite.run_markers import run_marker\n"
            "cm = run_marker(sys.argv[1], 'annotate', expected=5)\ncm.__enter__()\n"
            "print('ready', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert read_run_state(tmp_path).state == "running"
    finally:
        proc.kill()
        proc.wait()
    st = read_run_state(tmp_path)
    assert st.state == "interrupted" and st.pid == proc.pid
    assert json.loads(st.path.read_text())["state"] == "running"    # the file as kill -9 left it
    assert "was interrupted" in warn_if_partial(tmp_path, "label folder")
    # a pid reused by another process (here: ours, with another start time) is not the writer
    _fake_dead_writer(tmp_path)
    assert read_run_state(tmp_path).state == "interrupted"


def test_corrupt_marker_names_the_file(tmp_path):
    path = marker_path(tmp_path, "extract")
    path.parent.mkdir()
    path.write_text("{not json")
    with pytest.raises(MustciteError, match="corrupt run marker") as e:
        read_run_state(tmp_path)
    assert str(path) in str(e.value)
    path.write_text(json.dumps({"stage": "extract", "state": "done", "pid": 1, "started": "x"}))
    with pytest.raises(MustciteError, match="corrupt run marker") as e:
        read_run_state(tmp_path, "extract")
    assert e.value.field == "state" and str(path) in str(e.value)
    assert read_run_state(tmp_path / "nothing-here") is None


# ---- annotate: resume ----------------------------------------------------------------------

@pytest.mark.data
def test_annotate_resumes_and_labels_match_a_fresh_run(ex, fresh_labels):
    s1 = annotate_dir(ex, progress=False, chunk=500)              # several chunks
    assert s1["skipped"] == 0 and s1["papers"] == 40 and _labels(ex) == fresh_labels
    st = read_run_state(ex / "labels")
    assert st.complete and st.counts["labelled"] == 40 and st.expected == 40
    mtimes = _mtimes(ex)
    s2 = annotate_dir(ex, progress=False)
    assert s2["skipped"] == 40 and s2["calls"] == 0 and s2["kept_answers"] == 2 * s1["instances"] and s2["cached"] == 0
    assert s2["counts"] == s1["counts"] and s2["instances"] == s1["instances"]
    assert _mtimes(ex) == mtimes                                   # nothing rewritten
    assert json.loads((ex / "labels_summary.json").read_text())["skipped"] == 40
    # two label files lost: only those two are redone
    gone = sorted(mtimes)[:2]
    n_gone = sum(len(json.loads(fresh_labels[g])) for g in gone)
    for g in gone:
        (ex / "labels" / g).unlink()
    s3 = annotate_dir(ex, progress=False)
    assert s3["skipped"] == 38 and s3["calls"] == 2 * n_gone and s3["counts"] == s1["counts"]
    assert {k: v for k, v in _mtimes(ex).items() if k not in gone} == {k: v for k, v in mtimes.items() if k not in gone}
    assert _labels(ex) == fresh_labels
    # a reference file newer than its labels, or labels of another judge, are relabelled
    ref = ex / gone[0]
    os.utime(ref, ns=(time.time_ns(), time.time_ns() + 10**9))
    other = ex / "labels" / sorted(mtimes)[5]
    items = json.loads(other.read_text())
    other.write_text(json.dumps([dict(it, judge="someone-else") for it in items]))
    assert annotate_dir(ex, progress=False)["skipped"] == 38
    assert _labels(ex) == fresh_labels
    # a new Type III threshold changes the labels: those papers are relabelled
    s5 = annotate_dir(ex, progress=False, mention_threshold=1)
    assert s5["skipped"] < 40 and s5["counts"]["type3"] != s1["counts"]["type3"]
    s6 = annotate_dir(ex, progress=False, force=True)
    assert s6["skipped"] == 0 and s6["calls"] == 2 * s1["instances"] and _labels(ex) == fresh_labels


@pytest.mark.data
def test_annotate_warns_on_a_partial_extraction_folder(ex, capsys):
    st = read_run_state(ex, "extract")
    assert st.complete and st.counts["papers"] == 40 and st.expected == 40
    _fake_dead_writer(ex, "extract")
    s = annotate_dir(ex, progress=False)
    err = capsys.readouterr().err
    assert "warning: extraction folder" in err and "extract" in err and "40 of 40 papers extracted" in err
    assert s["papers"] == 40 and read_run_state(ex / "labels").complete


@pytest.mark.data
def test_link_marks_its_run(ex, tmp_path, monkeypatch, capsys):
    import mustcite.extract.link as link

    corpus = tmp_path / "papers.parquet"
    pq.write_table(pa.table({"paper_id": ["p1"], "title": ["Attention is all you need"], "year": [2017]}), corpus)
    s = link.link_dir(ex, corpus, workers=1, progress=False)
    st = read_run_state(ex, "link")
    assert st.complete and st.counts["papers"] == s.papers == 40 and st.options["corpus"] == str(corpus)

    def broken(args):
        raise OSError("disk full")
    monkeypatch.setattr(link, "link_file", broken)
    with pytest.raises(OSError):
        link.link_dir(ex, corpus, workers=1, progress=False)
    assert read_run_state(ex).state == "failed" and "disk full" in read_run_state(ex).error
    annotate_dir(ex, progress=False)
    assert "`mustcite link`" in capsys.readouterr().err


# ---- labels stats on a partial folder ------------------------------------------------------

@pytest.mark.data
def test_labels_stats_refuses_a_partial_folder(ex, capsys):
    annotate_dir(ex, progress=False)
    labels = ex / "labels"
    assert main(["labels", "stats", str(labels), "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    for p in sorted(labels.glob("*.json"))[:2]:
        p.unlink()
    _fake_dead_writer(labels)
    assert main(["labels", "stats", str(labels), "--json"]) == 1
    err = capsys.readouterr().err
    assert "38 of 40 papers labelled" in err and str(marker_path(labels, "annotate")) in err
    assert f"mustcite annotate {ex}" in err and "--allow-partial" in err
    assert main(["labels", "stats", str(labels), "--json", "--allow-partial"]) == 0
    out = capsys.readouterr()
    assert "warning:" in out.err and "38 of 40 papers labelled" in out.err
    assert json.loads(out.out)["files"] == 38 < full["files"] == 40
    # an older folder without a marker works as before
    shutil.rmtree(labels / ".mustcite")
    assert main(["labels", "stats", str(labels), "--json"]) == 0
    assert capsys.readouterr().err == ""


# ---- a real kill -9 ------------------------------------------------------------------------

@pytest.mark.data
def test_kill_9_during_annotate_then_resume(ex, fresh_labels, capsys):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, "-m", "mustcite", "annotate", str(ex), "--chunk", "50"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    labels = ex / "labels"

    def first_labels() -> list[Path]:
        assert proc.poll() is None, proc.stderr.read().decode()
        return list(labels.glob("*.json"))
    try:
        wait_until(first_labels, what="the first label file of mustcite annotate")
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()
    st = read_run_state(labels)
    assert st.state == "interrupted" and st.pid == proc.pid and st.options["chunk"] == 50
    done = sorted(p.name for p in labels.glob("*.json"))
    assert 0 < len(done) < 40
    assert main(["labels", "stats", str(labels)]) == 1
    assert f"{len(done)} of 40 papers labelled" in capsys.readouterr().err
    s = annotate_dir(ex, progress=False)
    assert s["skipped"] == len(done) and s["papers"] == 40
    assert read_run_state(labels).complete and _labels(ex) == fresh_labels
    assert main(["labels", "stats", str(labels)]) == 0


@pytest.mark.data
def test_readers_of_a_partial_labels_folder_warn(ex, capsys):
    """Benchmark build and training read labels through iter_reference_files: a labels folder
    whose annotate run was interrupted is reported once on stderr (they still read what is there)."""
    from mustcite.extract.runner import iter_reference_files

    annotate_dir(ex, progress=False)
    labels = ex / "labels"
    st = read_run_state(labels)
    doc = json.loads(st.path.read_text())
    doc.update(state="running", pid=2**22 + 12345, pid_start=None)   # a writer that is gone
    st.path.write_text(json.dumps(doc))
    capsys.readouterr()
    n = len(list(iter_reference_files(ex, labelled=True)))
    list(iter_reference_files(ex, labelled=True))
    err = capsys.readouterr().err
    assert n == 40 and err.count("warning: labels folder") == 1 and "was interrupted" in err
