"""What the server checks before a request reaches a route (pure ASGI middleware, one job each).

* :class:`BodyLimit`: a request body larger than its cap gets 413, whether it declares a
  ``Content-Length`` or arrives chunked: bytes are counted as they arrive, never buffered first.
* :class:`SameOrigin`: a browser request from another site (``Origin`` or ``Sec-Fetch-Site``
  says so) gets 403, so a page a user visits cannot post to a server on their machine.
* :class:`ApiKey`: with a key set, ``/api/*`` (except ``/api/health``) needs ``X-API-Key: KEY``
  or ``Authorization: Bearer KEY``; else 401.
* :class:`SecurityHeaders`: ``nosniff``, no framing, no referrer, and a content security policy
  that allows only this server's own scripts, styles and API.

A Host allow-list is Starlette's ``TrustedHostMiddleware`` (see :func:`mustcite.api.app.create_app`).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

Scope = dict[str, Any]
ASGIApp = Callable[..., Any]

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
#: Pages that load FastAPI's documentation UI from a CDN: no CSP there (everything else has one).
_NO_CSP = ("/docs", "/redoc")


def error_response(status: int, message: str, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    """The one error shape of the API: ``{"error": message, ...extra}``."""
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)


def _too_large(limit: int, scope: Scope) -> str:
    return f"request body is larger than the {limit:,}-byte limit of {scope['path']}"


class BodyLimit:
    """413 for a body over ``limit_for(path)`` bytes, counted as it arrives (chunked or not)."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]):
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.limit_for(scope["path"])
        length = Headers(scope=scope).get("content-length")
        if length is not None:
            if not length.isdigit():
                return await error_response(400, "bad Content-Length header")(scope, receive, send)
            if int(length) > limit:
                return await error_response(413, _too_large(limit, scope))(scope, receive, send)
        seen = 0
        started = False

        async def counted_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    # an HTTPException passes through FastAPI's body parsing unchanged (-> 413)
                    raise HTTPException(413, _too_large(limit, scope))
            return message

        async def watched_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except HTTPException as exc:   # raised outside a route (e.g. while a middleware read the body)
            if exc.status_code != 413 or started:
                raise
            await error_response(413, str(exc.detail))(scope, receive, send)


class SameOrigin:
    """403 for a state-changing browser request sent from another site."""

    SAFE = ("GET", "HEAD", "OPTIONS")

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] == "http" and scope["method"] not in self.SAFE:
            h = Headers(scope=scope)
            origin, host = h.get("origin"), h.get("host", "")
            cross = h.get("sec-fetch-site") == "cross-site"
            if origin and origin != "null":
                cross = cross or urlsplit(origin).netloc.lower() != host.lower()
            elif origin == "null":
                cross = True
            if cross:
                return await error_response(403, "cross-site request refused: call the API from this "
                                                 "server's own page or from a non-browser client")(scope, receive, send)
        await self.app(scope, receive, send)


class ApiKey:
    """401 for an ``/api/*`` request (``/api/health`` excepted) without the right key."""

    OPEN = ("/api/health",)

    def __init__(self, app: ASGIApp, key: str):
        self.app = app
        self.key = key.encode("utf-8")

    def _given(self, h: Headers) -> bytes:
        auth = h.get("authorization", "")
        given = h.get("x-api-key") or (auth[7:].strip() if auth.lower().startswith("bearer ") else "")
        return given.encode("utf-8", "surrogateescape")

    async def __call__(self, scope: Scope, receive, send) -> None:
        path = scope.get("path", "")
        if (scope["type"] == "http" and path.startswith("/api/") and path not in self.OPEN
                and scope["method"] != "OPTIONS"):
            if not hmac.compare_digest(self._given(Headers(scope=scope)), self.key):
                return await error_response(401, "this server needs an API key: send the header X-API-Key",
                                            {"www-authenticate": "Bearer"})(scope, receive, send)
        await self.app(scope, receive, send)


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` and the CSP to every response."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        csp = not scope["path"].startswith(_NO_CSP)

        async def with_headers(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.decode("latin-1").lower() not in SECURITY_HEADERS]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                if csp:
                    headers.append((b"content-security-policy", CSP.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


def default_allowed_hosts(host: str) -> list[str]:
    """A loopback server answers only to loopback names (no DNS rebinding); others to any name."""
    return ["127.0.0.1", "localhost", "[::1]"] if is_loopback(host) else []
