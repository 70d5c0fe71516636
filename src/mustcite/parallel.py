"""Map a pure per-record function over records, with a progress bar, on the chosen engine.

Per-paper work (extract, link, judge, encode) is a pure function of one record, so the same
function runs on a local process pool or on a Ray cluster unchanged (:mod:`mustcite.engine`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

from .engine import Engine, current_engine, default_workers

T = TypeVar("T")
R = TypeVar("R")

__all__ = ["default_workers", "pmap"]


def pmap(fn: Callable[[T], R], items: Iterable[T], *, workers: int | None = None,
         desc: str = "", total: int | None = None, chunksize: int = 4,
         progress: bool = True, engine: Engine | None = None,
         on_fail: Callable[[T, str], R] | None = None, unit: str = "item") -> Iterator[R]:
    """Yield ``fn(item)`` for every item, in input order.

    ``engine``: where it runs (default: :func:`mustcite.engine.current_engine`, the local process
    pool unless a command chose ``--engine ray``). Locally ``workers=1`` runs in-process (no
    pickling; easiest to debug). ``fn`` must be a module-level function so it pickles.
    An exception raised by ``fn`` ends the map on every engine. ``on_fail(item, message)`` makes
    the result of an item whose Ray worker was lost (killed, out of memory, node gone) after a retry
    (a failed paper is reported, never fatal); without it such an item raises MustciteError.
    """
    items = list(items)
    n = total if total is not None else len(items)
    engine = engine or current_engine()
    bar = tqdm(total=n, desc=desc, disable=not progress, unit=unit, dynamic_ncols=True)
    try:
        yield from engine.map(fn, items, workers=workers, chunksize=chunksize, tick=bar.update, on_fail=on_fail)
    finally:
        bar.close()


