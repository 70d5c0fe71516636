"""Admission control: a bounded number of requests inside the server (computing or waiting for a
free worker); the rest are told at once to come back (503 with ``Retry-After``) instead of waiting
without end.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Busy(Exception):
    """Every slot and every queue place is taken; ``retry_after``: seconds to wait."""

    def __init__(self, retry_after: int):
        super().__init__(f"the server is busy; retry in {retry_after} s")
        self.retry_after = retry_after


class Admission:
    """At most ``slots`` requests computing and ``queue`` more waiting; the backend enforces the
    ``slots`` (its workers or threads), this counts and refuses beyond the two."""

    def __init__(self, slots: int = 1, queue: int = 32):
        if slots < 1 or queue < 0:
            raise ValueError("slots must be at least 1 and queue at least 0")
        self.slots, self.queue = slots, queue
        self._lock = threading.Lock()
        self._inside = 0                  # computing + waiting
        self._seconds = 0.2               # running mean of one request's time inside

    @property
    def inside(self) -> int:
        return self._inside

    def retry_after(self) -> int:
        """Seconds until the queue has likely drained (at least 1)."""
        return max(1, math.ceil(self._seconds * self._inside / self.slots))

    @contextmanager
    def admit(self) -> Iterator[None]:
        """Count one request in (never blocks); raises :class:`Busy` when the server is full."""
        with self._lock:
            if self._inside >= self.slots + self.queue:
                raise Busy(self.retry_after())
            self._inside += 1
        t0 = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                self._inside -= 1
                # time inside includes the wait: per slot it approximates one request's service time
                self._seconds = 0.8 * self._seconds + 0.2 * (time.perf_counter() - t0) / max(1, self._inside + 1)
