"""Local engine vs Ray engine on this machine, measured in one run, plus a projection to a cluster.

On a slice of real NeurIPS 2024 full texts (default 60), with 2 workers on each engine (a 2-process
pool; a local Ray cluster of ``num_cpus=2``):

- extract + link (against the corpus store), annotate (offline judge), and pool encoding (title +
  abstract of corpus papers, int8 ONNX MiniLM at 64 tokens, as ``mustcite train`` encodes): papers
  (or texts) per second on each engine, their ratio, and the CPU seconds per paper (this process,
  its pool workers and the Ray workers, from /proc via psutil);
- Ray's overheads: starting the local cluster, and per task (no-op tasks, one record each, against
  the same records through the local pool);
- the outputs of both engines compared byte for byte;
- a projection for 153K papers and 2M judged instances on N workers from the measured CPU cost per
  paper (per-worker setup and per-task overhead included).

The machine is shared (another job may be training on the same 2 cores): the load average at the
start and the end is recorded, and the projection uses CPU seconds, which contention inflates less
than wall time. Writes ``benchmarks/results/ray_engine.json``.

    HF_HUB_OFFLINE=1 MUSTCITE_WORK=mustcite-work .venv/bin/python benchmarks/ray_engine.py [--papers 60]

Needs ``mustcite[ray]`` and the corpus store (``mustcite corpus build``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import tempfile
import time
from pathlib import Path

import psutil

from mustcite.config import Workspace, find_data_dir
from mustcite.engine import LocalEngine, RayEngine
from mustcite.extract import extract_paths, link_dir
from mustcite.io import atomic_write_json
from mustcite.labels import annotate_dir

WORKERS = 2
PAPERS_TOTAL = 153_000          # the corpus size
JUDGE_INSTANCES = 2_000_000     # MasterSet's 2,005,387 instances, each judged for Type I and Type II
NODES = (1, 8, 32, 128)


def _noop(x):
    return x


def _cpu() -> float:
    """CPU seconds of this process, its reaped children (pool workers) and its live descendants
    (the Ray workers, raylet and GCS)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    for p in psutil.Process().children(recursive=True):
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


class Stage:
    def __init__(self):
        self.t0, self.c0 = time.perf_counter(), _cpu()

    def done(self) -> tuple[float, float]:
        return time.perf_counter() - self.t0, _cpu() - self.c0


def _files(folder: Path) -> dict[str, bytes]:
    timed = {"summary.json", "labels_summary.json"}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".mustcite" not in p.parts and p.name not in timed}


def run_pipeline(engine, papers: list[Path], corpus: Path, out: Path) -> dict:
    res = {}
    s = Stage()
    ex = extract_paths(papers, out, progress=False, engine=engine)
    w_ex, c_ex = s.done()
    s = Stage()
    ln = link_dir(out, corpus, progress=False, engine=engine)
    w_ln, c_ln = s.done()
    res["extract_link"] = {"papers": ex.papers, "ok": ex.ok, "flagged": ex.flagged, "failed": ex.failed,
                           "references": ln.references, "linked": ln.linked,
                           "extract_s": round(w_ex, 3), "link_s": round(w_ln, 3), "seconds": round(w_ex + w_ln, 3),
                           "papers_per_s": round(ex.papers / (w_ex + w_ln), 3),
                           "cpu_s": round(c_ex + c_ln, 2), "cpu_s_per_paper": round((c_ex + c_ln) / ex.papers, 4)}
    s = Stage()
    an = annotate_dir(out, progress=False, engine=engine)
    w, c = s.done()
    res["annotate"] = {"papers": an["papers"], "instances": an["instances"], "failed_calls": an["failed_calls"],
                       "seconds": round(w, 3), "papers_per_s": round(an["papers"] / w, 3),
                       "instances_per_s": round(an["instances"] / w, 1), "cpu_s": round(c, 2),
                       "cpu_s_per_instance": round(c / an["instances"], 6)}
    return res


def run_encoding(engine, texts: list[str], onnx_cache: Path, cache: Path) -> dict:
    from mustcite.retrieval import DenseRetriever

    shutil.copytree(onnx_cache, cache / "onnx")
    r = DenseRetriever("onnx-int8:minilm", cache_dir=cache, max_seq_length=64)
    r.engine = engine
    s = Stage()
    r.embed(texts, desc="encoding")
    w, c = s.done()
    return {"texts": len(texts), "seconds": round(w, 3), "texts_per_s": round(len(texts) / w, 2),
            "cpu_s": round(c, 2), "cpu_s_per_text": round(c / len(texts), 5)}


def per_task_overhead(ray_engine: RayEngine, n: int = 400) -> dict:
    items = list(range(n))
    local = LocalEngine(WORKERS)
    t = time.perf_counter()
    assert list(local.map(_noop, items, chunksize=1)) == items
    w_local = time.perf_counter() - t
    one = RayEngine(batch_size=1)
    t = time.perf_counter()
    assert list(one.map(_noop, items)) == items
    w_ray = time.perf_counter() - t
    return {"tasks": n, "ray_ms_per_task": round(1000 * w_ray / n, 3),
            "local_pool_ms_per_item": round(1000 * w_local / n, 3),
            "note": "no-op tasks, one record each, 2 workers: wall time per task (submission, scheduling, "
                    "pickling, result transfer); the local figure includes starting the 2-process pool"}


def project(cpu_per_paper: float, cpu_per_instance: float, cpu_per_text: float, task_ms: float,
            worker_setup_s: float, startup_s: float, batch: int) -> dict:
    """Hours on N single-CPU workers, from CPU seconds per record (parallel efficiency 1, plus the
    per-task overhead and each worker's setup)."""
    out = {}
    for n in NODES:
        def hours(records: int, cpu: float, per_task: int, n: int = n) -> float:
            compute = records * cpu / n
            overhead = (records / per_task) * task_ms / 1000 / n
            return round((compute + overhead + worker_setup_s + startup_s) / 3600, 3)
        out[f"{n}_workers"] = {
            "extract_link_153k_papers_h": hours(PAPERS_TOTAL, cpu_per_paper, batch),
            "encode_153k_papers_h": hours(PAPERS_TOTAL, cpu_per_text, 256),
            "offline_judge_2m_instances_h": hours(JUDGE_INSTANCES, cpu_per_instance, 10_000),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--papers", type=int, default=60)
    ap.add_argument("--texts", type=int, default=512, help="corpus texts encoded per engine")
    ap.add_argument("--out", default="benchmarks/results/ray_engine.json")
    args = ap.parse_args()

    load_start = os.getloadavg()
    data = find_data_dir()
    work = Workspace.resolve()
    corpus = work.root / "corpus" / "papers.parquet"
    papers = sorted((data / "neurips" / "fulltext_2024").glob("*.md.gz"))[:args.papers]
    scratch = Path(tempfile.mkdtemp(prefix="ray-engine-"))
    result: dict = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                "load_average_start": [round(x, 2) for x in load_start],
                                "note": "a 1-minute load average above the CPU count means other jobs shared "
                                        "the CPUs: read wall-time figures as lower bounds"},
                    "workers": WORKERS, "papers": len(papers), "corpus_papers": None}
    try:
        import pyarrow.parquet as pq

        result["corpus_papers"] = pq.read_metadata(corpus).num_rows
        # ---- Ray cluster start
        t = time.perf_counter()
        ray_engine = RayEngine(num_cpus=WORKERS)
        ray_engine.workers()
        startup = time.perf_counter() - t
        # ---- extract + link + annotate, local then Ray
        local = run_pipeline(LocalEngine(WORKERS), papers, corpus, scratch / "local")
        ray = run_pipeline(ray_engine, papers, corpus, scratch / "ray")
        a, b = _files(scratch / "local"), _files(scratch / "ray")
        identical = sorted(a) == sorted(b) and all(a[k] == b[k] for k in a)
        # the title index each Ray worker builds once (the local pool forks the driver's)
        from mustcite.extract import TitleIndex

        t = time.perf_counter()
        TitleIndex.from_parquet(corpus)
        index_s = time.perf_counter() - t
        # ---- encoding
        rows = pq.read_table(corpus, columns=["title", "abstract"]).slice(0, args.texts).to_pylist()
        texts = [f"{r['title']}. {r['abstract'] or ''}" for r in rows]
        onnx = scratch / "onnx"
        from mustcite.retrieval import default_model_path, ensure_onnx_int8

        src = work.cache / "onnx"
        if src.is_dir():
            shutil.copytree(src, onnx / "onnx")
        else:
            ensure_onnx_int8(default_model_path(), onnx)
        enc_local = run_encoding(LocalEngine(WORKERS), texts, onnx / "onnx", scratch / "enc-local")
        enc_ray = run_encoding(ray_engine, texts, onnx / "onnx", scratch / "enc-ray")
        shards = [{p.name: p.read_bytes() for p in sorted((scratch / d / "emb").rglob("*.npy"))}
                  for d in ("enc-local", "enc-ray")]
        overhead = per_task_overhead(ray_engine)
        load_end = os.getloadavg()
        ray_engine.shutdown()

        def ratio(key: str, stage_l: dict, stage_r: dict) -> float:
            return round(stage_r[key] / stage_l[key], 3)

        result.update({
            "ray_cluster_start_s": round(startup, 2),
            "title_index_build_s": round(index_s, 2),
            "extract_link": {"local": local["extract_link"], "ray": ray["extract_link"],
                             "ray_over_local": ratio("papers_per_s", local["extract_link"], ray["extract_link"]),
                             "extract_only_ray_over_local": round(local["extract_link"]["extract_s"]
                                                                  / ray["extract_link"]["extract_s"], 3),
                             "note": "link includes building the title index of the corpus: once in the driver "
                                     "(forked into the local pool), and once more in every Ray worker"},
            "annotate_offline": {"local": local["annotate"], "ray": ray["annotate"],
                                 "ray_over_local": ratio("papers_per_s", local["annotate"], ray["annotate"])},
            "encoding_onnx_int8_64tok": {"local": enc_local, "ray": enc_ray,
                                         "ray_over_local": ratio("texts_per_s", enc_local, enc_ray),
                                         "local_note": "local encodes in this process with 2 onnxruntime threads; "
                                                       "Ray runs one single-threaded task per CPU"},
            "outputs_byte_identical": {"extract_link_annotate": identical,
                                       "embedding_shards": shards[0] == shards[1] and bool(shards[0])},
            "per_task_overhead": overhead,
        })
        m = result
        # per paper without the title-index builds (a fixed cost per process: the driver's, and on Ray
        # each worker's; added back per worker below)
        el_l, el_r = m["extract_link"]["local"], m["extract_link"]["ray"]
        marginal = {"local": round((el_l["cpu_s"] - index_s) / len(papers), 4),
                    "ray": round((el_r["cpu_s"] - (1 + WORKERS) * index_s) / len(papers), 4)}
        cpu_paper = max(marginal.values())
        cpu_inst = max(m["annotate_offline"]["local"]["cpu_s_per_instance"],
                       m["annotate_offline"]["ray"]["cpu_s_per_instance"])
        cpu_text = max(enc_local["cpu_s_per_text"], enc_ray["cpu_s_per_text"])
        result["projection"] = {
            "basis": "CPU seconds per record, the larger of the two engines' (Ray's includes its own processes; "
                     "extract+link without the title-index builds), "
                     "divided over N single-CPU workers with perfect scaling, plus per task "
                     f"{overhead['ray_ms_per_task']} ms, each worker's title-index build ({round(index_s, 1)} s) "
                     f"and the cluster start ({round(startup, 1)} s). Reading the inputs from a shared "
                     "filesystem, and judge API rate limits for LLM judges, are not modelled.",
            "cpu_s_per_paper_extract_link": cpu_paper, "cpu_s_per_paper_extract_link_by_engine": marginal,
            "cpu_s_per_instance_offline_judge": cpu_inst,
            "cpu_s_per_text_encoding": cpu_text,
            "hours": project(cpu_paper, cpu_inst, cpu_text, overhead["ray_ms_per_task"], index_s, startup, 32),
        }
        result["machine"]["load_average_end"] = [round(x, 2) for x in load_end]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    atomic_write_json(Path(args.out), result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
