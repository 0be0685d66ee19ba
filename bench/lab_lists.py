"""List every pod over real HTTP, five ways, and time each from request start to the whole answer in hand.

Each measurement returns ``(wall seconds, body bytes, item count)``; the caller repeats it and reads the server's
CPU clock around each call. Item counts are checked (every pod, no duplicates across pages).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from kubernetes_asyncio import client, config

TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
PAGE = 500

Measure = Callable[[], Awaitable[tuple[float, int, int]]]

CLIENT_DECODE_S: list[float] = []
"""``json.loads`` of each plain-list body in this (client) process, timed after (a)'s clock stops: information."""


class ListMismatch(RuntimeError):
    """A list that did not return every pod exactly once: the benchmark stops, the numbers would mean nothing."""


def _check(names: list[str], expected: int, what: str) -> None:
    if len(names) != expected or len(set(names)) != expected:
        raise ListMismatch(f"{what}: {len(names)} items, {len(set(names))} distinct, expected {expected}")


async def plain_json(session: aiohttp.ClientSession, expected: int) -> tuple[float, int, int]:
    """(a) ``GET /api/v1/pods``: one JSON PodList. Parsed after the clock stops, to check the count."""
    t0 = time.perf_counter()
    async with session.get("/api/v1/pods") as resp:
        body = await resp.read()
    wall = time.perf_counter() - t0
    resp.raise_for_status()
    d0 = time.perf_counter()
    items = json.loads(body)["items"]
    CLIENT_DECODE_S.append(time.perf_counter() - d0)
    _check([f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in items], expected, "plain list")
    return wall, len(body), len(items)


async def paged_json(session: aiohttp.ClientSession, expected: int) -> tuple[float, int, int]:
    """(b) ``?limit=500`` following ``continue`` to the end, as kubectl and client-go's pager do.

    Each page is decoded inside the timed loop, because the client needs the token to ask for the next one.
    """
    names: list[str] = []
    total = 0
    token = ""
    t0 = time.perf_counter()
    for _ in range(expected // PAGE + 2):
        params = {"limit": str(PAGE)}
        if token:
            params["continue"] = token
        async with session.get("/api/v1/pods", params=params) as resp:
            body = await resp.read()
        resp.raise_for_status()
        total += len(body)
        page = json.loads(body)
        names.extend(f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in page["items"])
        token = page["metadata"].get("continue", "")
        if not token:
            break
    wall = time.perf_counter() - t0
    _check(names, expected, "paged list")
    return wall, total, len(names)


async def table(session: aiohttp.ClientSession, expected: int) -> tuple[float, int, int]:
    """(c) The server-side Table kubectl asks for (one request, no paging), metadata-only row objects."""
    t0 = time.perf_counter()
    async with session.get("/api/v1/pods", headers={"Accept": TABLE_ACCEPT}) as resp:
        body = await resp.read()
    wall = time.perf_counter() - t0
    resp.raise_for_status()
    doc = json.loads(body)
    if doc.get("kind") != "Table":
        raise ListMismatch(f"Table request answered with kind {doc.get('kind')!r}")
    rows = doc["rows"]
    _check([f"{r['object']['metadata']['namespace']}/{r['cells'][0]}" for r in rows], expected, "Table")
    return wall, len(body), len(rows)


async def kubernetes_asyncio_client(kubeconfig: str) -> client.ApiClient:
    cfg = client.Configuration()
    await config.load_kube_config(config_file=kubeconfig, context="observatory-lab", client_configuration=cfg)
    return client.ApiClient(cfg)


async def k8s_asyncio_raw(api: client.ApiClient, expected: int) -> tuple[float, int, int]:
    """(d) ``CoreV1Api.list_pod_for_all_namespaces(_preload_content=False)``, body read and ``json.loads``-ed."""
    core = client.CoreV1Api(api)
    t0 = time.perf_counter()
    resp = await core.list_pod_for_all_namespaces(_preload_content=False)
    body = await resp.read()
    items = json.loads(body)["items"]
    wall = time.perf_counter() - t0
    resp.release()
    _check([f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in items], expected, "kubernetes-asyncio")
    return wall, len(body), len(items)


async def kubectl_names(kubeconfig: str, cache_dir: str, expected: int) -> tuple[float, int, int]:
    """(e) ``kubectl get pods -A -o name``: process start to exit, discovery served from a warm cache dir."""
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", kubeconfig, "--cache-dir", cache_dir, "get", "pods", "-A", "-o", "name",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise ListMismatch(f"kubectl exited {proc.returncode}: {err.decode()[:500]}")
    lines = out.decode().splitlines()
    if len(lines) != expected:
        raise ListMismatch(f"kubectl printed {len(lines)} names, expected {expected}")
    return wall, 0, len(lines)


async def repeat(measure: Measure, server_cpu: Callable[[], Awaitable[float]], reps: int,
                 warmup: bool = True) -> dict[str, Any]:
    """One warm-up (unless ``warmup`` is False), then ``reps`` timed runs; server CPU is read before and after each
    run, outside the clock."""
    if warmup:
        await measure()
    walls, cpus = [], []
    size = items = 0
    for _ in range(reps):
        c0 = await server_cpu()
        wall, size, items = await measure()
        cpus.append(await server_cpu() - c0)
        walls.append(wall)
    return {"walls": walls, "server_cpu": cpus, "bytes": size, "items": items}
