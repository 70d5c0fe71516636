"""The one error shape of every mustcite web app (the recommender API and the rater page)."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import MustciteError
from .admission import Busy
from .backends import NotReady
from .guards import error_response


def add_error_handlers(app: FastAPI) -> None:
    """The API's one error shape (``{"error": ...}``) for invalid input, MustciteError, a model not
    ready, a full queue, HTTP errors, input nested too deeply to read and non-UTF-8 bodies (the
    recommender API and the rater app)."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        problems = []
        for e in exc.errors():
            loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
            msg = e.get("msg", "invalid")
            if e.get("type") == "extra_forbidden":
                msg = "unknown field"
            elif e.get("type") == "json_invalid":
                msg = "body is not valid JSON (or not UTF-8)"
            problems.append(f"{loc}: {msg}" if loc else msg)
        return error_response(422, "; ".join(problems) or "invalid request", details=problems)

    @app.exception_handler(MustciteError)
    async def _mustcite(request: Request, exc: MustciteError):
        return error_response(422, exc.message + (f" (field '{exc.field}')" if exc.field else ""),
                              **({"hint": exc.hint} if exc.hint else {}))

    @app.exception_handler(NotReady)
    async def _not_ready(request: Request, exc: NotReady):
        return error_response(503, str(exc), {"Retry-After": "5"}, state="failed" if exc.failed else "loading")

    @app.exception_handler(Busy)
    async def _busy(request: Request, exc: Busy):
        return error_response(503, str(exc), {"Retry-After": str(exc.retry_after)})

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        msg = str(exc.detail)
        if exc.status_code == 400 and "parsing the body" in msg:
            msg = "could not parse the request body (is it UTF-8 JSON / a valid multipart form?)"
        return error_response(exc.status_code, msg, getattr(exc, "headers", None))   # e.g. 405's Allow

    @app.exception_handler(RecursionError)
    async def _too_deep(request: Request, exc: RecursionError):
        # a reader that recursed on thousands of nested brackets or folders: the input's fault, said plainly
        return error_response(422, "the upload is nested too deeply to read (thousands of nested brackets or "
                                   "folders)")

    @app.exception_handler(UnicodeDecodeError)
    async def _unicode(request: Request, exc: UnicodeDecodeError):
        return error_response(400, "request is not valid UTF-8")
