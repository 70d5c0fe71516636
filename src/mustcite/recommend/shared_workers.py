"""Per-query work of a built recommender spread over this machine's CPUs.

Training rows and the model card's hold-out scores are computed query by query from the same
large, read-only indexes (the pool table, BM25, dense vectors, labelled neighbours). Pickling them
to workers would cost more than the work, so the workers are forked after the indexes are built and
read them copy-on-write: :func:`map_spans` sets the shared state, maps a module-level function over
``(start, end)`` spans of the caller's items with :func:`mustcite.parallel.pmap`, and clears the
state. Each span's result is exactly what the same function gives in one process (it only reads the
state), in input order.

It runs in one process when the platform does not fork, when the process-wide engine is not the
local one (a Ray worker could not see the state), when ``MUSTCITE_WORKERS`` is 1, or when there is
a single span.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Callable
from typing import Any, TypeVar

from tqdm import tqdm

from ..engine import current_engine
from ..parallel import default_workers, pmap

R = TypeVar("R")

#: what the running :func:`map_spans` shares with its forked workers (None between maps)
_SHARED: Any = None


def span_workers(spans: int) -> int:
    """How many forked workers :func:`map_spans` would use for ``spans`` spans (1: in-process)."""
    engine = current_engine()
    if spans <= 1 or not engine.local or multiprocessing.get_start_method(allow_none=False) != "fork":
        return 1
    return max(1, min(default_workers(), engine.workers(), spans))


def _call(job: tuple[Callable[[Any, int, int], R], int, int]) -> R:
    from threadpoolctl import threadpool_limits  # ~3 ms, in the workers only

    fn, start, end = job
    # one BLAS/OpenMP thread per worker: the workers already fill every CPU, and threads that wait
    # for a CPU another worker holds make each matrix product several times slower
    with threadpool_limits(limits=1):
        return fn(_SHARED, start, end)


def map_spans(fn: Callable[[Any, int, int], R], shared: Any, total: int, span: int, *,
              desc: str = "", unit: str = "batch", parallel: bool = True) -> list[R]:
    """``[fn(shared, start, end) for each span of `span` items of range(total)]``, the spans on
    forked workers when ``parallel`` and :func:`span_workers` allow (``fn`` must be module-level)."""
    global _SHARED
    jobs = [(fn, start, min(start + span, total)) for start in range(0, total, span)]
    workers = span_workers(len(jobs)) if parallel else 1
    if workers == 1:
        bar = tqdm(jobs, desc=desc, unit=unit, disable=len(jobs) <= 1)
        return [fn(shared, start, end) for _, start, end in bar]
    _SHARED = shared
    # the objects built so far move to the collector's permanent generation before the workers fork:
    # a worker's collections then never write to their headers, which would copy every page that
    # holds one (the indexes are millions of small objects) and make each worker slower than one process
    was_frozen = gc.get_freeze_count() > 0      # a loaded model's indexes are frozen already: kept so
    gc.freeze()
    try:
        return list(pmap(_call, jobs, workers=workers, chunksize=1, desc=desc, unit=unit))
    finally:
        _SHARED = None
        if not was_frozen:
            gc.unfreeze()
