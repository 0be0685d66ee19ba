"""A tiny HTTP forward proxy on loopback that records what clients ask it, for the proxy and race tests.

It speaks the two forms an HTTP client uses with a proxy (RFC 9112 §3.2.2, RFC 9110 §9.3.6):

* absolute-form, for ``http://`` servers: ``GET http://host:port/path HTTP/1.1``. The proxy opens a connection to
  ``host:port``, sends the request in origin-form (``GET /path HTTP/1.1``) with ``Connection: close`` and pipes the
  answer back; one request per client connection.
* ``CONNECT host:port HTTP/1.1``, for ``https://`` servers: it answers ``200 Connection established`` and then pipes
  bytes both ways (the TLS handshake is between the client and the server).

``hosts`` maps a requested host name to the address to dial (so a test can use a name no resolver knows, such as
``lab.observatory.test``, which only the proxy "resolves"); ``requests`` records ``(method, target)`` of every
request head, in arrival order. ``deny`` answers every request with that status (e.g. 403) instead of forwarding.
``gate(predicate, count)`` holds every request for which ``predicate(method, target)`` is true until ``count`` of
them have arrived, then forwards them all at once: a barrier that makes concurrent clients race at the server.
With ``rank(method, target, headers)``, the held requests go in rank order instead, each rank once every lower one
has had its answer: a race whose outcome the test chooses.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

__all__ = ["ForwardProxy"]


class ForwardProxy:
    def __init__(self, hosts: dict[str, str] | None = None, deny: int | None = None) -> None:
        self.hosts = dict(hosts or {})
        self.deny = deny
        self.requests: list[tuple[str, str]] = []
        self.url = ""
        self.port = 0
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task] = set()
        self._gate: tuple[Callable[[str, str], bool], int] | None = None
        self._rank: Callable[[str, str, list[str]], int] | None = None
        self._unfinished: dict[int, int] = {}
        self._turn = asyncio.Condition()
        self._held = 0
        self._open = asyncio.Event()
        self._writers: set[asyncio.StreamWriter] = set()
        self._stopping = False

    def gate(self, predicate: Callable[[str, str], bool], count: int,
             rank: Callable[[str, str, list[str]], int] | None = None) -> None:
        """Hold matching requests until ``count`` of them are waiting, then release them together (or by ``rank``,
        see the module docstring)."""
        self._gate, self._held, self._rank, self._unfinished = (predicate, count), 0, rank, {}
        self._open = asyncio.Event()

    @property
    def held(self) -> int:
        return self._held

    async def start(self) -> ForwardProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    async def stop(self) -> None:
        """Stop listening and end every open connection (closing sockets rather than cancelling the handlers,
        whose cancellation Python 3.11's stream server logs as an error)."""
        self._stopping = True
        if self._server is not None:
            self._server.close()
        self._open.set()
        async with self._turn:
            self._turn.notify_all()
        for writer in list(self._writers):
            writer.close()
        if self._tasks:
            _, pending = await asyncio.wait(list(self._tasks), timeout=5)
            for task in pending:
                task.cancel()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def __aenter__(self) -> ForwardProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ", 2)
        headers = [line for line in lines[1:] if line]
        self.requests.append((method, target))
        if self.deny is not None:
            writer.write(f"HTTP/1.1 {self.deny} Denied by the test proxy\r\nContent-Type: text/plain\r\n"
                         "Content-Length: 7\r\nConnection: close\r\n\r\ndenied\n".encode())
            await writer.drain()
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            up_reader, up_writer = await asyncio.open_connection(self.hosts.get(host, host), int(port))
            self._writers.add(up_writer)
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            try:
                await _pipe_both(reader, writer, up_reader, up_writer)
            finally:
                self._writers.discard(up_writer)
            return
        # absolute-form: http://host[:port]/path
        rest = target.split("://", 1)[1]
        hostport, slash, path = rest.partition("/")
        host, _, port = hostport.partition(":")
        body = await _read_body(reader, headers)
        rank = None
        if self._gate is not None and self._gate[0](method, target):
            rank = self._rank(method, target, headers) if self._rank else 0
            self._unfinished[rank] = self._unfinished.get(rank, 0) + 1
            self._held += 1
            if self._held >= self._gate[1]:
                self._open.set()
            await self._open.wait()
            async with self._turn:
                await self._turn.wait_for(lambda: self._stopping or not any(
                    n for r, n in self._unfinished.items() if r < rank))
        if self._stopping:
            return
        try:
            await self._forward(writer, method, host, port, slash + path, version, headers, body)
        finally:
            if rank is not None:
                async with self._turn:
                    self._unfinished[rank] -= 1
                    self._turn.notify_all()

    async def _forward(self, writer: asyncio.StreamWriter, method: str, host: str, port: str, path: str,
                       version: str, headers: list[str], body: bytes) -> None:
        up_reader, up_writer = await asyncio.open_connection(self.hosts.get(host, host), int(port or 80))
        self._writers.add(up_writer)
        kept = [h for h in headers if h.split(":", 1)[0].strip().lower()
                not in ("connection", "proxy-connection", "proxy-authorization", "keep-alive")]
        up_writer.write((f"{method} {path} {version}\r\n" + "".join(f"{h}\r\n" for h in kept)
                         + "Connection: close\r\n\r\n").encode("latin-1") + body)
        await up_writer.drain()
        try:
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            self._writers.discard(up_writer)
            up_writer.close()


async def _read_body(reader: asyncio.StreamReader, headers: list[str]) -> bytes:
    """The request body as it came: ``Content-Length`` bytes, or the raw chunked encoding up to its last chunk
    (kubectl ``create --raw -f`` streams the file chunked)."""
    names = {h.split(":", 1)[0].strip().lower(): h.split(":", 1)[1].strip() for h in headers if ":" in h}
    if "chunked" in names.get("transfer-encoding", "").lower():
        raw = b""
        while True:
            line = await reader.readuntil(b"\r\n")
            raw += line
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                    raw += trailer
                return raw + b"\r\n"
            raw += await reader.readexactly(size + 2)
    length = int(names.get("content-length", "0") or 0)
    return await reader.readexactly(length) if length else b""


async def _pipe_both(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     up_reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter) -> None:
    async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                dst.write_eof() if dst.can_write_eof() else dst.close()

    try:
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
    finally:
        up_writer.close()
