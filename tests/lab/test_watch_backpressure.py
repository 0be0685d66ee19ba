"""A watch whose client stops reading is closed, as kube-apiserver closes an unresponsive cacheWatcher, while a
watch that keeps reading goes on (apiserver ``pkg/storage/cacher/cache_watcher.go`` ``add``).

The lab runs in this process (the ``lab`` fixture) with the smallest queue limit the settings allow, 100 changes.
The slow client is a raw socket with a 4 KiB receive buffer that reads the response headers and then nothing; each
change is about 200 KB (the pod carries a large annotation), so the kernel's buffers fill after a few of them and
the lab's write to that client blocks. Waits are on conditions, never on fixed sleeps.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket

import aiohttp
import pytest

from observatory.settings import LabSettings
from tests.conftest import API_ONLY
from tests.waiting import eventually

FILLER = "x" * 200_000
"""One annotation of 200 KB: below the 256 KiB total annotations may have, large enough to fill socket buffers."""
SMP = "application/strategic-merge-patch+json"
UNRESPONSIVE = ('Forcing pods watcher close due to unresponsiveness: key: "/pods/default", labels: "", fields: "". '
                "len(c.input) = 100, len(c.result) = 0, graceful = false")
"""The cacher's klog line (``cache_watcher.go`` ``add``), with the lab's one queue standing for ``input``."""


@pytest.fixture
def lab_settings() -> LabSettings:
    return LabSettings(watch_queue_limit=100, **API_ONLY)


async def open_slow_watch(url: str, path: str) -> socket.socket:
    """A watch on a socket that reads the status line and headers, then stops reading."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (host, int(port)))
    await loop.sock_sendall(sock, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = await loop.sock_recv(sock, 1)
        assert chunk, "the lab closed the watch before answering"
        head += chunk
    assert head.startswith(b"HTTP/1.1 200 "), head
    return sock


async def read_to_end(sock: socket.socket) -> str:
    """Read what is left on ``sock`` until the lab ends the connection: "eof" or "reset"."""
    loop = asyncio.get_running_loop()
    try:
        while await loop.sock_recv(sock, 65536):
            pass
    except ConnectionResetError:
        return "reset"
    return "eof"


async def test_a_watcher_that_stops_reading_is_closed_and_a_fast_one_keeps_going(lab, http, caplog):
    caplog.set_level(logging.INFO, logger="observatory.lab.store")
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "annotations": {"filler": FILLER}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}
    async with http.post("/api/v1/namespaces/default/pods", json=body) as resp:
        assert resp.status == 201, await resp.text()
        rv = (await resp.json())["metadata"]["resourceVersion"]
    path = f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}"
    slow = await open_slow_watch(lab.url, path)
    seen: list[str] = []

    async def fast() -> None:
        async with aiohttp.ClientSession(base_url=lab.url, read_bufsize=1 << 20) as session:
            async with session.get(path, timeout=aiohttp.ClientTimeout(total=None)) as resp:
                assert resp.status == 200
                async for line in resp.content:
                    seen.append(json.loads(line)["object"]["metadata"]["labels"]["seq"])

    reader = asyncio.create_task(fast())
    try:
        await eventually(lambda: lab.store.watcher_count == 2, "both watches to open")
        sent = 0
        while not any(r.getMessage() == UNRESPONSIVE for r in caplog.records):
            assert sent < 1000, "the slow watcher was never closed"
            sent += 1
            patch = {"metadata": {"labels": {"seq": str(sent)}}}
            async with http.patch("/api/v1/namespaces/default/pods/big", json=patch,
                                  headers={"Content-Type": SMP}) as resp:
                assert resp.status == 200, await resp.text()
        # The lab cut the stuck connection; the slow client finds the end of its stream behind what it buffered.
        assert await asyncio.wait_for(read_to_end(slow), 30) in ("eof", "reset")
        await eventually(lambda: lab.store.watcher_count == 1, "the slow watch to be gone")
        patch = {"metadata": {"labels": {"seq": "last"}}}
        async with http.patch("/api/v1/namespaces/default/pods/big", json=patch,
                              headers={"Content-Type": SMP}) as resp:
            assert resp.status == 200
        await eventually(lambda: seen and seen[-1] == "last", "the fast watch to see the last change", timeout=30)
        assert seen == [str(i) for i in range(1, sent + 1)] + ["last"]  # every change, once, in order
        assert not reader.done()
    finally:
        reader.cancel()
        slow.close()
