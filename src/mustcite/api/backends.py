"""Where the server computes: in its own process, or in a pool of worker processes.

Both answer ``recommend`` and ``audit`` with the REST API's JSON bodies and ``describe`` for
``/api/health``:

* :class:`LocalBackend`: the model in this process (loaded in a background thread); ``concurrency``
  requests compute at once in threads.
* :class:`PoolBackend`: ``workers`` processes, each loading the model once (read-only) and taking
  an equal share of the CPUs. Requests wait in one first-in-first-out queue and go to whichever
  worker is free, so no worker idles while another has a backlog.

An error a user can act on comes back as :class:`~mustcite.errors.MustciteError` naming the upload,
never the server's temporary paths.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from fastapi.concurrency import run_in_threadpool

from ..errors import MustciteError
from ..quiet import quiet_libraries, verbose_requested


class NotReady(Exception):
    """The model is still loading, or failed to load (``failed``)."""

    def __init__(self, message: str, failed: bool = False):
        super().__init__(message)
        self.failed = failed


# ---- the work itself: plain functions of a loaded recommender (run in any process) ----------------

def _results(rs) -> list[dict[str, Any]]:
    from ..recommend.formats import bibtex  # the rater page (.rate) imports this module without the recommender

    return [r.to_dict() | {"bibtex": bibtex(r)} for r in rs]


def recommend_body(rec, title: str, abstract: str, top: int, year: int | None) -> dict[str, Any]:
    ranked = rec.recommend(title, abstract, top=top, year=year)
    return {"year": ranked.year, "results": _results(ranked), "notice": ranked.notice}


def audit_body(rec, name: str, data: bytes, top: int, year: int | None, show_all: bool = False) -> dict[str, Any]:
    """Audit an uploaded draft from a private temporary folder."""
    from ..recommend.audit import audit_draft  # with the first audit (and never for the rater page)

    with tempfile.TemporaryDirectory(prefix="mustcite-upload-") as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        try:
            res = audit_draft(rec, path, top=top, year=year, show_all=show_all)
        except MustciteError as exc:
            message = exc.message.replace(str(path), name).replace(tmp, "")
            raise MustciteError(f"{name}: {message}", field="file", hint=exc.hint) from None
        except RecursionError:      # a reader recursing on thousands of nested brackets or folders
            raise MustciteError(f"{name}: the draft is nested too deeply to read (thousands of nested brackets "
                                "or folders)", field="file") from None
    return {"draft": name, "title": res.title, "year": res.year, "references": res.references,
            "linked": res.linked, "missing": _results(res.missing), "cited": _results(res.cited),
            "notice": res.notice, "notes": [n.replace(tmp, "") for n in res.notes],
            "closest_bibliographies": res.closest_bibliographies,
            "reference_list": res.reference_list, "threshold": res.threshold,
            "findings": [f.to_dict() for f in res.findings]}


def _ready_to_serve(rec):
    """``rec`` with what its first requests would load loaded now: the pool's title index and the
    labelled papers' bibliography index (the first audit), the compiled tier models (faster per
    request than the copies a one-shot command uses) and every memory-mapped part read in."""
    rec.draft_indexes.warm()
    rec.tiers.compiled()
    rec.read_into_memory()
    return rec


def _log(message: str) -> None:
    print(f"mustcite: {message} (process {os.getpid()})", file=sys.stderr, flush=True)


# ---- one process ---------------------------------------------------------------------------------

class LocalBackend:
    """The model in this process; at most ``concurrency`` requests compute at once (threads)."""

    def __init__(self, recommender=None, loader: Callable[[], Any] | None = None, concurrency: int = 1):
        self.slots = concurrency
        self._sem = threading.Semaphore(concurrency)
        self._rec, self._error = recommender, None
        if recommender is None and loader is not None:
            threading.Thread(target=self._load, args=(loader,), daemon=True).start()

    def _load(self, loader: Callable[[], Any]) -> None:
        t0 = time.perf_counter()
        try:
            self._rec = _ready_to_serve(loader())
        except Exception as exc:  # noqa: BLE001 - reported by /api/health and every request
            self._error = f"the model failed to load: {exc}"
            _log(self._error)
        else:
            _log(f"model loaded in {time.perf_counter() - t0:.1f} s")

    def _ready(self):
        if self._rec is None:
            raise NotReady(self._error or "the model is still loading", failed=self._error is not None)
        return self._rec

    def describe(self) -> dict[str, Any]:
        return self._ready().describe() | {"workers": 1}

    async def _call(self, fn, *args):
        rec = self._ready()

        def run():
            with self._sem:
                return fn(rec, *args)
        return await run_in_threadpool(run)

    async def recommend(self, title: str, abstract: str, top: int, year: int | None) -> dict[str, Any]:
        return await self._call(recommend_body, title, abstract, top, year)

    async def audit(self, name: str, data: bytes, top: int, year: int | None,
                    show_all: bool = False) -> dict[str, Any]:
        return await self._call(audit_body, name, data, top, year, show_all)


# ---- a pool of worker processes -----------------------------------------------------------------

_WORKER: dict[str, Any] = {}      # in a worker process: its recommender, or the error loading it


def _exit_with(parent: int) -> None:
    """End this worker process once ``parent`` (the server) is gone, however the server ended
    (a killed server cannot tell its workers): checked every second."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _init_worker(work: str | None, model: str, threads: int) -> None:
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True, name="exit-with-server").start()
    quiet_libraries(verbose_requested())
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(threads)
    t0 = time.perf_counter()
    try:
        from threadpoolctl import threadpool_limits  # in the worker only: not at the server's start-up

        from ..recommend import load_default  # the rater page (.rate) imports this module without it

        threadpool_limits(threads)
        _WORKER["rec"] = _ready_to_serve(load_default(work, model))
        _log(f"model loaded in {time.perf_counter() - t0:.1f} s")
    except Exception as exc:  # noqa: BLE001 - answered to every request instead of breaking the pool
        _WORKER["error"] = f"the model failed to load: {exc}"
        _log(_WORKER["error"])


def _in_worker(fn: str, *args) -> tuple[str, Any]:
    """Run ``fn`` on this worker's model: ("ok", body) or ("error", (message, field, hint)) or
    ("failed", message) when the model did not load."""
    if "rec" not in _WORKER:
        return "failed", _WORKER.get("error", "the model is not loaded")
    try:
        return "ok", {"recommend": recommend_body, "audit": audit_body,
                      "describe": lambda rec: rec.describe()}[fn](_WORKER["rec"], *args)
    except MustciteError as exc:
        return "error", (exc.message, exc.field, exc.hint)


class PoolBackend:
    """``workers`` processes, each with the model loaded once; one FIFO queue in front of them."""

    def __init__(self, model: str | Path, work: str | None = None, workers: int = 2):
        self.slots = workers
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        threads = max(1, cpus // workers)
        # spawn: a clean interpreter per worker (no threads or locks inherited from the server)
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_init_worker, initargs=(work, str(model), threads))
        self._info: dict[str, Any] | None = None
        self._error: str | None = None
        # the pool starts a worker per submission while none is idle: one each starts them all now
        for _ in range(workers):
            self._pool.submit(_in_worker, "describe").add_done_callback(self._described)

    def _described(self, fut) -> None:
        try:
            status, value = fut.result()
        except Exception as exc:  # noqa: BLE001 - a worker died while loading
            status, value = "failed", f"a worker process failed: {exc}"
        if status == "ok":
            self._info = value
        elif self._info is None:
            self._error = value

    def describe(self) -> dict[str, Any]:
        if self._info is None:
            raise NotReady(self._error or "the model is still loading", failed=self._error is not None)
        return self._info | {"workers": self.slots}

    async def _call(self, fn: str, *args) -> dict[str, Any]:
        self.describe()      # NotReady until a worker has loaded the model
        status, value = await asyncio.get_running_loop().run_in_executor(self._pool, _in_worker, fn, *args)
        if status == "ok":
            return value
        if status == "failed":
            raise NotReady(value, failed=True)
        message, field, hint = value
        raise MustciteError(message, field=field, hint=hint)

    async def recommend(self, title: str, abstract: str, top: int, year: int | None) -> dict[str, Any]:
        return await self._call("recommend", title, abstract, top, year)

    async def audit(self, name: str, data: bytes, top: int, year: int | None,
                    show_all: bool = False) -> dict[str, Any]:
        return await self._call("audit", name, data, top, year, show_all)

    def close(self) -> None:
        """Stop the workers: queued requests are cancelled, a request being computed is not waited for."""
        processes = list(getattr(self._pool, "_processes", {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            proc.terminate()
        for proc in processes:
            proc.join(5)
