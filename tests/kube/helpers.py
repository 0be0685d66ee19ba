"""Polling, delta collection and small scripted HTTP servers for the kube tests (no fixed sleeps)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from observatory.lab.kubeconfig import write_kubeconfig
from observatory.model.deltas import Deleted, Relisted, Upserted, WatchState
from tests.waiting import eventually


async def until(condition: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
    """Poll ``condition`` until it is truthy (returned) or ``timeout`` seconds pass (AssertionError)."""
    return await eventually(condition, what, timeout)


class Collector:
    """Runs an async iterator of deltas in a task and keeps everything it yields in ``deltas``."""

    def __init__(self, stream: AsyncIterator[Any]) -> None:
        self.deltas: list[Any] = []
        self._stream = stream
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for delta in self._stream:
            self.deltas.append(delta)

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        if self._task.done() and not self._task.cancelled() and self._task.exception():
            raise self._task.exception()  # type: ignore[misc]

    # views
    def states(self) -> list[str]:
        return [d.state for d in self.deltas if isinstance(d, WatchState)]

    def last_state(self) -> WatchState | None:
        return next((d for d in reversed(self.deltas) if isinstance(d, WatchState)), None)

    def relists(self) -> list[Relisted]:
        return [d for d in self.deltas if isinstance(d, Relisted)]

    def events(self) -> list[tuple[str, str]]:
        """``(type, name)`` of each Upserted (its change) and Deleted ("DELETED"), in order."""
        out = []
        for d in self.deltas:
            if isinstance(d, Upserted):
                out.append((d.change, d.obj["metadata"]["name"]))
            elif isinstance(d, Deleted):
                out.append(("DELETED", d.obj["metadata"]["name"]))
        return out

    def model(self) -> dict[str, dict[str, Any]]:
        """The objects by ``namespace/name`` as a consumer applying the deltas would hold them."""
        objs: dict[str, dict[str, Any]] = {}
        for d in self.deltas:
            if isinstance(d, Relisted):
                objs = {_key(o): dict(o) for o in d.objs}
            elif isinstance(d, Upserted):
                objs[_key(d.obj)] = dict(d.obj)
            elif isinstance(d, Deleted):
                objs.pop(_key(d.obj), None)
        return objs


def _key(obj: Any) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def pod(name: str, namespace: str = "sched-lab", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def rewrite_kubeconfig(src: Path, dst: Path, **changes: Any) -> Path:
    """Copy a kubeconfig, applying ``server``, ``token``, ``namespace`` or ``drop_ca`` to its only entries."""
    doc = yaml.safe_load(src.read_text())
    cluster, user, ctx = doc["clusters"][0]["cluster"], doc["users"][0]["user"], doc["contexts"][0]["context"]
    if "server" in changes:
        cluster["server"] = changes["server"]
    if "token" in changes:
        user["token"] = changes["token"]
    if "namespace" in changes:
        ctx["namespace"] = changes["namespace"]
    if changes.get("drop_ca"):
        cluster.pop("certificate-authority-data", None)
    dst.write_text(yaml.safe_dump(doc))
    return dst


def loopback_url(url: str) -> str:
    """A TLS lab's URL with the host replaced by 127.0.0.1 (which its certificate names)."""
    return "https://127.0.0.1:" + url.rsplit(":", 1)[1]


class FakeAPI:
    """A scripted API server for one resource path family: ``/api/v1/pods`` and ``/api/v1/namespaces/*/pods``.

    ``list_script`` and ``watch_script`` are queues of responses used one per request; when a queue is empty a list
    answers with ``items`` at ``rv`` and a watch stays open sending nothing until the server stops. A scripted
    response is a ``web.StreamResponse`` factory ``async (request) -> response`` or a tuple ``(status, headers,
    body)``; a watch response may also be a list of event dicts sent as lines and then ended cleanly.
    ``requests`` records ``(method, path_qs)`` of each request, ``bodies`` the raw bodies received.
    """

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.rv = "100"
        self.list_script: list[Any] = []
        self.watch_script: list[Any] = []
        self.requests: list[tuple[str, str]] = []
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.post_response: tuple[int, list[tuple[str, str]], bytes] = (201, [], b"{}")
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._open: set[web.StreamResponse] = set()
        self._stopping = asyncio.Event()

    async def start(self) -> FakeAPI:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()

    def kubeconfig(self, path: Path, namespace: str = "default") -> Path:
        return write_kubeconfig(path, self.url, token="fake-token-123456", namespace=namespace)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.method, request.path_qs))
        if request.method == "POST":
            self.received.append((dict(request.headers), await request.read()))
            status, headers, body = self.post_response
            response = web.Response(status=status, body=body)
            for name, value in headers:
                response.headers.add(name, value)
            return response
        watching = request.query.get("watch") == "true"
        script = self.watch_script if watching else self.list_script
        if script:
            step = script.pop(0)
            if callable(step):
                return await step(request)
            if isinstance(step, list):
                return await self._stream(request, step, end=True)
            status, headers, body = step
            return web.Response(status=status, headers=headers, body=body if isinstance(body, bytes)
                                else json.dumps(body).encode())
        if watching:
            return await self._stream(request, [], end=False)
        return web.json_response({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": self.rv},
                                  "items": self.items})

    async def _stream(self, request: web.Request, events: list[dict[str, Any]], end: bool) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for event in events:
            await response.write(json.dumps(event).encode() + b"\n")
        if not end:
            with contextlib.suppress(asyncio.CancelledError, ConnectionResetError):
                await self._stopping.wait()
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response


async def silent_server() -> tuple[asyncio.AbstractServer, int]:
    """A TCP server that accepts connections and never answers: for timeouts."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            await reader.read(-1)
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
