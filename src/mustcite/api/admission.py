"""Admission control for one server process: a fixed number of requests compute at once, a
bounded number wait, and the rest are told to come back (503 with ``Retry-After``) at once instead
of waiting without end.
"""

from __future__ import annotations

import math
import threading
import time
from contextlib import contextmanager
from typing import Iterator


class Busy(Exception):
    """Every slot and every queue place is taken; ``retry_after``: seconds to wait."""

    def __init__(self, retry_after: int):
        super().__init__(f"the server is busy; retry in {retry_after} s")
        self.retry_after = retry_after


class Admission:
    """At most ``concurrency`` computations at once and ``queue`` more waiting (per process)."""

    def __init__(self, concurrency: int = 1, queue: int = 32):
        if concurrency < 1 or queue < 0:
            raise ValueError("concurrency must be at least 1 and queue at least 0")
        self.concurrency, self.queue = concurrency, queue
        self._slots = threading.Semaphore(concurrency)
        self._lock = threading.Lock()
        self._inside = 0                  # computing + waiting
        self._seconds = 0.2               # running mean of one computation's time

    @property
    def inside(self) -> int:
        return self._inside

    def retry_after(self) -> int:
        """Seconds until the queue has likely drained (at least 1)."""
        return max(1, math.ceil(self._seconds * self._inside / self.concurrency))

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one computation slot (waiting in the queue if need be); raises :class:`Busy` when
        the queue is full."""
        with self._lock:
            if self._inside >= self.concurrency + self.queue:
                raise Busy(self.retry_after())
            self._inside += 1
        try:
            with self._slots:
                t0 = time.perf_counter()
                try:
                    yield
                finally:
                    self._seconds = 0.8 * self._seconds + 0.2 * (time.perf_counter() - t0)
        finally:
            with self._lock:
                self._inside -= 1
