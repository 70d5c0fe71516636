"""Running the API: ``mustcite serve``.

One server process answers HTTP. With ``workers`` 1 the model lives in it; with more, each of
``workers`` worker processes loads the model once (read-only) and takes an equal share of the CPUs,
and requests wait in one queue for the next free worker (:class:`.backends.PoolBackend`).

Both :func:`serve` and :func:`running` limit slow and idle clients the same way
(:class:`.timeouts.Timeouts`): incomplete request headers, stalled bodies, idle kept-alive
connections and too many open connections are cut off.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn

from ..errors import MustciteError, UsageError
from ..labels.rating import RatingStore
from ..recommend import load_default
from .app import create_app
from .backends import PoolBackend
from .timeouts import Timeouts


@dataclass
class ServeSettings:
    model: str                                    # the model folder
    work: str | None = None                       # the work folder (for caches)
    workers: int = 1                              # worker processes (1: the model in the server itself)
    concurrency: int = 1                          # with one process: requests computing at once (threads)
    queue: int = 32                               # requests waiting for a worker; more get 503
    allowed_hosts: list[str] = field(default_factory=list)   # empty: any Host header
    api_key: str | None = None
    max_upload: int = 20 * 2**20
    rate_sample: str | None = None                # a sample CSV: also serve the rater page /rate
    rate_out: str | None = None                   # ... writing OUT/<rater>.csv
    timeouts: Timeouts = field(default_factory=Timeouts)   # limits for slow and idle clients


def build_app(settings: ServeSettings):
    """The app for ``settings``; the model loads in the background (``/api/health`` says when)."""
    if settings.workers > 1:      # each worker loads the model itself
        backend, loader = PoolBackend(settings.model, settings.work, settings.workers), None
    else:                          # the model loads in this process, in the background
        backend, loader = None, (lambda: load_default(settings.work, settings.model))
    rating = None
    if settings.rate_sample:
        if not settings.rate_out:
            raise UsageError("a rating sample needs a folder for the ratings (rate_out)")
        rating = RatingStore.open(settings.rate_sample, settings.rate_out)
    return create_app(loader=loader, backend=backend, rating=rating,
                      max_upload=settings.max_upload, concurrency=settings.concurrency, queue=settings.queue,
                      allowed_hosts=settings.allowed_hosts or None, api_key=settings.api_key)


def serve(settings: ServeSettings, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info") -> None:
    """Serve until interrupted."""
    app = build_app(settings)
    try:
        uvicorn.run(app, host=host, port=port, log_level=log_level, **settings.timeouts.uvicorn_options())
    finally:
        close = getattr(app.state.backend, "close", None)
        if close:
            close()


@contextmanager
def running(app, *, host: str = "127.0.0.1", port: int = 0, timeout: float = 30.0,
            timeouts: Timeouts | None = None) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a background thread for the duration of the ``with`` block and
    yield its base URL (a free port when ``port`` is 0): for browser tests, screenshots and
    benchmarks that need a real server in the same process. ``timeouts``: as :func:`serve`'s
    (default :class:`.timeouts.Timeouts`)."""
    if not port:
        with socket.socket() as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
    options = (timeouts or Timeouts()).uvicorn_options()
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise MustciteError(f"the server did not start on {host}:{port}")
        time.sleep(0.05)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)

