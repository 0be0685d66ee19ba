"""The lab's HTTP/1.1 connection layer, shaped like the Go ``net/http`` server kube-apiserver runs.

kube-apiserver serves with ``http.Server{MaxHeaderBytes: 1 << 20, IdleTimeout: 90 * time.Second,
ReadHeaderTimeout: 32 * time.Second}`` (apiserver ``pkg/server/secure_serving.go``). What Go refuses before a request
reaches any handler it answers in plain text, never with a ``metav1.Status``, because the apiserver's filters never
see it (``net/http/server.go``, ``conn.serve`` and ``conn.readRequest``). The lab reproduces those refusals:

* a request line plus headers over ``MaxHeaderBytes`` + 4096 (Go's ``initialReadLimitSize``, the bufio slack):
  ``HTTP/1.1 431 Request Header Fields Too Large`` with ``Content-Type: text/plain; charset=utf-8``,
  ``Connection: close`` and the body ``431 Request Header Fields Too Large``, then the write side is shut and the
  connection closed after Go's ``rstAvoidanceDelay`` (500 ms) so the client can read it;
* a request aiohttp's parser cannot read (a malformed request line or header): ``400 Bad Request`` with the body
  ``400 Bad Request`` (Go's answer to a ``readRequest`` error that is not a ``statusError``);
* a ``Transfer-Encoding`` other than ``chunked``: ``501 Not Implemented`` with the body
  ``Unsupported transfer encoding``;
* an HTTP/1.1 request without ``Host``, more than one ``Host``, or a header value with a control character
  (:func:`go_request_error`): Go's ``badRequestError`` texts ``missing required Host header``,
  ``too many Host headers``, ``invalid header value``, carried on the status line and in the body as Go writes a
  ``statusError`` (``400 Bad Request: missing required Host header``);
* request headers not complete :data:`READ_HEADER_TIMEOUT` seconds after the connection opened or after the first
  byte of the next request on a kept-alive connection: the connection is closed without an answer (Go's read
  deadline fires and ``isCommonNetReadError`` means "don't reply");
* an ``Expect`` other than ``100-continue``: 417 with an empty body (:func:`expect_handler`);
* an idle kept-alive connection is closed after :data:`IDLE_TIMEOUT` seconds (aiohttp's keep-alive timeout).

Each plain-text refusal is written as Go's exact bytes (:func:`go_wire`; the status line always says ``HTTP/1.1``,
as Go's does) and the connection is closed; the 417 is an aiohttp response with Go's status, ``Connection: close``
and empty body. Everything that reaches the lab's handlers answers with a Status
(:mod:`observatory.lab.api`); a handler exception that escapes them still becomes kube-apiserver's 500
InternalError Status here, never aiohttp's text page.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import HttpVersion11, web, web_protocol
from aiohttp.http_exceptions import HttpProcessingError, LineTooLong
from aiohttp.web_request import BaseRequest

from observatory.lab import errors
from observatory.lab.encoding import go_json

log = logging.getLogger(__name__)

MAX_HEADER_BYTES = 1 << 20
"""kube-apiserver's ``MaxHeaderBytes`` (secure_serving.go)."""

HEADER_READ_LIMIT = MAX_HEADER_BYTES + 4096
"""Bytes of request line and headers Go reads before ``errTooLarge``: ``initialReadLimitSize()`` is
``MaxHeaderBytes + 4096``."""

READ_HEADER_TIMEOUT = 32.0
"""kube-apiserver's ``ReadHeaderTimeout`` in seconds ("just shy of requestTimeoutUpperBound")."""

IDLE_TIMEOUT = 90.0
"""kube-apiserver's ``IdleTimeout`` in seconds ("matches http.DefaultTransport keep-alive timeout")."""

RST_AVOIDANCE_DELAY = 0.5
"""Go's ``rstAvoidanceDelay``: how long ``closeWriteAndWait`` waits after shutting the write side."""

GO_ERROR_HEADERS = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
"""``errorHeaders`` of ``conn.serve`` in net/http/server.go."""

TOO_LARGE_WIRE = f"HTTP/1.1 431 Request Header Fields Too Large{GO_ERROR_HEADERS}431 Request Header Fields Too Large"\
    .encode()
"""The exact bytes Go writes for ``errTooLarge``."""


UNSUPPORTED_TE_WIRE = f"HTTP/1.1 501 Not Implemented{GO_ERROR_HEADERS}Unsupported transfer encoding".encode()
"""What Go writes for a request whose ``Transfer-Encoding`` is not exactly ``chunked`` (``isUnsupportedTEError``;
it does not echo the value back)."""


def go_wire(code: int, text: str, detail: str = "") -> bytes:
    """The bytes Go's ``conn.serve`` writes for a request it refuses: ``HTTP/1.1 <code> <text>[: <detail>]``,
    :data:`GO_ERROR_HEADERS`, and the same ``<code> <text>[: <detail>]`` as the body (a ``statusError`` carries its
    detail on both; the bare 400 and 431 have none)."""
    line = f"{code} {text}: {detail}" if detail else f"{code} {text}"
    return f"HTTP/1.1 {line}{GO_ERROR_HEADERS}{line}".encode()


def write_refusal(protocol: web_protocol.RequestHandler | None, wire: bytes) -> web.Response:
    """Write ``wire`` as the whole answer and close the connection, as Go does after writing it; the returned
    placeholder is never sent (aiohttp finds the connection closed and drops it)."""
    transport = protocol.transport if protocol is not None else None
    if transport is not None:
        transport.write(wire)
    if protocol is not None:
        protocol.force_close()
    return web.Response(status=400)


_PARSER_DETAILS = (
    ("Missing 'Host' header", "missing required Host header"),
    ("Duplicate 'Host' header", "too many Host headers"),
    ("Invalid header value", "invalid header value"),
    ("Invalid header name", "invalid header name"),
)
"""aiohttp parser errors that are Go ``badRequestError``s, and Go's texts for them (net/http ``readRequest``)."""


def _has_control(value: str) -> bool:
    """Whether a header value fails httpguts.ValidHeaderFieldValue: a CTL other than horizontal tab, or DEL."""
    return any((c < " " and c != "\t") or c == "\x7f" for c in value)


def go_request_error(request: web.Request) -> bytes | None:
    """Go's ``readRequest`` refusal of a request aiohttp's parser let through, as :func:`go_wire` bytes, or None:
    a protocol other than HTTP/1.x (505 ``unsupported protocol version``), a ``Transfer-Encoding`` other than
    ``chunked`` alone (501, :data:`UNSUPPORTED_TE_WIRE`), an HTTP/1.1 request without ``Host``
    (CONNECT exempt), more than one ``Host``, or a header value with a control character."""
    if request.version.major != 1:
        return go_wire(505, "HTTP Version Not Supported", "unsupported protocol version")
    encodings = request.headers.getall("Transfer-Encoding", [])
    if encodings and (len(encodings) > 1 or encodings[0].strip().lower() != "chunked"):
        return UNSUPPORTED_TE_WIRE
    hosts = request.headers.getall("Host", [])
    if request.version >= HttpVersion11 and not hosts and request.method != "CONNECT":
        return go_wire(400, "Bad Request", "missing required Host header")
    if len(hosts) > 1:
        return go_wire(400, "Bad Request", "too many Host headers")
    for _, raw in request.raw_headers:
        if _has_control(raw.decode("latin-1")):
            return go_wire(400, "Bad Request", "invalid header value")
    return None


async def expect_handler(request: web.Request) -> web.StreamResponse | None:
    """``Expect`` as Go's ``conn.serve`` treats it, for every route: ``100-continue`` (a token, any case) on an
    HTTP/1.1 request with a body gets ``100 Continue`` before the body is read; any other ``Expect`` gets
    ``w.sendExpectationFailed()``: 417 with ``Connection: close`` and an empty body, the request never reaching a
    handler. (aiohttp's default answers 417 with a text that cannot carry a non-UTF-8 value.)"""
    expect = request.headers.get("Expect", "")
    if any(token.strip().lower() == "100-continue" for token in expect.split(",")):
        if request.version >= HttpVersion11 and request.content_length != 0:
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            request.writer.output_size = 0  # the answer proper has not started
        return None
    response = web.Response(status=417, headers={"Connection": "close"})
    response.force_close()
    return response


class GoLikeRequestHandler(web_protocol.RequestHandler):
    """aiohttp's connection protocol with Go's header limits, header read timeout and plain-text refusals."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._header_bytes = 0
        self._header_tail = b""
        self._between_requests = False
        self._refused = False

    # -- header read timeout and size --------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._start_header_clock()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._stop_header_clock()
        super().connection_lost(exc)

    def _start_header_clock(self) -> None:
        self._stop_header_clock()
        self._header_bytes = 0
        self._header_tail = b""
        self._header_timer = asyncio.get_running_loop().call_later(READ_HEADER_TIMEOUT, self._header_timeout)

    def _stop_header_clock(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        """The request's headers did not arrive in time: close without an answer, as Go does."""
        self._header_timer = None
        if self._request_in_progress or self._messages:
            return  # a request is being served: its headers were read
        self.force_close()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # after a 431, read and drop what the client still sends, as closeWriteAndWait does
        if self._between_requests and data:
            self._between_requests = False
            self._start_header_clock()  # the first bytes of the next request: its header deadline starts
        reading_headers = self._header_timer is not None
        if reading_headers and self._header_bytes + len(data) > HEADER_READ_LIMIT and not self._headers_end_within(
                data):
            self._refuse_too_large()  # the parser never sees more than Go would read
            return
        before = self._request_count
        super().data_received(data)
        if not reading_headers:
            return
        if self._request_count != before:
            self._stop_header_clock()  # a request (or a parse error) came out of the parser: its headers are read
            return
        self._header_bytes += len(data)
        self._header_tail = (self._header_tail + data)[-3:]

    def _headers_end_within(self, data: bytes) -> bool:
        """Whether the blank line ending the headers arrives in ``data`` within :data:`HEADER_READ_LIMIT` bytes of
        the request's start (``\\r\\n\\r\\n``, or ``\\n\\n`` as Go's textproto also reads)."""
        joined = self._header_tail + data
        ends = [i + len(t) for t in (b"\r\n\r\n", b"\n\n") if (i := joined.find(t)) >= 0]
        return bool(ends) and self._header_bytes - len(self._header_tail) + min(ends) <= HEADER_READ_LIMIT

    def _refuse_too_large(self) -> None:
        """Write Go's 431 bytes, shut the write side, and close after :data:`RST_AVOIDANCE_DELAY`."""
        self._stop_header_clock()
        self._refused = True
        transport = self.transport
        if transport is None:
            return
        transport.write(TOO_LARGE_WIRE)
        if transport.can_write_eof():
            transport.write_eof()
        asyncio.get_running_loop().call_later(RST_AVOIDANCE_DELAY, self.force_close)

    async def finish_response(self, request: BaseRequest, resp: web.StreamResponse,
                              start_time: float | None) -> tuple[web.StreamResponse, bool]:
        result = await super().finish_response(request, resp, start_time)
        self._between_requests = True
        return result

    # -- answers to what never reached a handler ----------------------------------------------------------------

    def handle_error(self, request: BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        """A request the parser refused gets Go's plain-text answer (431 for a line or headers too long, 400
        otherwise); an exception that escaped the handlers gets kube-apiserver's 500 InternalError Status."""
        if request.writer.output_size > 0:
            raise ConnectionError("the response was already started; the connection is dropped")
        if isinstance(exc, HttpProcessingError):
            if isinstance(exc, LineTooLong) or "Too many headers" in str(exc):
                return write_refusal(self, TOO_LARGE_WIRE)
            if "invalid `Transfer-Encoding`" in str(exc):
                return write_refusal(self, UNSUPPORTED_TE_WIRE)
            detail = next((go for text, go in _PARSER_DETAILS if text in str(exc)), "")
            return write_refusal(self, go_wire(400, "Bad Request", detail))
        log.error("unhandled error serving a request", exc_info=exc)
        status_error = errors.internal_error((str(exc) or type(exc).__name__) if exc else "unknown error")
        response = web.Response(body=go_json(status_error.status), status=500, content_type="application/json")
        response.force_close()
        return response


class GoLikeServer(web.Server):
    """aiohttp's ``Server`` whose connections are :class:`GoLikeRequestHandler`."""

    def __call__(self) -> GoLikeRequestHandler:
        return GoLikeRequestHandler(self, loop=asyncio.get_running_loop(), **self._kwargs)


class GoLikeAppRunner(web.AppRunner):
    """An ``AppRunner`` serving ``app`` through :class:`GoLikeServer`, with Go's limits as parser settings: a request
    line or one header up to :data:`HEADER_READ_LIMIT` bytes (the total is checked by the handler), as many headers
    as fit, and kube-apiserver's idle timeout as aiohttp's keep-alive timeout."""

    def __init__(self, app: web.Application, **kwargs: Any) -> None:
        kwargs.setdefault("max_line_size", HEADER_READ_LIMIT)
        kwargs.setdefault("max_field_size", HEADER_READ_LIMIT)
        kwargs.setdefault("max_headers", HEADER_READ_LIMIT // 4)  # each header line is at least "a:\r\n"
        kwargs.setdefault("keepalive_timeout", IDLE_TIMEOUT)
        super().__init__(app, **kwargs)

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        return GoLikeServer(server.request_handler, request_factory=server.request_factory,
                            handler_cancellation=server.handler_cancellation, **server._kwargs)
