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

LLM answers are cached in ``<work>/cache/judge.sqlite``: a rerun (or a run after a crash) repeats no
call.  ``--dry-run`` only counts the calls a run would make and estimates their cost.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import MustciteError, UsageError

SUMMARY_NAME = "labels_summary.json"
LABELS_DIR = "labels"


def _read_meta(folder: Path, stem: str) -> tuple[dict[str, Any], bool]:
    from ..extract.run import META_SUFFIX

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


def _judge_batch(job: tuple[Any, list]) -> dict[str, list]:
    """One vectorised pass of ``judge`` over a batch of instances (a pure function: pmap runs it
    in worker processes)."""
    judge, batch = job
    return judge.judge_many(batch, _TASKS)


def _run_batch(judge: Any, instances: list, *, workers: int | None = None, progress: bool = True) -> Any:
    """Judge every instance for both tasks (judges with ``judge_many``), in batches of
    :data:`BATCH` mapped over a process pool (:func:`mustcite.parallel.pmap`)."""
    from ..parallel import pmap
    from .engine import EngineResult

    res = EngineResult()
    t0 = time.perf_counter()
    batches = [instances[i:i + BATCH] for i in range(0, len(instances), BATCH)]
    answers = pmap(_judge_batch, [(judge, b) for b in batches], workers=workers if len(batches) > 1 else 1,
                   desc="judging", chunksize=1, progress=progress)
    for batch, out in zip(batches, answers):
        keys = [inst.key() for inst in batch]
        for task, js in out.items():
            for key, j in zip(keys, js):
                res.judgements[(key, task)] = j
                res.calls += 1
    res.seconds = time.perf_counter() - t0
    return res


def _count(values) -> dict[str, int]:
    c = Counter("null" if v is None else str(v).lower() for v in values)
    return dict(sorted(c.items()))


def annotate_dir(folder: str | Path, *, backend: str = "offline", model: str | None = None,
                 prompts_dir: str | None = None, concurrency: int = 8, dry_run: bool = False,
                 mention_threshold: int = 3, prices: dict[str, tuple[float, float]] | None = None,
                 cache_path: str | Path | None = None, progress: bool = True,
                 judge: Any = None, **backend_kw: Any) -> dict[str, Any]:
    """Label every reference file of an extraction folder; returns (and, unless ``dry_run``,
    writes) the summary.  ``judge`` overrides ``backend`` (tests pass a configured one)."""
    from ..extract.records import validate_reference_file, validate_reference_list
    from ..extract.run import iter_reference_files
    from ..io import atomic_write_json
    from .backends import make_judge
    from .cache import JudgeCache
    from .engine import dry_run as engine_dry_run
    from .engine import jobs_for, judge_identity, judge_label, run
    from .judge import instances_from_reference_file
    from .tiers import LabelConfig, apply_labels

    folder = Path(folder)
    if not folder.is_dir():
        raise MustciteError("extraction output folder not found", path=folder,
                            hint="run `mustcite extract PAPERS -o DIR` first")
    if concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    config = LabelConfig(n_mentions=mention_threshold)
    files = list(iter_reference_files(folder))
    if not files:
        raise MustciteError("no reference files (<stem>.json) in the folder", path=folder,
                            hint="run `mustcite extract PAPERS -o DIR` first")
    papers, instances, missing_meta = [], [], 0
    for stem, path in files:
        refs = validate_reference_file(path)
        meta, ok = _read_meta(folder, stem)
        missing_meta += not ok
        insts = instances_from_reference_file(refs, meta)
        papers.append((stem, refs, insts))
        instances.extend(insts)
    if judge is None:
        judge = make_judge(backend, model=model, prompts_dir=prompts_dir, prices=prices, **backend_kw)
    name, model_name, _ = judge_identity(judge, "type1")
    llm = hasattr(judge, "render")          # the offline judge is free and fast: not cached
    if cache_path is None and llm:
        from ..config import Workspace
        cache_path = Workspace.resolve().cache / "judge.sqlite"
    cache = JudgeCache(cache_path) if (cache_path is not None and llm) else None
    jobs = jobs_for(instances)
    base = {"folder": str(folder), "backend": name, "model": model_name, "judge": judge_label(judge),
            "papers": len(papers), "instances": len(instances), "papers_without_metadata": missing_meta,
            "cache": str(cache_path) if cache is not None else None}
    try:
        if dry_run:
            d = engine_dry_run(judge, jobs, cache, prices=prices)
            per = d.est_cost_usd / len(instances) if instances else 0.0
            return {**base, "dry_run": True, "jobs": d.jobs, "calls": d.calls, "cached": d.cached,
                    "est_input_tokens": d.est_input_tokens, "est_cost_usd": round(d.est_cost_usd, 9),
                    "est_cost_per_instance_usd": per,
                    "report": f"would make {d.calls:,} calls ({d.cached:,} cached) ≈ ${d.est_cost_usd:,.4f} "
                              f"for {len(instances):,} instances ≈ ${per:.6f} each"}
        t0 = time.perf_counter()
        if cache is None and hasattr(judge, "judge_many"):
            res = _run_batch(judge, instances, progress=progress)    # vectorised: the offline judge
        else:
            res = run(judge, jobs, cache, concurrency=concurrency, progress=progress)
    finally:
        if cache is not None:
            cache.close()
    label = judge_label(judge)
    out_dir = folder / LABELS_DIR
    out_dir.mkdir(exist_ok=True)
    all_items = []
    for stem, refs, insts in papers:
        labelled = []
        for item, inst in zip(refs, insts):
            t1 = res.judgements.get((inst.key(), "type1"))
            t2 = res.judgements.get((inst.key(), "type2"))
            labelled.append(apply_labels(item, t1.value if t1 else None, t2.value if t2 else None, label, config))
        validate_reference_list(labelled, path=out_dir / f"{stem}.json")
        atomic_write_json(out_dir / f"{stem}.json", labelled)
        all_items.extend(labelled)
    seconds = time.perf_counter() - t0
    ledger = res.ledger.summary(len(instances))
    pf = Counter(t for (k, t), j in res.judgements.items()
                 if j.value is None and (j.error or "").startswith("parse"))
    summary = {
        **base, "dry_run": False, "mention_threshold": mention_threshold,
        "prompt_versions": {t: judge_identity(judge, t)[2] for t in ("type1", "type2")},
        "labels_dir": str(out_dir),
        "counts": {"type1": _count(i["type1"] for i in all_items), "type2": _count(i["type2"] for i in all_items),
                   "type3": _count(i["type3"] for i in all_items),
                   "must_cite": _count(i["must_cite"] for i in all_items)},
        "parse_failures": {"type1": pf.get("type1", 0), "type2": pf.get("type2", 0)},
        "failed_calls": res.failed, "other_errors": res.errors, "retries": res.retries,
        "calls": res.calls, "cached": res.cached,
        "input_tokens": ledger["input_tokens"], "output_tokens": ledger["output_tokens"],
        "cost_usd": ledger["cost_usd"], "cost_per_instance_usd": ledger["cost_per_instance_usd"],
        "cost_report": ledger["report"],
        "seconds": round(seconds, 3),
        "instances_per_s": round(len(instances) / seconds, 2) if seconds > 0 else None,
    }
    atomic_write_json(folder / SUMMARY_NAME, summary)
    return summary
