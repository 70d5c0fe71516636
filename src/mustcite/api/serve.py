"""Running the API: one process, or several worker processes behind one socket.

Each worker process loads the model once (read-only) and computes ``concurrency`` requests at a
time with a bounded queue (:mod:`.admission`); the operating system spreads connections over the
workers. With several workers each gets an equal share of the CPUs for its numeric libraries
(``OMP_NUM_THREADS`` and friends), so they do not fight over cores.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fastapi import FastAPI

#: The settings a worker process reads (set by :func:`serve` before the workers start).
SETTINGS_ENV = "MUSTCITE_SERVE_SETTINGS"
_THREAD_ENVS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass
class ServeSettings:
    model: str                                    # the model folder
    work: str | None = None                       # the work folder (for caches)
    concurrency: int = 1                          # requests computing at once, per worker
    queue: int = 32                               # requests waiting, per worker; more get 503
    allowed_hosts: list[str] = field(default_factory=list)   # empty: any Host header
    api_key: str | None = None
    max_upload: int = 20 * 2**20


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


def default_allowed_hosts(host: str) -> list[str]:
    """A loopback server answers only to loopback names (no DNS rebinding); others to any name."""
    return ["127.0.0.1", "localhost", "[::1]"] if is_loopback(host) else []


def build_app(settings: ServeSettings) -> FastAPI:
    """The app for ``settings``; the model loads in the background (``/api/health`` says when)."""
    from ..recommend import load_default
    from .app import create_app

    return create_app(loader=lambda: load_default(settings.work, settings.model), max_upload=settings.max_upload,
                      concurrency=settings.concurrency, queue=settings.queue,
                      allowed_hosts=settings.allowed_hosts or None, api_key=settings.api_key)


def app_from_env() -> FastAPI:
    """The factory each worker process calls (``uvicorn ... --factory``)."""
    raw = os.environ.get(SETTINGS_ENV)
    if not raw:
        raise RuntimeError(f"{SETTINGS_ENV} is not set: start workers with `mustcite serve --workers N`")
    return build_app(ServeSettings(**json.loads(raw)))


def serve(settings: ServeSettings, *, host: str = "127.0.0.1", port: int = 8000, workers: int = 1,
          log_level: str = "info") -> None:
    """Serve until interrupted."""
    import uvicorn

    if workers <= 1:
        uvicorn.run(build_app(settings), host=host, port=port, log_level=log_level)
        return
    share = max(1, len(os.sched_getaffinity(0)) // workers) if hasattr(os, "sched_getaffinity") else 1
    for name in _THREAD_ENVS:
        os.environ.setdefault(name, str(share))
    os.environ[SETTINGS_ENV] = json.dumps(asdict(settings) | {"model": str(Path(settings.model))})
    uvicorn.run("mustcite.api.serve:app_from_env", factory=True, workers=workers, host=host, port=port,
                log_level=log_level)
