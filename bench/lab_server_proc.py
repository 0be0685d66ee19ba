"""The lab under test, in its own process, so the benchmark's clients never share its event loop or its CPU.

The parent starts :func:`main` with a ``multiprocessing`` pipe. The child starts a ``pair`` lab on 127.0.0.1 with a
random port, creates the pods through the Registry, reports its URL, kubeconfig and memory, then answers commands
until ``stop``:

``cpu``
    CPU seconds this process has used (``time.process_time``), so the parent can charge each request's server
    CPU to it.
``rv``
    The store's current resourceVersion.
``mem``
    VmRSS / VmHWM from ``/proc/self/status``.
``stamp_start`` / ``stamp_stop``
    Record ``(resourceVersion, CLOCK_MONOTONIC ns)`` for every pod write the store commits in between (a store
    listener, called synchronously inside the commit), plus a loop-lag probe, the garbage collector's pauses
    (``gc.callbacks``) and the CPU used. The HTTP churn
    driver uses this pair.
``churn``
    Patch pods at a target rate for a fixed time through ``registry.patch`` on the lab's own event loop (as the
    lab's in-process simulations write). Sent between ``stamp_start`` and ``stamp_stop``.

CLOCK_MONOTONIC (``time.monotonic_ns``) is one clock for every process on the machine, so the parent can subtract a
stamp taken here from a receive time taken there.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import shutil
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from bench.lab_pods import PodRef, populate
from observatory.embedded import EmbeddedLab
from observatory.lab.resources import CORE_V1
from observatory.lab.store import Change
from observatory.settings import LabSettings

SMP = "application/strategic-merge-patch+json"
API_ONLY = {"scheduler": False, "kubelet": False, "podgc": False, "node_lifecycle": False}
"""LabSettings that turn the simulated control plane off, so only the benchmark writes and the API server is measured
alone. Keys this version of LabSettings does not know are left out."""


def lab_settings(simulations: bool) -> dict[str, Any]:
    """Overrides for LabSettings: none with ``simulations``, otherwise :data:`API_ONLY` (known fields only)."""
    if simulations:
        return {}
    return {k: v for k, v in API_ONLY.items() if k in LabSettings.model_fields}
LAG_PROBE_S = 0.005


def source_digest() -> str:
    """sha256 over observatory's Python sources as this process imported them (the tree changes between commits)."""
    import observatory

    root = Path(observatory.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def proc_status() -> dict[str, int]:
    """VmRSS, VmHWM (peak RSS) and VmSize of this process in KiB."""
    out: dict[str, int] = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "VmSize"):
                out[key] = int(value.split()[0])
    return out


def churn_patch(seq: int) -> bytes:
    """The body every churn write sends, as ``kubectl annotate --overwrite`` would (strategic merge patch)."""
    return json.dumps({"metadata": {"annotations": {"bench.observatory.dev/seq": str(seq)}}}).encode()


class Stamper:
    """Commit stamps for pod writes, a loop-lag probe and a CPU reading, between :meth:`start` and :meth:`stop`."""

    def __init__(self, lab: EmbeddedLab) -> None:
        self.lab = lab
        self.stamps: list[tuple[int, int]] = []
        self.lags: list[float] = []
        self._probe: asyncio.Task[None] | None = None
        self._cpu0 = 0.0
        self._wall0 = 0.0
        self.gc_pauses: list[tuple[int, float, int]] = []
        self._gc_t0 = 0.0

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_t0 = time.perf_counter()
        else:
            self.gc_pauses.append((info["generation"], time.perf_counter() - self._gc_t0, info["collected"]))

    def _listen(self, change: Change) -> None:
        if change.resource == "pods":
            self.stamps.append((change.rv, time.monotonic_ns()))

    async def _lag_probe(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(LAG_PROBE_S)
            self.lags.append(loop.time() - t - LAG_PROBE_S)

    def start(self) -> None:
        self.stamps, self.lags, self.gc_pauses = [], [], []
        self.lab.store.listeners.append(self._listen)
        gc.callbacks.append(self._gc)
        self._probe = asyncio.get_running_loop().create_task(self._lag_probe())
        self._cpu0, self._wall0 = time.process_time(), time.monotonic()

    async def stop(self) -> dict[str, Any]:
        cpu, wall = time.process_time() - self._cpu0, time.monotonic() - self._wall0
        self.lab.store.listeners.remove(self._listen)
        gc.callbacks.remove(self._gc)
        if self._probe is not None:
            self._probe.cancel()
            try:
                await self._probe
            except asyncio.CancelledError:
                pass
        return {"stamps": self.stamps, "loop_lag_s": self.lags, "server_cpu_s": cpu, "wall_s": wall,
                "gc_pauses": self.gc_pauses}


async def churn(lab: EmbeddedLab, refs: list[PodRef], rate: float, duration: float, offset: int) -> dict[str, Any]:
    """Patch ``rate`` pods per second for ``duration`` seconds on this loop; at most 10 ms of writes per loop turn.

    The driver never catches up beyond that burst, so a saturated loop shows as an achieved rate below target.
    """
    loop = asyncio.get_running_loop()
    pods_rt = CORE_V1["pods"]
    burst = max(1, int(rate / 100))
    write_s = 0.0
    errors = 0
    sent = 0
    t0 = loop.time()
    while True:
        elapsed = loop.time() - t0
        if elapsed >= duration:
            break
        due = min(int(elapsed * rate) + 1, int(rate * duration))
        for _ in range(min(burst, due - sent)):
            ref = refs[(offset + sent) % len(refs)]
            w0 = time.perf_counter()
            try:
                lab.registry.patch(pods_rt, ref.namespace, ref.name, SMP, churn_patch(offset + sent))
            except Exception:
                errors += 1
            write_s += time.perf_counter() - w0
            sent += 1
        next_at = t0 + sent / rate
        await asyncio.sleep(max(0.0, next_at - loop.time()))
    return {"writes": sent, "write_errors": errors, "registry_patch_s": write_s, "driver_s": loop.time() - t0}


async def serve(conn: Connection, pods: int, settings: dict[str, Any]) -> None:
    loop = asyncio.get_running_loop()
    digest = source_digest()
    workdir = Path(tempfile.mkdtemp(prefix="lab-bench-"))
    lab_settings = LabSettings(**settings)
    lab = EmbeddedLab(lab_settings, scenario="pair", kubeconfig_path=workdir / "kubeconfig")
    await lab.start()
    gc.collect()
    mem_started = proc_status()
    t0 = time.perf_counter()
    refs = populate(lab.registry, pods)
    populate_s = time.perf_counter() - t0
    gc.collect()
    mem_populated = proc_status()
    conn.send({"url": lab.url, "kubeconfig": str(lab.kubeconfig_path), "workdir": str(workdir),
               "populate_s": populate_s, "pods": [(r.namespace, r.name) for r in refs],
               "mem_started": mem_started, "mem_populated": mem_populated,
               "store_rv": lab.store.resource_version, "settings": lab_settings.model_dump(),
               "lab_source_sha256": digest})

    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def receive() -> None:
        try:
            inbox.put_nowait(conn.recv())
        except (EOFError, OSError):  # the parent went away: stop
            loop.remove_reader(conn.fileno())
            inbox.put_nowait({"cmd": "stop"})

    loop.add_reader(conn.fileno(), receive)
    stamper = Stamper(lab)
    try:
        while True:
            msg = await inbox.get()
            cmd = msg["cmd"]
            if cmd == "cpu":
                conn.send(time.process_time())
            elif cmd == "rv":
                conn.send(lab.store.resource_version)
            elif cmd == "mem":
                conn.send(proc_status())
            elif cmd == "stamp_start":
                stamper.start()
                conn.send("ok")
            elif cmd == "stamp_stop":
                conn.send(await stamper.stop())
            elif cmd == "churn":
                conn.send(await churn(lab, refs, msg["rate"], msg["duration"], msg["offset"]))
            elif cmd == "stop":
                break
    finally:
        loop.remove_reader(conn.fileno())
        await lab.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        try:
            conn.send({"mem_final": proc_status()})
        except OSError:
            pass
        conn.close()


def main(conn: Connection, pods: int, settings: dict[str, Any]) -> None:
    """Process entry point (``multiprocessing`` spawn target)."""
    asyncio.run(serve(conn, pods, settings))
