"""kubectl as the peer: ``kubectl get pods -A -w -o name`` (and the same for events) against the lab, each output
line timestamped with CLOCK_MONOTONIC when it arrives.

kubectl writes each watch event as one line (``pod/NAME``, ``event/NAME``; ``-o name`` leaves the namespace out, so
probe names are unique across namespaces). The first lines are the initial list; ``list_done_at`` is when the
expected number of them had arrived.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path


class KubectlWatch:
    """One ``kubectl get RESOURCE -A -w -o name`` process; ``arrivals[name]`` holds the arrival times of lines for
    names starting with ``track_prefix``."""

    def __init__(self, kubeconfig: Path, resource: str, cache_dir: Path, track_prefix: str,
                 expect_listed: int = 0) -> None:
        self.kubeconfig, self.resource, self.cache_dir = kubeconfig, resource, cache_dir
        self.track_prefix = track_prefix
        self.expect_listed = expect_listed
        self.arrivals: dict[str, list[float]] = {}
        self.lines = 0
        self.started_at = 0.0
        self.list_done_at: float | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._listed = asyncio.Event()
        self._arrived = asyncio.Event()

    async def start(self) -> None:
        kubectl = shutil.which("kubectl")
        if kubectl is None:
            raise RuntimeError("kubectl is not on PATH; the scale benchmark runs it as the peer")
        self.started_at = time.monotonic()
        self.proc = await asyncio.create_subprocess_exec(
            kubectl, "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir), "get", self.resource,
            "-A", "-w", "-o", "name", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={k: v for k, v in os.environ.items() if k != "KUBECONFIG"}, limit=1 << 20)
        self._reader = asyncio.create_task(self._read())
        if self.expect_listed == 0:
            self._listed.set()

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        kind_prefix = self.resource.rstrip("s") + "/"
        prefix = (kind_prefix + self.track_prefix).encode()
        cut = len(kind_prefix)
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                break
            now = time.monotonic()
            self.lines += 1
            if line.startswith(prefix):
                self.arrivals.setdefault(line[cut:].strip().decode(), []).append(now)
                self._arrived.set()
            if self.list_done_at is None and self.lines >= self.expect_listed:
                self.list_done_at = now
                self._listed.set()

    async def listed(self, timeout: float) -> float:
        """Seconds from start until the initial list had been printed."""
        await asyncio.wait_for(self._listed.wait(), timeout)
        return (self.list_done_at or self.started_at) - self.started_at

    async def arrival_after(self, name: str, since: float, timeout: float) -> float | None:
        """The first arrival of a line for ``name`` at or after ``since``, waiting up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            for t in self.arrivals.get(name, ()):
                if t >= since:
                    return t
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), min(left, 0.5))
            except TimeoutError:
                pass

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
