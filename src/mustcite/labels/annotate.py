"""Annotate an extraction output folder with must-cite labels for an extraction output folder (MasterSet Section 4).

Reads every reference file ``DIR/<stem>.json`` written by ``mustcite extract`` and its metadata
sidecar ``DIR/<stem>.meta.json`` (citing title and abstract), judges every citation instance for
Type I and Type II (separate passes) with the chosen backend, computes Type III (mentioned at least
``--mention-threshold`` times) and writes:

- ``DIR/labels/<stem>.json``: the reference list with ``type1``, ``type2``, ``type3``, ``must_cite`` and
  ``judge`` added to each item (same schema, validated).  The extraction output stays untouched, so
  labels from several judges can sit side by side (copy the folder) and a rerun never edits input;
- ``DIR/labels_summary.json``: counts per type, parse failures, calls, cache hits, tokens, cost and
  cost per instance (in the paper's form: $619.41 for 2,005,387 instances ≈ $0.000309 each).

Papers are judged a chunk at a time and their label files written as each chunk finishes, inside a
run marker ``DIR/labels/.mustcite/run-annotate.json`` (:mod:`mustcite.run_markers`): after a crash or
``kill -9`` the marker reads ``interrupted`` and ``mustcite labels stats`` refuses the partial folder.
A rerun skips every paper whose label file is newer than its reference file and was written by the
same judge (``--force`` relabels everything); the summary still counts every paper, reports
``skipped`` papers (their answers as ``kept_answers``).  LLM answers are also cached in
``<work>/cache/judge.sqlite``: a rerun (or a run after a crash) repeats no call.  ``--dry-run`` only
counts the calls a run would make and estimates their cost.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ..config import Workspace
from ..engine import current_engine
from ..errors import MustciteError, UsageError
from ..extract.records import validate_reference_file, validate_reference_list
from ..extract.runner import LABELS_SUBDIR, META_SUFFIX, iter_reference_files
from ..io import atomic_write_json
from ..run_markers import run_marker
from .judge import Judgement, instances_from_reference_file
from .tiers import LabelConfig, apply_labels, type3_label

SUMMARY_NAME = "labels_summary.json"


def _read_meta(folder: Path, stem: str) -> tuple[dict[str, Any], bool]:
    path = folder / f"{stem}{META_SUFFIX}"
    if not path.is_file():
        return {"paper_id": stem}, False
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise MustciteError(f"unreadable metadata sidecar: {exc}", path=path) from None
    if not isinstance(meta, dict):
        raise MustciteError("metadata sidecar is not a JSON object", path=path)
    return {"paper_id": meta.get("paper") or stem, "title": meta.get("title") or "",
            "abstract": meta.get("abstract") or ""}, True


_TASKS = ("type1", "type2")
BATCH = 10000   # instances per process-pool task of the vectorised judge
RAY_MIN_BATCH = 500   # the smallest batch worth a Ray task (~1 ms of overhead against ~50 ms of judging)
CHUNK_INSTANCES = 2000   # instances per chunk (label files written after each) for call-by-call judges


def _judge_batch(job: tuple[Any, list]) -> dict[str, list]:
    """One vectorised pass of ``judge`` over a batch of instances (a pure function: pmap runs it
    in worker processes)."""
    judge, batch = job
    return judge.judge_many(batch, _TASKS)


def _batch_lost(job: tuple[Any, list], message: str) -> dict[str, list]:
    """The answers of a batch the engine could not run (its worker died): no label, an error each.
    They count as failed calls; the papers' label files get nulls, so a rerun relabels them."""
    _, batch = job
    return {t: [Judgement(value=None, error=f"lost: {message}") for _ in batch] for t in _TASKS}


def batch_size_for(n: int, engine: Any = None) -> int:
    """Instances per task: :data:`BATCH` on the local pool; on a cluster enough tasks for every
    worker (the offline judge's answers do not depend on how instances are batched)."""
    engine = engine or current_engine()
    if engine.local:
        return BATCH
    return max(RAY_MIN_BATCH, min(BATCH, -(-n // (2 * engine.workers()))))


def _run_batch(judge: Any, instances: list, *, workers: int | None = None, progress: bool = True,
               engine: Any = None) -> Any:
    """Judge every instance for both tasks (judges with ``judge_many``), in batches mapped over
    the engine (:func:`mustcite.parallel.pmap`: a local process pool, or Ray)."""
    # the engine's modules load tqdm, asyncio, ssl and sqlite3: the command line imports this module at start-up
    from ..parallel import pmap
    from .judging import EngineResult

    res = EngineResult()
    t0 = time.perf_counter()
    size = batch_size_for(len(instances), engine)
    batches = [instances[i:i + size] for i in range(0, len(instances), size)]
    answers = pmap(_judge_batch, [(judge, b) for b in batches], workers=workers if len(batches) > 1 else 1,
                   desc="judging", chunksize=1, progress=progress, engine=engine, on_fail=_batch_lost,
                   unit="batch")
    for batch, out in zip(batches, answers):
        keys = [inst.key() for inst in batch]
        for task, js in out.items():
            for key, j in zip(keys, js):
                res.judgements[(key, task)] = j
                res.calls += 1
                res.failed += j.value is None and (j.error or "").startswith("lost")
    res.seconds = time.perf_counter() - t0
    return res


def _kept_labels(label_path: Path, ref_path: Path, label: str, config: Any) -> list[dict[str, Any]] | None:
    """The labelled items an earlier run wrote for a paper if a rerun can keep them, else None:
    ``labels/<stem>.json`` is newer than ``<stem>.json``, valid, written by the same judge, has
    every item judged (a null label may be a failed call: relabelling it goes through the cache)
    and Type III at the current threshold."""
    try:
        if label_path.stat().st_mtime_ns <= ref_path.stat().st_mtime_ns:
            return None
        items = json.loads(label_path.read_text(encoding="utf-8"))
        validate_reference_list(items, path=label_path)
    except (OSError, ValueError, MustciteError):
        return None
    for it in items:
        if (it.get("judge") != label or it.get("type1") is None or it.get("type2") is None
                or it.get("type3") != type3_label(it, config)):
            return None
    return items


def _merge(total: Any, res: Any) -> None:
    """Add one chunk's engine figures to the run's."""
    for k in ("calls", "cached", "retries", "failed", "parse_failures", "errors"):
        setattr(total, k, getattr(total, k) + getattr(res, k))
    for model, u in res.ledger.models.items():
        t = total.ledger.models.setdefault(model, type(u)())
        for k in vars(t):
            setattr(t, k, getattr(t, k) + getattr(u, k))


def _chunks(papers: list, size: int):
    """Consecutive runs of whole papers with at least ``size`` instances each (the last: the rest)."""
    cur, n = [], 0
    for p in papers:
        cur.append(p)
        n += len(p[2])
        if n >= size:
            yield cur
            cur, n = [], 0
    if cur:
        yield cur


def annotate_dir(folder: str | Path, *, backend: str = "offline", model: str | None = None,
                 prompts_dir: str | None = None, concurrency: int = 8, dry_run: bool = False,
                 mention_threshold: int = 3, prices: dict[str, tuple[float, float]] | None = None,
                 cache_path: str | Path | None = None, progress: bool = True, force: bool = False,
                 chunk: int | None = None, judge: Any = None, engine: Any = None,
                 **backend_kw: Any) -> dict[str, Any]:
    """Label every reference file of an extraction folder; returns (and, unless ``dry_run``,
    writes) the summary.  ``judge`` overrides ``backend`` (tests pass a configured one).

    Papers are judged ``chunk`` instances at a time (whole papers; default :data:`BATCH` per worker
    for the vectorised offline judge, :data:`CHUNK_INSTANCES` for the others) and their label
    files written after each chunk, inside a run marker on ``DIR/labels/`` (:mod:`mustcite.run_markers`).
    Unless ``force``, a paper whose label file an earlier run of the same judge left up to date is
    skipped (:func:`_kept_labels`); the summary still counts its labels.

    ``engine`` (:mod:`mustcite.engine`; default the process-wide one) runs the vectorised judge's
    batches: a local process pool, or Ray tasks on a cluster. Call-by-call (LLM) judges run in this
    process under asyncio whatever the engine: their work is waiting on the API, and their answers
    go through the SQLite cache here."""
    # the judges and their engine load asyncio, ssl and sqlite3: not at the command line's start-up
    from .backends import make_judge
    from .cache import JudgeCache
    from .judging import EngineResult, jobs_for, judge_identity, judge_label, run
    from .judging import dry_run as engine_dry_run

    folder = Path(folder)
    if not folder.is_dir():
        raise MustciteError("extraction output folder not found", path=folder,
                            hint="run `mustcite extract PAPERS -o DIR` first")
    if concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if chunk is not None and chunk < 1:
        raise UsageError("--chunk must be at least 1")
    config = LabelConfig(n_mentions=mention_threshold)
    files = list(iter_reference_files(folder))
    if not files:
        raise MustciteError("no reference files (<stem>.json) in the folder", path=folder,
                            hint="run `mustcite extract PAPERS -o DIR` first")
    if judge is None:
        judge = make_judge(backend, model=model, prompts_dir=prompts_dir, prices=prices, **backend_kw)
    label = judge_label(judge)
    out_dir = folder / LABELS_SUBDIR
    kept: dict[str, list[dict[str, Any]]] = {}
    papers, instances, missing_meta = [], [], 0
    for stem, path in files:
        items = None if force else _kept_labels(out_dir / f"{stem}.json", path, label, config)
        if items is not None:
            kept[stem] = items
            missing_meta += not (folder / f"{stem}{META_SUFFIX}").is_file()
            continue
        refs = validate_reference_file(path)
        meta, ok = _read_meta(folder, stem)
        missing_meta += not ok
        insts = instances_from_reference_file(refs, meta)
        papers.append((stem, refs, insts))
        instances.extend(insts)
    n_kept = sum(len(v) for v in kept.values())
    n_all = len(instances) + n_kept
    name, model_name, _ = judge_identity(judge, "type1")
    llm = hasattr(judge, "render")          # the offline judge is free and fast: not cached
    if cache_path is None and llm:
        cache_path = Workspace.resolve().cache / "judge.sqlite"
    cache = JudgeCache(cache_path) if (cache_path is not None and llm) else None
    vectorised = cache is None and hasattr(judge, "judge_many")
    engine = engine or current_engine()
    size = chunk or (BATCH * engine.workers() if vectorised else CHUNK_INSTANCES)
    base = {"folder": str(folder), "backend": name, "model": model_name, "judge": label,
            "papers": len(files), "skipped": len(kept), "instances": n_all, "papers_without_metadata": missing_meta,
            "cache": str(cache_path) if cache is not None else None}
    try:
        if dry_run:
            d = engine_dry_run(judge, jobs_for(instances), cache, prices=prices)
            per = d.est_cost_usd / n_all if n_all else 0.0
            return {**base, "dry_run": True, "jobs": d.jobs, "calls": d.calls, "cached": d.cached,
                    "est_input_tokens": d.est_input_tokens, "est_cost_usd": round(d.est_cost_usd, 9),
                    "est_cost_per_instance_usd": per,
                    "report": f"would make {d.calls:,} calls ({d.cached:,} cached; {len(kept):,} papers kept from an "
                              f"earlier run) ≈ ${d.est_cost_usd:,.4f} for {n_all:,} instances ≈ ${per:.6f} each"}
        options = {"folder": str(folder), "judge": label, "mention_threshold": mention_threshold,
                   "force": force, "chunk": size}
        with run_marker(out_dir, "annotate", expected=len(files), options=options) as counts:
            t0 = time.perf_counter()
            total = EngineResult()
            pf: Counter = Counter()
            tally: dict[str, Counter] = {k: Counter() for k in ("type1", "type2", "type3", "must_cite")}

            def count(items: list[dict[str, Any]]) -> None:
                for k, c in tally.items():
                    c.update("null" if i.get(k) is None else str(i.get(k)).lower() for i in items)

            for items in kept.values():
                count(items)
            for part in _chunks(papers, size):
                insts = [inst for p in part for inst in p[2]]
                if vectorised:
                    res = _run_batch(judge, insts, progress=progress, engine=engine)    # the offline judge
                else:
                    res = run(judge, jobs_for(insts), cache, concurrency=concurrency, progress=progress)
                _merge(total, res)
                pf.update(t for (k, t), j in res.judgements.items()
                          if j.value is None and (j.error or "").startswith("parse"))
                for stem, refs, pinsts in part:
                    labelled = []
                    for item, inst in zip(refs, pinsts):
                        t1 = res.judgements.get((inst.key(), "type1"))
                        t2 = res.judgements.get((inst.key(), "type2"))
                        labelled.append(apply_labels(item, t1.value if t1 else None, t2.value if t2 else None,
                                                     label, config))
                    validate_reference_list(labelled, path=out_dir / f"{stem}.json")
                    atomic_write_json(out_dir / f"{stem}.json", labelled)
                    count(labelled)
            seconds = time.perf_counter() - t0
            ledger = total.ledger.summary(n_all)
            summary = {
                **base, "dry_run": False, "mention_threshold": mention_threshold,
                "prompt_versions": {t: judge_identity(judge, t)[2] for t in ("type1", "type2")},
                "labels_dir": str(out_dir),
                "counts": {k: dict(sorted(c.items())) for k, c in tally.items()},
                "parse_failures": {"type1": pf.get("type1", 0), "type2": pf.get("type2", 0)},
                "failed_calls": total.failed, "other_errors": total.errors, "retries": total.retries,
                "calls": total.calls, "cached": total.cached, "kept_answers": 2 * n_kept,
                "input_tokens": ledger["input_tokens"], "output_tokens": ledger["output_tokens"],
                "cost_usd": ledger["cost_usd"], "cost_per_instance_usd": ledger["cost_per_instance_usd"],
                "cost_report": ledger["report"],
                "seconds": round(seconds, 3),
                "instances_per_s": round(len(instances) / seconds, 2) if seconds > 0 else None,
            }
            atomic_write_json(folder / SUMMARY_NAME, summary)
            counts.update(papers=len(files), labelled=len(papers), skipped=len(kept), instances=n_all,
                          failed_calls=total.failed)
    finally:
        if cache is not None:
            cache.close()
    return summary
