"""REST API and web page over a loaded :class:`~mustcite.recommend.Recommender`.

* ``POST /api/recommend`` ``{"title", "abstract", "top", "year"}`` -> ``{"year", "results": [...]}``
* ``POST /api/audit`` multipart upload ``file`` (a draft: .pdf, .tei.xml, .md/.mmd[.gz], or LaTeX:
  a .tex file or a .zip/.tar.gz/.tgz project archive), ``top`` and
  ``year``

Time order: a query (or draft) is answered as of ``year`` (default: today's calendar year) with papers
of that year or earlier only; every answer says the ``year`` it used.
* ``GET /api/health`` -> 200 once the model is loaded, else 503 (``state``: loading or failed)
* ``GET /`` the web page (``mustcite/web/static``); OpenAPI at ``/openapi.json``.

Every bad input gets a 4xx JSON answer ``{"error": "..."}``; the server keeps serving. Requests
compute in a backend (:mod:`.backends`: this process, or a pool of worker processes) with ``queue``
more waiting (:mod:`.admission`); beyond that the answer is 503 with ``Retry-After``. Bodies are
capped as they arrive, cross-site browser requests are refused, and every response carries security
headers (:mod:`.guards`); ``allowed_hosts`` and ``api_key`` are options of ``mustcite serve``.
"""

from __future__ import annotations

import dataclasses
import re
import typing
import unicodedata
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, File, Form, UploadFile
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator
from starlette.middleware.trustedhost import TrustedHostMiddleware

from ..errors import MustciteError
from ..recommend.query import MAX_ABSTRACT, MAX_TITLE, MIN_YEAR, today_year
from ..recommend.results import Recommendation
from ..version import __version__
from .admission import Admission
from .backends import LocalBackend, NotReady
from .guards import ApiKey, BodyLimit, SameOrigin, SecurityHeaders, error_response
from .handlers import add_error_handlers

MAX_BODY = 256 * 1024            # JSON request bodies
MAX_UPLOAD = 20 * 2**20          # uploaded drafts
_SAFE_NAME = re.compile(r"^\w[\w ._()+-]{0,200}$")   # \w: letters and digits of any script
_YEAR_DOC = "answer as of this year: only papers of this year or earlier (default: today's year)"


def _check_year(v: int | None) -> int | None:
    if v is not None and not MIN_YEAR <= v <= today_year() + 1:
        raise ValueError(f"year must be between {MIN_YEAR} and {today_year() + 1}")
    return v


class RecommendRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # the validators below give the messages; the schema states the same rules for clients
    title: str = Field(..., max_length=MAX_TITLE, description="title of the query paper (not blank, no NUL)",
                       json_schema_extra={"pattern": r"^[^\u0000]*[^\s\u0000][^\u0000]*$"})
    abstract: str = Field("", max_length=MAX_ABSTRACT, description="abstract of the query paper (no NUL)",
                          json_schema_extra={"pattern": r"^[^\u0000]*$"})
    top: int = Field(20, ge=1, le=200, description="number of results")
    year: int | None = Field(None, description=_YEAR_DOC,
                             json_schema_extra={"minimum": MIN_YEAR, "maximum": today_year() + 1})

    @field_validator("year", "top", mode="before")
    @classmethod
    def _whole_number(cls, v: Any, info) -> Any:
        if isinstance(v, bool):      # JSON true/false is no number (Python would read it as 1/0)
            example = "2024" if info.field_name == "year" else "20"
            raise ValueError(f"{info.field_name} must be a whole number such as {example}")
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
    notice: str | None = Field(None, description="why the list is empty, when it is")


class ErrorResponse(BaseModel):
    error: str = Field(..., description="what was wrong, naming the field or file")
    details: list[str] | None = None
    hint: str | None = None
    state: str | None = Field(None, description="/api/health: loading | failed")


_ERRORS = {code: {"model": ErrorResponse, "description": what} for code, what in (
    (400, "malformed request"), (401, "API key missing or wrong (when the server has one)"),
    (403, "cross-site request refused"), (413, "body too large"), (422, "invalid input"),
    (503, "model not loaded yet, or busy (see Retry-After)"))}


class AuditResponse(BaseModel):
    draft: str
    title: str
    year: int = Field(..., description="the year audited for: only papers of this year or earlier")
    references: int
    linked: int
    missing: list[Result]
    cited: list[Result]
    notice: str | None = Field(None, description="why no paper was recommended, when none was")
    notes: list[str] = Field(default_factory=list, description="what to know about how the draft was read: "
                             "files not read, bibliographies missing, cite keys defined nowhere, references "
                             "without a year")
    closest_bibliographies: list[dict[str, Any]] = Field(
        default_factory=list, description="the labelled papers whose reference lists are closest to the draft's")
    reference_list: list[dict[str, Any]] = Field(
        default_factory=list, description="the draft's references as read (marker or BibTeX key, title, year, "
                                          "linked pool paper, mentions)")
    threshold: float | None = Field(None, description="the confidence a finding needs to be in missing")
    findings: list[dict[str, Any]] = Field(
        default_factory=list, description="every finding, shown or not, strongest first: kind, confidence, message, "
                                          "location (file, line, section, sentence), paper, name, key")


def check_filename(name: str | None) -> str:
    """The upload's file name if it is a plain name (no folders, no '..', no control characters)."""
    if not name:
        raise MustciteError("the upload has no file name")
    name = unicodedata.normalize("NFC", name)
    if "/" in name or "\\" in name or ".." in name or not _SAFE_NAME.match(name):
        raise MustciteError("file name must be a plain name like draft.pdf (no folders or '..')",
                            field="file")
    return name


def create_app(recommender=None, *, loader: Callable[[], Any] | None = None, backend=None,
               max_upload: int = MAX_UPLOAD, concurrency: int = 1, queue: int = 32,
               allowed_hosts: list[str] | None = None, api_key: str | None = None, rating=None) -> FastAPI:
    """The app over ``recommender``, or over what ``loader()`` returns (loaded in a background
    thread), or over ``backend`` (a :class:`~.backends.PoolBackend` of worker processes).

    ``concurrency`` requests compute at once in this process (a backend has its own number) and
    ``queue`` more wait; ``allowed_hosts`` (e.g. ``["localhost", "127.0.0.1"]``) refuses other
    ``Host`` headers; ``api_key`` guards ``/api/*``; ``rating`` (a
    :class:`~mustcite.labels.rating.RatingStore`) adds the rater page ``/rate`` and ``/api/rate/*``.
    """
    app = FastAPI(title="mustcite", version=__version__,
                  description="Which papers must your paper cite? Recommendations and draft audits.")
    max_year = today_year() + 1     # an audit's year: MIN_YEAR to next year
    if backend is None:
        backend = LocalBackend(recommender, loader, concurrency)
    admission = Admission(backend.slots, queue)
    app.state.admission, app.state.backend = admission, backend

    # outermost last: headers on every answer, then hosts, same-origin, key, body cap
    app.add_middleware(BodyLimit, limit_for=lambda path: max_upload + 64 * 1024 if path == "/api/audit" else MAX_BODY)
    if api_key:
        app.add_middleware(ApiKey, key=api_key)
    app.add_middleware(SameOrigin)
    if allowed_hosts:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    app.add_middleware(SecurityHeaders)

    add_error_handlers(app)

    @app.get("/api/health", responses={503: _ERRORS[503]})
    def health():
        try:
            info = backend.describe()
        except NotReady as exc:
            return error_response(503, str(exc), {"Retry-After": "5"}, state="failed" if exc.failed else "loading")
        return {"status": "ok"} | info | {"queue": {"slots": admission.slots, "queue": admission.queue,
                                                    "inside": admission.inside}}

    @app.post("/api/recommend", response_model=RecommendResponse, responses=_ERRORS)
    async def recommend(req: RecommendRequest):
        backend.describe()       # 503 while the model loads, before taking a queue place
        with admission.admit():
            return await backend.recommend(req.title, req.abstract, req.top, req.year)

    @app.post("/api/audit", response_model=AuditResponse, responses=_ERRORS)
    async def audit(file: UploadFile = File(..., description="the draft (.pdf, .tei.xml, .md/.mmd[.gz], "
                                                                 ".tex, or a .zip/.tar.gz/.tgz LaTeX project)"),
                    top: int = Form(20, ge=1, le=200),
                    year: int | None = Form(None, ge=MIN_YEAR, le=max_year, description=_YEAR_DOC),
                    all: bool = Form(False, description="every finding, also those under the confidence threshold")):
        from ..recommend.draft import draft_kind  # the draft readers (LaTeX, ~50 ms) load with the first audit

        backend.describe()
        name = check_filename(file.filename)
        if draft_kind(Path(name)) is None:
            raise MustciteError(f"{name}: unsupported draft type; upload a .pdf, .tei.xml, .md/.mmd or .tex file, "
                                "or a .zip/.tar.gz/.tgz LaTeX project",
                                field="file")
        data = await file.read(max_upload + 1)
        if len(data) > max_upload:
            return error_response(413, f"{name}: the draft is larger than the {max_upload:,}-byte limit")
        if not data:
            raise MustciteError(f"{name}: the uploaded file is empty", field="file")
        with admission.admit():
            return await backend.audit(name, data, top, year, all)

    static = Path(str(resources.files("mustcite.web").joinpath("static")))
    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(static / "index.html", media_type="text/html")

    if rating is not None:
        from .rate import add_rate_routes  # the rater page's modules (~10 ms): only with a rating sample

        add_rate_routes(app, rating)

    return app
