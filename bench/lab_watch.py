"""Watch fan-out: N plain-HTTP watchers on ``/api/v1/pods`` while pods are patched, and what each one received.

Watchers read the chunked stream with ``iter_any()`` and split lines themselves; a line's receive time is the
CLOCK_MONOTONIC time its chunk arrived. To keep the client cheap (it shares the 2 CPUs with the lab), the event type
and ``metadata.resourceVersion`` are cut out of each line with ``bytes.find`` (the lab writes ``type`` first and
ObjectMeta in upstream field order, so the first ``"resourceVersion":"`` is the object's); every 50th line is also
``json.loads``-ed and compared, and a line that fails either way counts as bad JSON.

The HTTP churn driver (:func:`http_churn_main`) runs in a process of its own and sends strategic-merge PATCHes at a
target rate with a bounded number in flight, so a slow server lowers the achieved rate instead of piling up requests.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

import aiohttp

from bench.lab_report import percentile
from bench.lab_server_proc import SMP, churn_patch

RV_KEY = b'"resourceVersion":"'
VERIFY_EVERY = 50
HTTP_IN_FLIGHT = 16


@dataclass
class WatchLog:
    """What one watcher received: (resourceVersion, receive ns) per event, and anything odd."""

    events: list[tuple[int, int]] = field(default_factory=list)
    types: dict[str, int] = field(default_factory=dict)
    bad_json: int = 0
    ended_early: bool = False
    error: str = ""

    @property
    def last_rv(self) -> int:
        return self.events[-1][0] if self.events else 0


def _parse_line(line: bytes, log: WatchLog, verify: bool) -> None:
    now = time.monotonic_ns()
    try:
        type_ = line[9:line.index(b'"', 9)].decode()  # {"type":"MODIFIED",...
        start = line.index(RV_KEY) + len(RV_KEY)
        rv = int(line[start:line.index(b'"', start)])
        if verify:
            doc = json.loads(line)
            if doc["type"] != type_ or int(doc["object"]["metadata"]["resourceVersion"]) != rv:
                raise ValueError("fast parse disagrees with json.loads")
    except (ValueError, KeyError, TypeError):
        log.bad_json += 1
        return
    log.types[type_] = log.types.get(type_, 0) + 1
    log.events.append((rv, now))


async def watch_one(session: aiohttp.ClientSession, rv: str, log: WatchLog, opened: list[int],
                    timeout_s: int) -> None:
    """Watch all pods from ``rv`` until cancelled; record into ``log``; append to ``opened`` once the 200 is in."""
    params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": str(timeout_s)}
    try:
        async with session.get("/api/v1/pods", params=params) as resp:
            if resp.status != 200:
                log.error = f"HTTP {resp.status}"
                return
            opened.append(1)
            buf = b""
            n = 0
            async for chunk in resp.content.iter_any():
                buf += chunk
                if b"\n" not in chunk:
                    continue
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if line:
                        n += 1
                        _parse_line(line, log, n % VERIFY_EVERY == 1)
            log.ended_early = True
    except asyncio.CancelledError:
        raise
    except (aiohttp.ClientError, OSError) as exc:
        log.error = f"{type(exc).__name__}: {exc}"
        log.ended_early = True


async def http_churn(url: str, refs: list[tuple[str, str]], rate: float, duration: float,
                     offset: int) -> dict[str, Any]:
    sem = asyncio.Semaphore(HTTP_IN_FLIGHT)
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    pending: set[asyncio.Task[None]] = set()
    headers = {"Content-Type": SMP}
    total = int(rate * duration)

    async def one(session: aiohttp.ClientSession, seq: int) -> None:
        ns, name = refs[(offset + seq) % len(refs)]
        try:
            t0 = time.perf_counter()
            async with session.patch(f"/api/v1/namespaces/{ns}/pods/{name}", data=churn_patch(offset + seq),
                                     headers=headers) as resp:
                await resp.read()
            latencies.append(time.perf_counter() - t0)
            statuses[resp.status] = statuses.get(resp.status, 0) + 1
        except (aiohttp.ClientError, OSError):
            statuses[0] = statuses.get(0, 0) + 1
        finally:
            sem.release()

    connector = aiohttp.TCPConnector(limit=HTTP_IN_FLIGHT)
    async with aiohttp.ClientSession(base_url=url, connector=connector) as session:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        sent = 0
        while sent < total:
            await asyncio.sleep(max(0.0, t0 + sent / rate - loop.time()))
            if loop.time() - t0 >= duration:
                break
            await sem.acquire()
            task = asyncio.create_task(one(session, sent))
            pending.add(task)
            task.add_done_callback(pending.discard)
            sent += 1
        if pending:
            await asyncio.wait(pending, timeout=30)
        elapsed = loop.time() - t0
    return {"writes": sent, "driver_s": elapsed, "statuses": statuses,
            "patch_latency_p50_s": percentile(latencies, 50), "patch_latency_p99_s": percentile(latencies, 99)}


def http_churn_main(conn: Connection, url: str, refs: list[tuple[str, str]], rate: float, duration: float,
                    offset: int) -> None:
    """Process entry point: say ``ready`` once imported, wait for ``go``, run the HTTP churn, send its summary."""
    conn.send("ready")
    if conn.recv() == "go":
        conn.send(asyncio.run(http_churn(url, refs, rate, duration, offset)))
    conn.close()


def analyse(logs: list[WatchLog], stamps: list[tuple[int, int]], list_rv: int) -> dict[str, Any]:
    """Latency per event per watcher, delivered rate, and the exactly-once-in-order check against the commits."""
    commit = dict(stamps)
    expected = {rv for rv in commit if rv > list_rv}
    latencies: list[float] = []
    dup = missing = disorder = unexpected = bad = early = 0
    first_commit = min(commit.values()) if commit else 0
    last_recv = first_commit
    for log in logs:
        seen: set[int] = set()
        prev = list_rv
        for rv, t in log.events:
            if rv in seen:
                dup += 1
            seen.add(rv)
            if rv <= prev:
                disorder += 1
            prev = max(prev, rv)
            if rv in commit:
                latencies.append((t - commit[rv]) / 1e9)
            else:
                unexpected += 1
            last_recv = max(last_recv, t)
        missing += len(expected - seen)
        bad += log.bad_json
        early += bool(log.ended_early or log.error)
    delivered = sum(len(log.events) for log in logs)
    span = (last_recv - first_commit) / 1e9 if delivered else 0.0
    commits = sorted(commit.values())
    write_span = (commits[-1] - commits[0]) / 1e9 if len(commits) > 1 else 0.0
    return {
        "writes_committed": len(commit),
        "events_delivered": delivered,
        "delivered_per_s": delivered / span if span else 0.0,
        "commit_span_s": write_span,
        "drain_after_last_commit_s": (last_recv - commits[-1]) / 1e9 if commits and delivered else None,
        "latency_p50_s": percentile(latencies, 50),
        "latency_p95_s": percentile(latencies, 95),
        "latency_p99_s": percentile(latencies, 99),
        "latency_max_s": max(latencies) if latencies else float("nan"),
        "correctness": {"events_checked": len(expected) * len(logs), "missing": missing, "duplicates": dup,
                        "out_of_order": disorder, "unexpected": unexpected, "bad_json": bad, "ended_early": early,
                        "ok": not (missing or dup or disorder or unexpected or bad or early)},
    }
