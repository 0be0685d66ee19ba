"""The background churn of the scale benchmark: a process of its own writing to the lab over HTTP at a target rate.

Started by :class:`Churn` (``multiprocessing`` spawn, a pipe for commands). At start it lists the pods once and keeps
two pools: Running pods (their first container's name and restartCount) and unbound Pending default-scheduler pods,
for each of which it creates one FailedScheduling Event (``count: 1``) so the pool exists before anything is timed.
Then, on ``run``, it writes at ``rate`` writes per second until ``pause``; every write is one watch event:

``status`` mode (the background churn)
    alternately a strategic-merge PATCH of a Running pod's ``status.containerStatuses[].restartCount`` (a container
    restarted: ``/pods/NAME/status``) and a merge PATCH of a FailedScheduling Event's ``count`` and
    ``lastTimestamp`` (the scheduler tried again), round-robin over the pools;
``annotate`` mode (the fan-out measurement)
    a strategic-merge PATCH of a Running pod's ``bench.observatory.dev/sent`` annotation, whose value is the
    CLOCK_MONOTONIC nanoseconds just before the write was sent, so a watcher can compute delivery latency.

At most ``IN_FLIGHT`` requests are outstanding, so a slow server lowers the achieved rate instead of queueing writes.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import time
from multiprocessing.connection import Connection
from typing import Any

import aiohttp

IN_FLIGHT = 32
EVENT_POOL = 200
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
SPAWN = mp.get_context("spawn")


class Churn:
    """The churn process, driven from the benchmark: ``run(rate, mode)``, ``pause()`` -> summary, ``stop()``."""

    def __init__(self, url: str) -> None:
        self._conn, child = SPAWN.Pipe()
        self.process = SPAWN.Process(target=main, args=(child, url), daemon=True)
        self.process.start()
        self.pid = self.process.pid
        self.ready: dict[str, Any] = {}

    async def _ask(self, msg: dict[str, Any], timeout: float = 300.0) -> Any:
        loop = asyncio.get_running_loop()
        self._conn.send(msg)
        if not await loop.run_in_executor(None, self._conn.poll, timeout):
            raise TimeoutError(f"the churn process did not answer {msg['cmd']!r}")
        return self._conn.recv()

    async def setup(self) -> dict[str, Any]:
        self.ready = await self._ask({"cmd": "setup"})
        return self.ready

    async def run(self, rate: float, mode: str = "status") -> None:
        await self._ask({"cmd": "run", "rate": rate, "mode": mode})

    async def pause(self) -> dict[str, Any]:
        return await self._ask({"cmd": "pause"})

    def stop(self) -> None:
        try:
            self._conn.send({"cmd": "stop"})
        except (OSError, BrokenPipeError):
            pass
        self.process.join(15)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)


class _Writer:
    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session
        self.running: list[list[Any]] = []  # [namespace, name, container, restartCount]
        self.events: list[list[Any]] = []  # [namespace, name, count]
        self.sent = self.errors = 0
        self.seq = 0
        self.latencies: list[float] = []

    async def setup(self) -> dict[str, Any]:
        async with self.session.get("/api/v1/pods") as resp:
            pods = (await resp.json())["items"]
        pending = []
        for pod in pods:
            meta, spec, status = pod["metadata"], pod.get("spec", {}), pod.get("status", {})
            if status.get("phase") == "Running" and status.get("containerStatuses"):
                cs = status["containerStatuses"][0]
                self.running.append([meta["namespace"], meta["name"], cs["name"], cs.get("restartCount", 0)])
            elif (not spec.get("nodeName") and not spec.get("schedulingGates")
                  and spec.get("schedulerName", "default-scheduler") == "default-scheduler"):
                pending.append(pod)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for pod in pending[:EVENT_POOL]:
            meta = pod["metadata"]
            name = f"{meta['name']}.churn"
            event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": meta["namespace"]},
                     "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                                        "namespace": meta["namespace"], "uid": meta.get("uid", "")},
                     "reason": "FailedScheduling", "type": "Warning", "count": 1,
                     "message": "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are "
                                "available: 3 No preemption victims found for incoming pod.",
                     "source": {"component": "default-scheduler"}, "reportingComponent": "default-scheduler",
                     "firstTimestamp": now, "lastTimestamp": now}
            async with self.session.post(f"/api/v1/namespaces/{meta['namespace']}/events", json=event) as resp:
                await resp.read()
                if resp.status in (201, 409):
                    self.events.append([meta["namespace"], name, 1])
        return {"running_pool": len(self.running), "event_pool": len(self.events)}

    def _next(self, mode: str) -> tuple[str, bytes, str]:
        self.seq += 1
        if mode == "annotate" or not self.events or (self.seq % 2 and self.running):
            ns, name, container, restarts = target = self.running[self.seq % len(self.running)]
            if mode == "annotate":
                body = {"metadata": {"annotations": {"bench.observatory.dev/sent": str(time.monotonic_ns())}}}
                return f"/api/v1/namespaces/{ns}/pods/{name}", json.dumps(body).encode(), SMP
            target[3] = restarts + 1
            body = {"status": {"containerStatuses": [{"name": container, "restartCount": restarts + 1}]}}
            return f"/api/v1/namespaces/{ns}/pods/{name}/status", json.dumps(body).encode(), SMP
        ns, name, count = target = self.events[self.seq % len(self.events)]
        target[2] = count + 1
        body = {"count": count + 1, "lastTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        return f"/api/v1/namespaces/{ns}/events/{name}", json.dumps(body).encode(), MERGE

    async def _one(self, sem: asyncio.Semaphore, mode: str) -> None:
        path, body, ctype = self._next(mode)
        t = time.monotonic()
        try:
            async with self.session.patch(path, data=body, headers={"Content-Type": ctype}) as resp:
                await resp.read()
                if resp.status >= 300:
                    self.errors += 1
        except (aiohttp.ClientError, OSError):
            self.errors += 1
        finally:
            self.latencies.append(time.monotonic() - t)
            sem.release()

    async def run(self, rate: float, mode: str, stop: asyncio.Event) -> dict[str, Any]:
        sem = asyncio.Semaphore(IN_FLIGHT)
        tasks: set[asyncio.Task[None]] = set()
        sent0, errors0 = self.sent, self.errors
        self.latencies = []
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        sent = 0
        while not stop.is_set():
            due = int((loop.time() - t0) * rate) + 1
            while sent < due and not stop.is_set():
                await sem.acquire()
                task = asyncio.create_task(self._one(sem, mode))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                sent += 1
            next_at = t0 + sent / rate
            try:
                await asyncio.wait_for(stop.wait(), max(0.0, next_at - loop.time()))
            except TimeoutError:
                pass
        elapsed = loop.time() - t0
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self.sent = sent0 + sent
        lat = sorted(self.latencies)
        return {"mode": mode, "target_wps": rate, "writes": sent, "errors": self.errors - errors0,
                "seconds": elapsed, "achieved_wps": sent / elapsed if elapsed else 0.0,
                "patch_p50_s": lat[len(lat) // 2] if lat else None,
                "patch_p99_s": lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else None}


async def _serve(conn: Connection, url: str) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def receive() -> None:
        try:
            inbox.put_nowait(conn.recv())
        except (EOFError, OSError):
            loop.remove_reader(conn.fileno())
            inbox.put_nowait({"cmd": "stop"})

    loop.add_reader(conn.fileno(), receive)
    connector = aiohttp.TCPConnector(limit=IN_FLIGHT)
    async with aiohttp.ClientSession(base_url=url, connector=connector,
                                     timeout=aiohttp.ClientTimeout(total=120)) as session:
        writer = _Writer(session)
        running: asyncio.Task[dict[str, Any]] | None = None
        stop = asyncio.Event()
        while True:
            msg = await inbox.get()
            cmd = msg["cmd"]
            if cmd == "setup":
                conn.send(await writer.setup())
            elif cmd == "run":
                stop = asyncio.Event()
                running = asyncio.create_task(writer.run(msg["rate"], msg["mode"], stop))
                conn.send("ok")
            elif cmd == "pause":
                stop.set()
                conn.send(await running if running is not None else {})
                running = None
            elif cmd == "stop":
                stop.set()
                if running is not None:
                    await running
                break
    loop.remove_reader(conn.fileno())


def main(conn: Connection, url: str) -> None:
    """Process entry point (``multiprocessing`` spawn target)."""
    asyncio.run(_serve(conn, url))
