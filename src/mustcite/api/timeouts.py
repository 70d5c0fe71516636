"""Time limits for slow and idle clients, and a cap on open connections.

uvicorn's own ``timeout_keep_alive`` only closes a connection that sits idle *between* requests.
:class:`Timeouts` adds the rest, enforced by an h11 protocol (:func:`protocol_class`):

* ``header``: a request's line and headers must be complete within this many seconds of the
  connection opening (or, on a kept-alive connection, of the next request's first byte); else the
  connection is closed (with a 408 when part of a request had arrived);
* ``body``: a request body that sends nothing for this long, or is not complete ``body_total``
  seconds after its headers, gets 408 and the connection is closed (time the server itself is not
  reading, e.g. while the app has not taken the body yet or not yet answered ``Expect:
  100-continue``, does not count);
* ``keep_alive``: an idle kept-alive connection is closed after this long;
* ``max_connections``: connections beyond this many are closed as soon as they open (kept below the
  process's open-file limit), so idle sockets cannot use up the file descriptors the server needs.
"""

from __future__ import annotations

import asyncio
import resource
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

_TIMEOUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: 16\r\nconnection: close\r\n\r\nRequest Timeout\n")


@dataclass(frozen=True)
class Timeouts:
    header: float = 10.0
    body: float = 20.0
    body_total: float = 300.0
    keep_alive: float = 5.0
    max_connections: int = 1000

    def uvicorn_options(self) -> dict[str, Any]:
        """Keyword arguments for ``uvicorn.Config`` / ``uvicorn.run`` that apply these limits."""
        return {"http": protocol_class(self), "timeout_keep_alive": self.keep_alive}


def _connection_cap(wanted: int) -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(16, min(wanted, soft - 128))     # files, pipes and the listening socket need some


def protocol_class(timeouts: Timeouts) -> type[asyncio.Protocol]:
    """An h11 protocol for uvicorn (``uvicorn.Config(http=...)``) that enforces ``timeouts``."""
    return type("TimedH11Protocol", (TimedH11Protocol,),
                {"timeouts": timeouts, "max_connections": _connection_cap(timeouts.max_connections)})


class TimedH11Protocol(H11Protocol):
    timeouts: ClassVar[Timeouts] = Timeouts()
    max_connections: ClassVar[int] = Timeouts.max_connections
    _timer: asyncio.TimerHandle | None = None
    _phase: str | None = None          # "header", "body" or None: what the running timer waits for
    _body_deadline = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            transport.close()
            return
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch(got_data=True)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _watch(self, got_data: bool = False) -> None:
        """Start, restart or stop the timer for what the connection now waits for."""
        state = self.conn.their_state
        if self.transport.is_closing():
            self._stop()
        elif state is h11.IDLE and self.timeout_keep_alive_task is None:
            if self._phase != "header":     # one deadline for the whole head: more bytes do not extend it
                self._start("header", self.timeouts.header)
        elif state is h11.SEND_BODY:
            now = self.loop.time()
            if self._phase != "body":
                self._body_deadline = now + self.timeouts.body_total
                self._start("body", self.timeouts.body)
            elif got_data:
                self._start("body", min(self.timeouts.body, self._body_deadline - now))
        else:                                # a whole request in, or idle between requests (keep-alive)
            self._stop()

    def _start(self, phase: str, delay: float) -> None:
        self._stop()
        self._phase = phase
        self._timer = self.loop.call_later(max(0.0, delay), self._expired)

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._phase = None, None

    def _expired(self) -> None:
        phase, cycle, self._timer = self._phase, self.cycle, None
        if self.transport.is_closing():
            return
        if phase == "body" and (self.flow.read_paused or (cycle is not None and cycle.waiting_for_100_continue)):
            # the server has not taken the body yet (or not asked for it): not the client's delay
            self._body_deadline = max(self._body_deadline, self.loop.time() + self.timeouts.body)
            self._start("body", self.timeouts.body)
            return
        if (phase == "header" and self.conn.trailing_data[0]) or (
                phase == "body" and cycle is not None and not cycle.response_started):
            self.transport.write(_TIMEOUT)
        self._phase = None
        self.transport.close()
