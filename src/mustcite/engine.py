"""Where per-paper work runs: a local process pool (default) or a Ray cluster (``--engine ray``).

mustcite's per-paper stages (extract, link, annotate, encode) are pure functions of one record;
:func:`mustcite.parallel.pmap` maps them over records through an :class:`Engine`:

- :class:`LocalEngine`: a ``ProcessPoolExecutor`` on this machine (or in-process for one worker);
- :class:`RayEngine`: Ray tasks on a Ray cluster (an existing one at ``address``, else a local one
  started on first use). Records go out in batches (one task per batch, a bounded number in
  flight); results come back in input order. A batch whose worker dies (``kill -9``, OOM,
  a preempted node) is split and its records retried one by one, so one poisoned record costs only
  itself; a record whose worker still dies is handed to the caller's ``on_fail`` (reported as a
  failed paper, written nowhere, so a rerun does it again) instead of ending the run. An exception
  raised by the function itself ends the map on both engines, as in-process.

Both engines call the same function on the same records, and the callers write the same files
from the results in the driver or the worker, so outputs are byte-identical and the
content-addressed caches (up-to-date extraction files, label files, judge cache, embedding shards)
make a rerun on either engine repeat no work. Ray is imported only when chosen
(``pip install 'mustcite[ray]'``).

The process-wide engine (:func:`current_engine`) is the local one unless a command's
``--engine ray`` set it (:func:`use_engine`); every stage can also be given an engine explicitly.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from . import lazy_libs
from .errors import MissingLibraryError, MustciteError, UsageError

T = TypeVar("T")
R = TypeVar("R")

ENGINES = ("local", "ray")
#: environment variables handed to the workers of an existing Ray cluster (a local cluster
#: inherits the whole environment)
_ENV_PREFIXES = ("MUSTCITE_", "HF_", "TRANSFORMERS_", "OMP_NUM_THREADS")

OnFail = Callable[[Any, str], Any]
Tick = Callable[[int], Any]


def default_workers() -> int:
    env = os.environ.get("MUSTCITE_WORKERS")
    if env:
        return max(1, int(env))
    return max(1, os.cpu_count() or 1)


def _run_batch(fn: Callable[[T], R], batch: list[T]) -> list[R]:
    """One Ray task: ``fn`` over a batch of records (module-level: pickles by name)."""
    return [fn(item) for item in batch]


def _failed(item: Any, message: str, on_fail: OnFail | None) -> Any:
    if on_fail is None:
        raise MustciteError(f"a record failed on the worker: {message}")
    return on_fail(item, message)


class Engine:
    """Maps a picklable module-level ``fn`` over records, yielding results in input order.

    ``tick(n)`` is called as ``n`` more records are done (the progress bar). An exception raised
    by ``fn`` ends the map, as it would in-process (the callers' functions turn bad input into a
    failed result themselves; what still raises, such as a full disk, concerns the whole run).
    ``on_fail(item, message)`` makes the result of a record whose *worker* was lost (without it,
    such a record raises :class:`MustciteError`)."""

    name = "engine"
    local = False

    def workers(self) -> int:
        raise NotImplementedError

    def map(self, fn: Callable[[T], R], items: list[T], *, workers: int | None = None, chunksize: int = 4,
            tick: Tick | None = None, on_fail: OnFail | None = None) -> Iterator[R]:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name, "workers": self.workers()}


class LocalEngine(Engine):
    """This machine's CPUs: a process pool (``workers`` processes), in-process for one worker."""

    name = "local"
    local = True

    def __init__(self, workers: int | None = None):
        self._workers = workers

    def workers(self) -> int:
        return self._workers or default_workers()

    def map(self, fn, items, *, workers=None, chunksize=4, tick=None, on_fail=None):
        """``on_fail`` is not used: a pool worker that dies breaks the pool and ends the run (the
        run marker then reads ``interrupted``/``failed``; a rerun does what is missing)."""
        workers = workers or self.workers()
        tick = tick or (lambda n: None)
        if workers <= 1 or len(items) <= 1:
            for item in items:
                yield fn(item)
                tick(1)
            return
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for result in pool.map(fn, items, chunksize=chunksize):
                yield result
                tick(1)


class RayEngine(Engine):
    """Ray tasks on the cluster at ``address`` (``None``: a local cluster of ``num_cpus`` CPUs,
    started on first use and reused by the process; one already initialised is reused as is).

    ``batch_size`` records per task (default: enough batches for 4 per CPU, at most 32 records);
    at most ``in_flight`` tasks submitted at once (default 2 per CPU) so a 153K-paper list never
    sits in the object store; ``retries``: extra attempts of a single record whose worker died."""

    name = "ray"

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None, batch_size: int | None = None,
                 in_flight: int | None = None, retries: int = 1):
        self.address = address
        self.num_cpus = num_cpus
        self.batch_size = batch_size
        self.in_flight = in_flight
        self.retries = retries
        self._remote = None

    # -- the cluster --------------------------------------------------------------------
    def _ray(self):
        ray = import_ray()
        if not ray.is_initialized():
            kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "WARNING"}
            if self.address:
                env = {k: v for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES)}
                kw.update(address=self.address, runtime_env={"env_vars": env} if env else None)
            else:
                kw["num_cpus"] = self.num_cpus or default_workers()
            try:
                ray.init(**kw)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = f"the Ray cluster at {self.address}" if self.address else "a local Ray cluster"
                hint = "check `ray status` on the head node, or drop --address for a local one"
                raise MustciteError(f"cannot start or reach {where}: {exc}", hint=hint) from None
        if self._remote is None:
            self._remote = ray.remote(_run_batch).options(max_retries=0, num_cpus=1)
        return ray

    def workers(self) -> int:
        ray = self._ray()
        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name, "address": self.address or "local", "workers": self.workers()}

    def shutdown(self) -> None:
        ray = import_ray()
        if ray.is_initialized():
            ray.shutdown()
        self._remote = None

    # -- mapping ------------------------------------------------------------------------
    def map(self, fn, items, *, workers=None, chunksize=4, tick=None, on_fail=None):
        if not items:
            return
        ray = self._ray()
        exceptions = lazy_libs.ray_exceptions("--engine ray")
        RayError, RayTaskError = exceptions.RayError, exceptions.RayTaskError

        tick = tick or (lambda n: None)
        cpus = self.workers()
        size = self.batch_size or max(1, min(32, math.ceil(len(items) / (4 * cpus))))
        window = self.in_flight or 2 * cpus
        fn_ref = ray.put(fn)
        # queue of (first index, records, attempt); a failed batch comes back as single records
        queue: list[tuple[int, list, int]] = [(i, items[i:i + size], 0) for i in range(0, len(items), size)]
        queue.reverse()                              # pop() from the end = input order
        pending: dict[Any, tuple[int, list, int]] = {}
        done: dict[int, Any] = {}
        nxt = 0
        while queue or pending:
            while queue and len(pending) < window:
                job = queue.pop()
                pending[self._remote.remote(fn_ref, job[1])] = job
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                start, batch, attempt = pending.pop(ref)
                try:
                    outs = ray.get(ref)
                except RayTaskError as exc:           # fn raised: as in-process, that ends the map
                    cause = getattr(exc, "cause", None)
                    if isinstance(cause, Exception):
                        raise cause from None
                    raise MustciteError(f"a task failed on the Ray cluster: {_first_line(exc)}") from None
                except RayError as exc:               # the worker died (or the task could not run)
                    message = f"worker lost ({type(exc).__name__}: {_first_line(exc)})"
                    if len(batch) > 1:
                        queue.extend((start + j, [x], 0) for j, x in reversed(list(enumerate(batch))))
                    elif attempt < self.retries:
                        queue.append((start, batch, attempt + 1))
                    else:
                        done[start] = _failed(batch[0], message, on_fail)
                        tick(1)
                    continue
                for j, out in enumerate(outs):
                    done[start + j] = out
                tick(len(outs))
            while nxt in done:
                yield done.pop(nxt)
                nxt += 1


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


def ray_available() -> bool:
    return importlib.util.find_spec("ray") is not None


def import_ray():
    try:
        return lazy_libs.ray()
    except MissingLibraryError:
        raise UsageError("--engine ray needs Ray, which is not installed",
                         hint="pip install 'mustcite[ray]' (or use the default --engine local)") from None


# ---- the process-wide engine ----------------------------------------------------------------

_CURRENT: Engine | None = None


def current_engine() -> Engine:
    """The engine stages use when none is given: the local one unless :func:`use_engine` set another."""
    return _CURRENT if _CURRENT is not None else LocalEngine()


def set_engine(engine: Engine | None) -> None:
    global _CURRENT
    _CURRENT = engine


@contextmanager
def use_engine(engine: Engine | None) -> Iterator[Engine]:
    """Make ``engine`` the process-wide one for the block (``None``: keep the current one)."""
    global _CURRENT
    saved = _CURRENT
    if engine is not None:
        _CURRENT = engine
    try:
        yield current_engine()
    finally:
        _CURRENT = saved


def make_engine(name: str | None = "local", address: str | None = None, *, workers: int | None = None) -> Engine:
    """The engine a command's ``--engine``/``--address``/``--workers`` name; usage errors (exit 2)
    for an unknown engine, ``--address`` without Ray, or Ray not installed."""
    name = (name or "local").strip().lower()
    if name not in ENGINES:
        raise UsageError(f"unknown --engine {name!r}: use local or ray")
    if name == "local":
        if address:
            raise UsageError("--address is for --engine ray (the Ray cluster to run on)")
        return LocalEngine(workers)
    if not ray_available():
        import_ray()
    return RayEngine(address or os.environ.get("MUSTCITE_RAY_ADDRESS") or None, num_cpus=workers)


__all__ = ["ENGINES", "Engine", "LocalEngine", "RayEngine", "current_engine", "default_workers", "make_engine",
           "ray_available", "set_engine", "use_engine"]
