"""The lab for the scale benchmark: ``observatory lab serve --scenario scale:...`` as a subprocess, and what the
benchmark does to it over HTTP (the probe writes, the 10k-pod list, the watch fan-out), plus /proc readings.

The lab is started exactly as a user starts it (``python -m observatory lab serve``), with the simulated scheduler,
kubelets, pod GC and node lifecycle off (``--no-scheduler --no-kubelet`` and ``OBSERVATORY_LAB__PODGC=false``,
``OBSERVATORY_LAB__NODE_LIFECYCLE=false``), so the only writes are the benchmark's. It listens on 127.0.0.1 with a
random port and plain HTTP (no token on loopback); the kubeconfig it writes is the one observatory and kubectl use.

Every time here is ``time.monotonic()`` (CLOCK_MONOTONIC), one clock for every process on the machine, so a send
time taken here can be subtracted from a paint time taken in the app's process or a line's arrival time.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

PROBE_NAMESPACE = "default"
"""Probe pods live here: the scale scenario has no pods in it, and it sorts before every team namespace, so a probe
row is the first row of the pending pane (visible without scrolling)."""
PROBE_NODE = "scale-node-0001"
PROBE_MESSAGE = ("0/{n} nodes are available: {n} Insufficient cpu. preemption: 0/{n} nodes are available: {n} No "
                 "preemption victims found for incoming pod.")
"""kube-scheduler's FitError text (``pkg/scheduler/framework/types.go``) for the probe's FailedScheduling event."""
CLK_TCK = os.sysconf("SC_CLK_TCK")
LAB_READY_TIMEOUT_S = 600.0


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (``/proc/PID/stat`` utime + stime), NaN if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_mem_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak RSS) of process ``pid`` in KiB, from ``/proc/PID/status``; empty if it is gone."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


class CpuMeter:
    """CPU% of several processes over a window: ``start()``, then ``stop()`` -> {name: percent of one core}."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self._t0 = 0.0
        self._cpu0: dict[str, float] = {}

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._cpu0 = {name: proc_cpu_s(pid) for name, pid in self.pids.items()}

    def stop(self) -> dict[str, float]:
        wall = time.monotonic() - self._t0
        return {name: 100.0 * (proc_cpu_s(pid) - self._cpu0[name]) / wall for name, pid in self.pids.items()}


class LabProcess:
    """``observatory lab serve --scenario scale:nodes=N,pods=M`` in a subprocess; ``url``, ``kubeconfig``, ``pid``,
    ``start_s`` (process start until it printed its kubeconfig: generating and loading the scenario)."""

    def __init__(self, nodes: int, pods: int, workdir: Path, audit_log: Path | None = None) -> None:
        """``audit_log``: also ``--audit-log-path FILE`` (the lab's default audit policy: pod writes at
        RequestResponse), for the audit variant of the benchmark."""
        self.nodes, self.pods = nodes, pods
        self.audit_log = audit_log
        kubeconfig = workdir / f"lab-{nodes}-{pods}.kubeconfig"
        env = {**os.environ, "OBSERVATORY_LAB__PODGC": "false", "OBSERVATORY_LAB__NODE_LIFECYCLE": "false",
               "OBSERVATORY_LAB__HISTORY_SIZE": "100000", "PYTHONUNBUFFERED": "1"}
        env.pop("KUBECONFIG", None)
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "observatory", "lab", "serve", "--scenario", f"scale:nodes={nodes},pods={pods}",
             "--no-scheduler", "--no-kubelet", "--kubeconfig-out", str(kubeconfig),
             *(["--audit-log-path", str(audit_log)] if audit_log is not None else [])],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
        self.pid = self.proc.pid
        self.url = ""
        assert self.proc.stdout is not None
        deadline = t0 + LAB_READY_TIMEOUT_S
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read() if self.proc.stderr else ""
                raise RuntimeError(f"the lab exited before it was ready: {err.strip()[-2000:]}")
            if line.startswith("Lab API server:"):
                self.url = line.split(":", 1)[1].strip()
            elif line.startswith("Kubeconfig:"):
                break
        else:
            self.stop()
            raise RuntimeError("the lab did not start in time")
        self.start_s = time.monotonic() - t0
        self.kubeconfig = kubeconfig

    def mem(self) -> dict[str, int]:
        return proc_mem_kib(self.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


# -- the probe writes ------------------------------------------------------------------------------------------------


def _stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class ProbeWriter:
    """The four kinds of write whose reflect latency is measured, on one probe pod at a time, over HTTP."""

    session: aiohttp.ClientSession
    nodes: int
    uids: dict[str, str] = field(default_factory=dict)

    async def _send(self, method: str, path: str, body: Any, content_type: str = "application/json") -> float:
        """Send one write; return the CLOCK_MONOTONIC time just before it was sent. Raises on a non-2xx answer."""
        data = json.dumps(body).encode() if body is not None else None
        t = time.monotonic()
        async with self.session.request(method, path, data=data, headers={"Content-Type": content_type}) as resp:
            text = await resp.read()
            if resp.status >= 300:
                raise RuntimeError(f"{method} {path}: {resp.status} {text[:300]!r}")
            if method == "POST" and path.endswith("/pods"):
                self.uids[body["metadata"]["name"]] = json.loads(text)["metadata"]["uid"]
        return t

    async def create(self, name: str) -> float:
        """A new unbound default-scheduler pod (the pending pane shows "no scheduler has looked")."""
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": PROBE_NAMESPACE, "labels": {"app": "bench-probe"}},
               "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}
        return await self._send("POST", f"/api/v1/namespaces/{PROBE_NAMESPACE}/pods", pod)

    async def event(self, name: str) -> float:
        """A FailedScheduling Event from default-scheduler about the pod (the row turns to ``0/N nodes: ...``)."""
        now = _stamp()
        event = {"apiVersion": "v1", "kind": "Event",
                 "metadata": {"name": f"{name}.fs", "namespace": PROBE_NAMESPACE},
                 "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": name, "namespace": PROBE_NAMESPACE,
                                    "uid": self.uids.get(name, "")},
                 "reason": "FailedScheduling", "message": PROBE_MESSAGE.format(n=self.nodes), "type": "Warning",
                 "source": {"component": "default-scheduler"}, "reportingComponent": "default-scheduler",
                 "firstTimestamp": now, "lastTimestamp": now, "count": 1}
        return await self._send("POST", f"/api/v1/namespaces/{PROBE_NAMESPACE}/events", event)

    async def status(self, name: str) -> float:
        """``status.nominatedNodeName`` set, as kube-scheduler does when preemption starts (``nominated to ...``)."""
        return await self._send("PATCH", f"/api/v1/namespaces/{PROBE_NAMESPACE}/pods/{name}/status",
                                {"status": {"nominatedNodeName": PROBE_NODE}}, "application/merge-patch+json")

    async def bind(self, name: str) -> float:
        """POST the Binding to :data:`PROBE_NODE` (the row shows ``→ node`` while recently bound)."""
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": PROBE_NODE}}
        return await self._send("POST", f"/api/v1/namespaces/{PROBE_NAMESPACE}/pods/{name}/binding", binding)

    async def delete(self, name: str) -> None:
        """Remove the probe pod and its event, so the next probe is again the first row."""
        for path in (f"/api/v1/namespaces/{PROBE_NAMESPACE}/pods/{name}?gracePeriodSeconds=0",
                     f"/api/v1/namespaces/{PROBE_NAMESPACE}/events/{name}.fs"):
            async with self.session.delete(path) as resp:
                await resp.read()


OPS = ("create", "event", "status", "bind")
"""The probe's writes, in order, and what the pending pane's row must then show (a substring of the painted line;
'' = the row painted at all). kubectl's peer sees create/status/bind as ``pod/NAME`` and the event as
``event/NAME.fs``."""
EXPECT = {"create": "", "event": "too little cpu", "status": "nominated to", "bind": "→ "}


# -- the lab's own costs ---------------------------------------------------------------------------------------------


async def time_list(session: aiohttp.ClientSession, repetitions: int) -> dict[str, Any]:
    """``GET /api/v1/pods`` (plain JSON, one page) and the same paged by 500 as the reflector lists: wall seconds
    per repetition, to the whole body read, and the item count."""
    plain, paged, items = [], [], 0
    for rep in range(repetitions):
        t = time.monotonic()
        async with session.get("/api/v1/pods") as resp:
            body = await resp.read()
        plain.append(time.monotonic() - t)
        if rep == 0:
            items = len(json.loads(body)["items"])
        t = time.monotonic()
        token = ""
        while True:
            params = {"limit": "500", **({"continue": token} if token else {})}
            async with session.get("/api/v1/pods", params=params) as resp:
                doc = json.loads(await resp.read())
            token = doc["metadata"].get("continue") or ""
            if not token:
                break
        paged.append(time.monotonic() - t)
    return {"plain_s": plain, "paged_500_s": paged, "items": items}


async def fan_out(session: aiohttp.ClientSession, watchers: int, churn: Any, rate: int, seconds: float,
                  lab_pid: int) -> dict[str, Any]:
    """``watchers`` plain-HTTP watches of ``/api/v1/pods`` while ``churn`` (a :class:`~bench.scale_churn.Churn`)
    patches pods at ``rate`` writes/s for ``seconds`` (each write carries its send time in the
    ``bench.observatory.dev/sent`` annotation): events delivered per second (all watchers), the send-to-receive
    latency of every (event, watcher) pair, and the lab process's CPU%."""
    async with session.get("/api/v1/pods", params={"limit": "1"}) as resp:
        rv = (await resp.json())["metadata"]["resourceVersion"]
    latencies: list[float] = []
    counts = [0] * watchers
    marker = b'"bench.observatory.dev/sent":"'

    async def watch(i: int, ready: asyncio.Event) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with session.get("/api/v1/pods", params={"watch": "1", "resourceVersion": rv},
                               timeout=timeout) as resp:
            ready.set()
            buffer = b""
            async for chunk in resp.content.iter_any():
                now = time.monotonic()
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    at = line.find(marker)
                    if at < 0:
                        continue
                    at += len(marker)
                    counts[i] += 1
                    latencies.append(now - int(line[at:line.index(b'"', at)]) / 1e9)

    readies = [asyncio.Event() for _ in range(watchers)]
    tasks = [asyncio.create_task(watch(i, readies[i])) for i in range(watchers)]
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 30)
    meter = CpuMeter({"lab": lab_pid})
    meter.start()
    t0 = time.monotonic()
    await churn.run(rate, "annotate")
    await asyncio.sleep(seconds)
    summary = await churn.pause()
    await asyncio.sleep(0.5)  # let the last events arrive
    elapsed = time.monotonic() - t0
    cpu = meter.stop()["lab"]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {"watchers": watchers, "target_wps": rate, "writes": summary.get("writes", 0),
            "achieved_wps": summary.get("achieved_wps"), "write_errors": summary.get("errors", 0),
            "delivered": sum(counts), "delivered_per_s": sum(counts) / elapsed, "lab_cpu_percent": cpu,
            "latencies_s": latencies}
