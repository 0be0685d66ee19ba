"""The screen over a server whose resourceVersions went backwards (restored from an older state after a crash):
from the moment the pods' reflector sees it until its relist has replaced what the screen holds, the header never
says ``pods live``; afterwards the pods equal the server's list, 0 ghosts and 0 missing."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.lab.kubeconfig import write_kubeconfig
from observatory.ui.app import ObservatoryApp
from tests.ui.helpers import until
from tests.ui.test_fault_recovery import record_header


def pod(name: str, rv: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": str(rv),
                         "creationTimestamp": "2026-11-29T09:00:00Z"},
            "spec": {"schedulerName": "default-scheduler", "containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Pending"}}


class RestoredServer:
    """Pods, nodes and events over HTTP. The first pods list is the state before the crash (RV 467, with pods the
    restore lost); the first pods watch then hands out 444.. again; the relist after it waits for ``release``."""

    def __init__(self) -> None:
        self.before = [pod(f"kept-{i}", 400 + i) for i in range(3)] + [pod(f"lost-{i}", 450 + i) for i in range(3)]
        self.reissued = [pod(f"new-{i}", 444 + i) for i in range(5)]
        self.truth = [pod(f"kept-{i}", 400 + i) for i in range(3)] + [pod("back-0", 420), *self.reissued]
        self.release = asyncio.Event()
        self.pod_lists = 0
        self.pod_watches = 0
        self.stopping = asyncio.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path == "/version":
            return web.json_response({"major": "1", "minor": "34", "gitVersion": "v1.34.1"})
        kind = path.rsplit("/", 1)[-1]
        watching = request.query.get("watch") == "true"
        if kind == "pods" and not watching:
            self.pod_lists += 1
            if self.pod_lists == 1:
                return self.listing("PodList", self.before, 467)
            await self.release.wait()
            return self.listing("PodList", self.truth, 448)
        if not watching:
            return self.listing(f"{kind[:-1].capitalize()}List", [], 467)
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        if kind == "pods":
            self.pod_watches += 1
            if self.pod_watches == 1:
                for obj in self.reissued:
                    await response.write(json.dumps({"type": "ADDED", "object": obj}).encode() + b"\n")
        with contextlib.suppress(asyncio.CancelledError, ConnectionResetError):
            await self.stopping.wait()
        return response

    @staticmethod
    def listing(kind: str, items: list[dict[str, Any]], rv: int) -> web.Response:
        return web.json_response({"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": str(rv)},
                                  "items": items})


@pytest.fixture
async def restored(tmp_path) -> AsyncIterator[tuple[RestoredServer, str]]:
    server = RestoredServer()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", server.handle)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    config = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}", namespace="default")
    try:
        yield server, str(config)
    finally:
        server.release.set()
        server.stopping.set()
        await runner.cleanup()


async def test_never_live_over_a_state_it_knows_is_stale(restored):
    server, config = restored
    connection = await connect(config)
    source = ClusterSource(connection, namespace=None, reflector_options={"backoff_initial": 0.01,
                                                                          "backoff_max": 0.05})
    app = ObservatoryApp(source, refresh_interval=0.05)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            seen = record_header(app)
            await until(pilot, lambda: server.pod_lists == 2, "the relist after the RV went backwards")
            await until(pilot, lambda: any("pods resyncing" in text for text in seen), "the header saying so")
            assert "default/lost-0" in app.main.state.pods  # still shown, but not as live
            after = seen[next(i for i, text in enumerate(seen) if "pods resyncing" in text):]
            assert not [text for text in after if "pods live" in text]
            server.release.set()
            await until(pilot, lambda: "pods live" in seen[-1], "live again after the relist")
            want = {f"default/{p['metadata']['name']}" for p in server.truth}
            assert set(app.main.state.pods) == want  # 0 ghosts, 0 missing
    finally:
        await source.close()
