"""REST API and web page over a loaded :class:`~mustcite.recommend.Recommender`.

* ``POST /api/recommend`` ``{"title", "abstract", "top", "year"}`` -> ``{"year", "results": [...]}``
* ``POST /api/audit`` multipart upload ``file`` (a draft: .pdf, .tei.xml, .md/.mmd[.gz]), ``top`` and
  ``year``

Time order: a query (or draft) is answered as of ``year`` (default: today's calendar year) with papers
of that year or earlier only; every answer says the ``year`` it used.
* ``GET /api/health`` -> 200 once the model is loaded, else 503
* ``GET /`` the web page (``mustcite/web/static``); OpenAPI at ``/openapi.json``.

Every bad input gets a 4xx JSON answer ``{"error": "..."}``; the server keeps serving.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
import threading
import typing
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from ..errors import MustciteError
from ..recommend.query import MIN_YEAR, today_year
from ..recommend.results import Recommendation

MAX_BODY = 256 * 1024            # JSON request bodies
MAX_UPLOAD = 20 * 2**20          # uploaded drafts
MAX_TITLE = 1000
MAX_ABSTRACT = 20000
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._()+-]{0,200}$")
_YEAR_DOC = "answer as of this year: only papers of this year or earlier (default: today's year)"


def _check_year(v: int | None) -> int | None:
    if v is not None and not MIN_YEAR <= v <= today_year() + 1:
        raise ValueError(f"year must be between {MIN_YEAR} and {today_year() + 1}")
    return v


class RecommendRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(..., max_length=MAX_TITLE, description="title of the query paper")
    abstract: str = Field("", max_length=MAX_ABSTRACT, description="abstract of the query paper")
    top: int = Field(20, ge=1, le=200, description="number of results")
    year: int | None = Field(None, description=_YEAR_DOC)

    @field_validator("year", mode="before")
    @classmethod
    def _whole_year(cls, v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError("year must be a whole number such as 2024")
        return v

    @field_validator("year")
    @classmethod
    def _year_range(cls, v: int | None) -> int | None:
        return _check_year(v)

    @field_validator("title")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("title is empty")
        if "\x00" in v:
            raise ValueError("title contains a NUL character")
        return v

    @field_validator("abstract")
    @classmethod
    def _no_nul(cls, v: str) -> str:
        if "\x00" in v:
            raise ValueError("abstract contains a NUL character")
        return v


def _response_model(cls: type, name: str, **extra: Any) -> type[BaseModel]:
    """A response model with every field of the dataclass ``cls`` (all required, in order), then ``extra``."""
    hints = typing.get_type_hints(cls)
    return create_model(name, **{f.name: (hints[f.name], ...) for f in dataclasses.fields(cls)}, **extra)


#: One result: :class:`~mustcite.recommend.results.Recommendation` (``to_dict()``) and its BibTeX entry.
Result = _response_model(Recommendation, "Result", bibtex=(str, ...))


class RecommendResponse(BaseModel):
    year: int = Field(..., description="the year answered for: only papers of this year or earlier")
    results: list[Result]


class AuditResponse(BaseModel):
    draft: str
    title: str
    year: int = Field(..., description="the year audited for: only papers of this year or earlier")
    references: int
    linked: int
    missing: list[Result]
    cited: list[Result]


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def _results(rs) -> list[dict[str, Any]]:
    from ..recommend.formats import bibtex

    return [r.to_dict() | {"bibtex": bibtex(r)} for r in rs]


def check_filename(name: str | None) -> str:
    """The upload's file name if it is a plain name (no folders, no '..', no control characters)."""
    if not name:
        raise MustciteError("the upload has no file name")
    if "/" in name or "\\" in name or ".." in name or not _SAFE_NAME.match(name):
        raise MustciteError("file name must be a plain name like draft.pdf (no folders or '..')",
                            field="file")
    return name


def create_app(recommender=None, *, loader: Callable[[], Any] | None = None,
               max_upload: int = MAX_UPLOAD) -> FastAPI:
    """The app over ``recommender``, or over what ``loader()`` returns (loaded in a background thread)."""
    app = FastAPI(title="mustcite", version=_version(),
                  description="Which papers must your paper cite? Recommendations and draft audits.")
    state: dict[str, Any] = {"rec": recommender, "error": None}
    max_year = today_year() + 1     # an audit's year: MIN_YEAR to next year
    lock = threading.Lock()

    if recommender is None and loader is not None:
        def _load() -> None:
            try:
                state["rec"] = loader()
            except Exception as exc:  # reported by /api/health
                state["error"] = str(exc)
        threading.Thread(target=_load, daemon=True).start()

    def rec():
        r = state["rec"]
        if r is None:
            raise _NotReady(state["error"] or "the model is still loading")
        return r

    @app.middleware("http")
    async def _limit_body(request: Request, call_next):
        limit = max_upload + 64 * 1024 if request.url.path == "/api/audit" else MAX_BODY
        length = request.headers.get("content-length")
        if length is not None:
            try:
                too_big = int(length) > limit
            except ValueError:
                return _error(400, "bad Content-Length header")
            if too_big:
                return _error(413, f"request body is larger than {limit} bytes")
        return await call_next(request)

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
        return _error(422, "; ".join(problems) or "invalid request", details=problems)

    @app.exception_handler(MustciteError)
    async def _mustcite(request: Request, exc: MustciteError):
        return _error(422, exc.message + (f" (field '{exc.field}')" if exc.field else ""),
                      hint=exc.hint)

    @app.exception_handler(_NotReady)
    async def _not_ready(request: Request, exc: "_NotReady"):
        return _error(503, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        msg = str(exc.detail)
        if exc.status_code == 400 and "parsing the body" in msg:
            msg = "could not parse the request body (is it UTF-8 JSON / a valid multipart form?)"
        return _error(exc.status_code, msg)

    @app.exception_handler(UnicodeDecodeError)
    async def _unicode(request: Request, exc: UnicodeDecodeError):
        return _error(400, "request is not valid UTF-8")

    @app.get("/api/health")
    def health():
        r = state["rec"]
        if r is None:
            return _error(503, state["error"] or "the model is still loading", state="loading")
        return {"status": "ok"} | r.describe()

    @app.post("/api/recommend", response_model=RecommendResponse)
    def recommend(req: RecommendRequest):
        r = rec()
        with lock:
            results = r.recommend(req.title, req.abstract, top=req.top, year=req.year)
        return {"year": results.year, "results": _results(results)}

    @app.post("/api/audit", response_model=AuditResponse)
    async def audit(file: UploadFile = File(..., description="the draft (.pdf, .tei.xml, .md/.mmd[.gz])"),
                    top: int = Form(20, ge=1, le=200),
                    year: int | None = Form(None, ge=MIN_YEAR, le=max_year, description=_YEAR_DOC)):
        from ..extract.run import kind_of

        r = rec()
        name = check_filename(file.filename)
        if kind_of(Path(name)) is None:
            raise MustciteError("unsupported draft type; upload a .pdf, .tei.xml or .md/.mmd file",
                                field="file")
        data = await file.read(max_upload + 1)
        if len(data) > max_upload:
            return _error(413, f"the draft is larger than {max_upload} bytes")
        if not data:
            raise MustciteError("the uploaded file is empty", field="file")
        with tempfile.TemporaryDirectory(prefix="mustcite-upload-") as tmp:
            path = Path(tmp) / name
            path.write_bytes(data)
            with lock:
                res = r.audit(path, top=top, year=year)
        return {"draft": name, "title": res.title, "year": res.year, "references": res.references, "linked": res.linked,
                "missing": _results(res.missing), "cited": _results(res.cited)}

    static = Path(str(resources.files("mustcite.web").joinpath("static")))
    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(static / "index.html", media_type="text/html")

    return app


class _NotReady(Exception):
    pass


def _version() -> str:
    from .. import __version__

    return __version__
