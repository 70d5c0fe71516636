"""The language server's transport: JSON-RPC messages framed by ``Content-Length`` headers over
stdio, read so that no client mistake can wedge the server or exhaust its memory.

pygls reads frames with a strict pattern and no size limit: one header it does not recognise (a
lower-case name, LF line ends, a length that is not a number or is too long) and it waits for
ever without a word, and a 100 MB message is read whole. :class:`FrameReader` instead

* accepts header names in any case and lines ending in LF or CRLF;
* answers a header without a usable ``Content-Length`` with an error and resynchronises at the
  next ``Content-Length:`` in the stream;
* skips a message longer than :data:`MAX_MESSAGE_BYTES` a block at a time (never held whole),
  with an error;
* notices a body shorter than its ``Content-Length``: a raw ``Content-Length: N`` line can appear
  in no JSON text (outside a string it is no JSON token, inside one a raw line end is not
  allowed), so when one turns up inside a body the body was short; the error names it and the
  next message is read from there.

:func:`serve` runs a pygls server on it: frames are read in a daemon thread (so a blocked read
never holds up the exit) and handled on the event loop; errors go back as JSON-RPC error
responses (``id`` null when the message's id is unknown). It returns the exit code the protocol
asks for: 0 after ``shutdown`` then ``exit``, 1 for ``exit`` without ``shutdown`` or input that
ends without ``exit``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter

log = logging.getLogger(__name__)

#: Longest message body accepted (bytes); a longer one is skipped with an error.
MAX_MESSAGE_BYTES = 16 * 2**20
#: Longest header block (bytes) before the blank line that ends it.
MAX_HEADER_BYTES = 8192

PARSE_ERROR, INVALID_REQUEST = -32700, -32600

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_LINE_END = re.compile(rb"\r?\n")
_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:", re.I)
#: a whole Content-Length line: never part of a JSON text, so inside a body it starts the next message
_NEXT_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n", re.I)
_BLOCK = 1 << 16


def _next_header(buf: bytearray, start: int) -> re.Match | None:
    """The first whole ``Content-Length`` line of ``buf`` from ``start`` (any case): the name is
    looked for in a lower-cased copy by a plain substring search, each place it is found then
    matched in full (a case-insensitive regular expression walks a megabyte body far slower)."""
    low = buf[start:].lower()
    i = low.find(b"content-length")
    while i >= 0:
        m = _NEXT_HEADER.match(buf, start + i)
        if m:
            return m
        i = low.find(b"content-length", i + 1)
    return None


def parse_header(head: bytes) -> tuple[int | None, str | None]:
    """``(content length, None)`` of a header block, or ``(None, why it is unusable)``."""
    length = None
    for line in _LINE_END.split(head):
        if not line.strip():
            continue
        name, sep, value = line.partition(b":")
        if not sep:
            return None, f"malformed header line {line[:80].decode('latin-1')!r}"
        if name.strip().lower() == b"content-length":
            value = value.strip()
            if not value.isdigit():
                return None, f"Content-Length {value[:40].decode('latin-1')!r} is not a whole number of bytes"
            length = int(value) if len(value) <= 15 else 10**15
    if length is None:
        return None, "no Content-Length header"
    return length, None


class FrameReader:
    """Message bodies of a byte stream read by ``read(n)`` (at most ``n`` bytes; ``b""`` at the
    end): :meth:`frames` yields ``(body, None)`` per message and ``(None, why)`` per stretch of
    input it had to skip."""

    def __init__(self, read: Callable[[int], bytes], max_bytes: int = MAX_MESSAGE_BYTES):
        self._read = read
        self.max_bytes = max_bytes
        self.buf = bytearray()

    def _fill(self) -> bool:
        chunk = self._read(_BLOCK)
        self.buf += chunk
        return bool(chunk)

    def _resync(self, start: int) -> bool:
        """Drop the input before the next ``Content-Length:`` found from ``start``; False at the end."""
        keep = len(b"content-length:") - 1
        while True:
            m = _CONTENT_LENGTH.search(self.buf, start)
            if m:
                del self.buf[:m.start()]
                return True
            del self.buf[:max(start, len(self.buf) - keep)]
            start = 0
            if not self._fill():
                return False

    def _header(self) -> Iterator[tuple[None, str] | tuple[int, int]]:
        """``(header end, body start)`` of the next header block, after ``(None, why)`` for each
        stretch skipped to find one; nothing more at the end of the input."""
        while True:
            while self.buf[:1] in (b"\r", b"\n", b" ", b"\t"):    # line ends between messages
                del self.buf[:1]
            m = _HEADER_END.search(self.buf, 0, MAX_HEADER_BYTES + 4)
            if m:
                yield m.start(), m.end()
                return
            if len(self.buf) > MAX_HEADER_BYTES:
                yield None, f"no end of header in {MAX_HEADER_BYTES:,} bytes"
                if not self._resync(1):
                    return
                continue
            if not self._fill():
                if self.buf.strip():
                    yield None, "the input ended inside a header"
                return

    def _body(self, start: int, length: int, keep: bool) -> tuple[bytes | None, int | None]:
        """The body ``buf[start:start + length]``, reading as needed: ``(body, None)`` (``b""`` when
        not ``keep``: read and dropped a block at a time), ``(None, where the next header starts)``
        when it is short, ``(None, None)`` at the end of the input."""
        scanned = start
        while True:
            hit = _next_header(self.buf, max(start, scanned - 64))
            if hit and hit.start() < start + length:
                return None, hit.start()
            if len(self.buf) >= start + length:
                body = bytes(self.buf[start:start + length]) if keep else b""
                del self.buf[:start + length]
                return body, None
            scanned = len(self.buf)
            if not keep and scanned - start > 4 * _BLOCK:
                drop = scanned - start - 64
                del self.buf[start:start + drop]
                length, scanned = length - drop, scanned - drop
            if not self._fill():
                return None, None

    def frames(self) -> Iterator[tuple[bytes, None] | tuple[None, str]]:
        while True:
            end = None
            for end in self._header():
                if end[0] is None:
                    yield None, end[1]
            if end is None or end[0] is None:
                return
            length, why = parse_header(bytes(self.buf[:end[0]]))
            if why:
                yield None, why
                if not self._resync(1):
                    return
                continue
            del self.buf[:end[1]]
            keep = length <= self.max_bytes
            if not keep:
                yield None, (f"message of {length:,} bytes is over the {self.max_bytes:,}-byte cap; skipped")
            body, short = self._body(0, length, keep)
            if short is not None:
                if keep:
                    yield None, (f"message body shorter than its Content-Length {length:,}: the next header "
                                 f"came after {short:,} bytes")
                del self.buf[:short]
            elif body is None:
                if keep:
                    yield None, f"the input ended inside a message body ({len(self.buf):,} of {length:,} bytes)"
                return
            elif keep:
                yield body, None


def reply_error(server, msg_id: Any, code: int, message: str) -> None:
    """Send a JSON-RPC error response; ``msg_id`` None when the message's id is unknown (sent as
    ``"id": null``, as JSON-RPC asks)."""
    log.warning("mustcite lsp: %s", message)
    server.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def handle_body(server, body: bytes) -> None:
    """Decode one message body and hand it to the server's protocol; anything malformed is
    answered with an error response."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:       # UnicodeDecodeError is a ValueError
        reply_error(server, None, PARSE_ERROR, f"malformed JSON message: {exc}")
        return
    msg_id = data.get("id") if isinstance(data, dict) else None
    msg_id = msg_id if isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool) else None
    if not isinstance(data, dict):
        reply_error(server, None, INVALID_REQUEST, "a message must be a JSON object")
        return
    is_request = msg_id is not None and "method" in data
    try:
        server.protocol.handle_message(server.protocol.structure_message(data))
    except JsonRpcException as exc:
        if is_request:
            server.protocol._send_response(msg_id, error=exc.to_response_error())
        else:
            log.warning("mustcite lsp: malformed message: %s", exc)
    except (AttributeError, TypeError, ValueError) as exc:
        reply_error(server, msg_id if is_request else None, INVALID_REQUEST, f"malformed message: {exc}")


def serve(server, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve ``server`` (a pygls server) on ``stdin``/``stdout`` until ``exit`` or the end of the
    input; the exit code the protocol asks for."""
    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout))
    read = getattr(stdin, "read1", stdin.read)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue(maxsize=8)

        def pump() -> None:
            try:
                for frame in FrameReader(read).frames():
                    asyncio.run_coroutine_threadsafe(queue.put(frame), loop).result()
            except Exception as exc:         # a closed or broken input ends the session like its end
                log.warning("mustcite lsp: reading the input failed: %s", exc)
            finally:
                try:
                    asyncio.run_coroutine_threadsafe(queue.put(None), loop)
                except RuntimeError:         # the loop has already closed
                    pass

        threading.Thread(target=pump, name="mustcite-lsp-reader", daemon=True).start()
        while (frame := await queue.get()) is not None:
            body, why = frame
            if why is not None:
                reply_error(server, None, PARSE_ERROR, why)
            else:
                handle_body(server, body)

    try:
        asyncio.run(run())
    except SystemExit as exc:                 # pygls's ``exit``: 0 after ``shutdown``, else 1
        return exc.code if isinstance(exc.code, int) else 1
    except BrokenPipeError:
        log.error("mustcite lsp: the client closed the connection")
    return 0 if server.protocol._shutdown else 1
