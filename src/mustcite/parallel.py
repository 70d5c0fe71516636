"""Map a pure per-record function over records in a process pool, with a progress bar.

Per-paper work (extract, link, judge, encode) is a pure function of one record, so the same
function can later be handed to a distributed engine (e.g. ``ray.data.Dataset.map``) unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")
R = TypeVar("R")


def default_workers() -> int:
    env = os.environ.get("MUSTCITE_WORKERS")
    if env:
        return max(1, int(env))
    return max(1, os.cpu_count() or 1)


def pmap(fn: Callable[[T], R], items: Iterable[T], *, workers: int | None = None,
         desc: str = "", total: int | None = None, chunksize: int = 4,
         progress: bool = True) -> Iterator[R]:
    """Yield ``fn(item)`` for every item, in input order.

    ``workers=1`` runs in-process (no pickling; easiest to debug). ``fn`` must be a module-level
    function so it pickles.
    """
    items = list(items) if total is None and not hasattr(items, "__len__") else items
    n = total if total is not None else len(items)  # type: ignore[arg-type]
    workers = workers or default_workers()
    bar = tqdm(total=n, desc=desc, disable=not progress, unit="item", dynamic_ncols=True)
    try:
        if workers <= 1 or n <= 1:
            for item in items:
                yield fn(item)
                bar.update(1)
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                for result in pool.map(fn, items, chunksize=chunksize):
                    yield result
                    bar.update(1)
    finally:
        bar.close()
