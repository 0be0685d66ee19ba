"""Raw HTTP/1.x against a lab: a lab served from its own thread (so synchronous tests, hypothesis among them, can
share one per module) and a socket client that sends exactly the bytes it is given and reads the answer as sent."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from observatory.embedded import EmbeddedLab

T = TypeVar("T")


class ThreadedLab:
    """An :class:`EmbeddedLab` running on an event loop in a background thread. ``call(fn)`` runs ``fn(lab)`` (a
    coroutine function) on that loop and returns its result, so the test reads the store while nothing else runs."""

    def __init__(self, lab: EmbeddedLab) -> None:
        self.lab = lab
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="lab", daemon=True)

    def __enter__(self) -> ThreadedLab:
        self._thread.start()
        self.call(lambda lab: lab.start())
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.call(lambda lab: lab.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
            self.loop.close()

    def call(self, fn: Callable[[EmbeddedLab], Coroutine[Any, Any, T]], timeout: float = 30) -> T:
        return asyncio.run_coroutine_threadsafe(fn(self.lab), self.loop).result(timeout)

    @property
    def port(self) -> int:
        return int(self.lab.url.rsplit(":", 1)[1])

    @property
    def ssl_context(self) -> ssl.SSLContext | None:
        if not self.lab.url.startswith("https:"):
            return None
        assert self.lab.ca_pem is not None
        return ssl.create_default_context(cadata=self.lab.ca_pem.decode("ascii"))


@dataclass
class Answer:
    """One HTTP answer: the raw bytes up to the end of the headers and beyond, and what they say."""

    raw: bytes
    status: int = 0
    status_line: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    complete: bool = True
    """False when the body was cut short on purpose (a watch stream is read only as far as its headers)."""


def _connect(lab: ThreadedLab, timeout: float) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", lab.port), timeout=timeout)
    context = lab.ssl_context
    if context is not None:
        return context.wrap_socket(sock, server_hostname="127.0.0.1")
    return sock


def read_all(lab: ThreadedLab, data: bytes, timeout: float = 10.0) -> bytes:
    """Send ``data`` and read until the server closes the connection (a reset after the answer counts as closing).
    Raises TimeoutError when the server neither answers nor closes within ``timeout`` seconds of silence."""
    with _connect(lab, timeout) as sock:
        sock.sendall(data)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:
            pass
        return b"".join(chunks)


def exchange(lab: ThreadedLab, data: bytes, timeout: float = 10.0) -> Answer:
    """Send ``data`` (one request) and read one answer: headers, then a body by Content-Length, chunks, or until
    the connection closes. A 200 streamed without a length (a watch) is read only as far as its headers."""
    with _connect(lab, timeout) as sock:
        sock.sendall(data)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                return _parse_head(buf, buf)
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        answer = _parse_head(buf, head)
        length = answer.headers.get("content-length")
        chunked = "chunked" in answer.headers.get("transfer-encoding", "")
        if length is None and answer.status == 200:
            answer.complete = False
            return answer
        while True:
            answer.raw = head + b"\r\n\r\n" + rest
            if length is not None and len(rest) >= int(length):
                answer.body = rest[:int(length)]
                return answer
            if chunked and rest.endswith(b"0\r\n\r\n"):
                answer.body = _dechunk(rest)
                return answer
            chunk = sock.recv(65536)
            if not chunk:
                answer.body = rest
                return answer
            rest += chunk


def _parse_head(raw: bytes, head: bytes) -> Answer:
    lines = head.decode("latin-1").split("\r\n")
    answer = Answer(raw=raw, status_line=lines[0])
    parts = lines[0].split(" ", 2)
    if len(parts) >= 2 and parts[1].isdigit():
        answer.status = int(parts[1])
    for line in lines[1:]:
        name, _, value = line.partition(":")
        answer.headers[name.strip().lower()] = value.strip()
    return answer


def _dechunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out, data = out + data[:size], data[size + 2:]
    return out


def request(method: str, target: str | bytes, *, headers: dict[str, bytes | str] | None = None, body: bytes = b"",
            version: str = "HTTP/1.1") -> bytes:
    """The bytes of one request that asks the server to close the connection after answering."""
    raw_target = target if isinstance(target, bytes) else target.encode("utf-8", "surrogateescape")
    lines = [method.encode() + b" " + raw_target + b" " + version.encode(), b"Host: 127.0.0.1"]
    for name, value in (headers or {}).items():
        raw = value if isinstance(value, bytes) else value.encode("latin-1", "replace")
        lines.append(name.encode("latin-1") + b": " + raw)
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(b"Content-Length: " + str(len(body)).encode())
    lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n" + body
