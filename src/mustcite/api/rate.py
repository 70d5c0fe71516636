"""The rater page for the human check of a validation sample (``mustcite rate``).

* ``GET /rate`` the page (``mustcite/web/static/rate.html`` + ``rate.js``)
* ``GET /api/rate/next?rater=NAME`` -> the first instance NAME has not answered (``instance`` null
  when all are done), with ``rated`` / ``total``
* ``POST /api/rate`` ``{"rater", "item", "type1": 0|1, "type2": 1..5}`` -> saved (on disk) + progress
* ``POST /api/rate/undo`` ``{"rater"}`` -> removes NAME's last answer
* ``GET /api/rate/progress[?rater=NAME]`` -> answers per rater, or NAME's progress

Answers go to ``OUT/<rater>.csv`` (:class:`mustcite.labels.rating.RatingStore`).  A ratings file
that cannot be read or written (not UTF-8, malformed, an overlong field, a bad answer in it) is
answered ``500`` with ``{"error": "OUT/<rater>.csv:LINE: why", "file", "line"}``: the request was
fine, the file on the server needs fixing (or moving away) before that rater can go on.

``mustcite rate`` serves only these routes, behind the same guards as the recommender (same-origin POSTs only, body
cap, CSP, loopback Host names); ``create_app(rating=...)`` adds them to the recommender server.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Literal

from fastapi import FastAPI, Query, Request
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.middleware.trustedhost import TrustedHostMiddleware

from .. import lazy_libs
from ..labels.rating import RatingsFileError, RatingStore
from ..version import __version__
from .guards import BodyLimit, SameOrigin, SecurityHeaders, default_allowed_hosts, error_response
from .handlers import add_error_handlers

MAX_BODY = 16 * 1024
_RATER = Field(..., min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
               description="rater name: letters, digits, '_', '.', '-' (also the file name OUT/<rater>.csv)")


class RateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    rater: str = _RATER
    item: str = Field(..., min_length=1, max_length=1000, description="the sample's item id")
    type1: Literal[0, 1] = Field(..., description="Type I: experimental baseline / core reference (0/1)")
    type2: Literal[1, 2, 3, 4, 5] = Field(..., description="Type II: core relevance (1-5)")

    @field_validator("type1", "type2", mode="before")
    @classmethod
    def _no_bool(cls, v):
        if isinstance(v, bool):
            raise ValueError("must be a number, not true/false")
        return v


class UndoRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    rater: str = _RATER


def add_rate_routes(app: FastAPI, store: RatingStore) -> None:
    """``/rate`` and ``/api/rate/*`` over ``store`` (file I/O runs in FastAPI's thread pool)."""
    static = Path(str(resources.files("mustcite.web").joinpath("static")))
    app.state.rating = store

    async def bad_ratings_file(request: Request, exc: RatingsFileError):
        where = (exc.path or "the ratings file") + (f":{exc.line}" if exc.line is not None else "")
        message = f"{where}: {exc.message}" + (f" (field '{exc.field}')" if exc.field else "")
        extra = {"file": exc.path, "line": exc.line, **({"hint": exc.hint} if exc.hint else {})}
        return error_response(500, message, **extra)

    app.add_exception_handler(RatingsFileError, bad_ratings_file)

    @app.get("/rate", include_in_schema=False)
    def rate_page():
        return FileResponse(static / "rate.html", media_type="text/html")

    @app.get("/api/rate/next")
    def rate_next(rater: str = Query(..., min_length=1, max_length=64)):
        return store.next(rater)

    @app.post("/api/rate")
    def rate_save(req: RateRequest):
        return {"saved": {"item": req.item, "type1": req.type1, "type2": req.type2},
                **store.save(req.rater, req.item, req.type1, req.type2)}

    @app.post("/api/rate/undo")
    def rate_undo(req: UndoRequest):
        return store.undo(req.rater)

    @app.get("/api/rate/progress")
    def rate_progress(rater: str | None = Query(None, min_length=1, max_length=64)):
        out = {"total": len(store.instances), "sample": str(store.sample_path), "raters": store.all_progress()}
        if rater is not None:
            out.update(store.progress(rater))
        return out


def create_rate_app(store: RatingStore, *, allowed_hosts: list[str] | None = None) -> FastAPI:
    """An app with only the rater page (``/`` redirects to ``/rate``)."""
    app = FastAPI(title="mustcite rate", version=__version__,
                  description="Rate a validation sample: Type I (0/1) and Type II (1-5) per citation instance.")
    app.add_middleware(BodyLimit, limit_for=lambda path: MAX_BODY)
    app.add_middleware(SameOrigin)
    if allowed_hosts:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    app.add_middleware(SecurityHeaders)
    add_error_handlers(app)
    static = Path(str(resources.files("mustcite.web").joinpath("static")))
    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.get("/", include_in_schema=False)
    def root():
        return RedirectResponse("/rate")

    add_rate_routes(app, store)
    return app


def serve_rate(store: RatingStore, *, host: str = "127.0.0.1", port: int = 8010, log_level: str = "warning") -> None:
    uvicorn = lazy_libs.uvicorn("the rater page")
    from .timeouts import Timeouts  # imports uvicorn too: only when serving


    uvicorn.run(create_rate_app(store, allowed_hosts=default_allowed_hosts(host) or None),
                host=host, port=port, log_level=log_level, **Timeouts().uvicorn_options())
