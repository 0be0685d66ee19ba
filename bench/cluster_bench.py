"""How long the lab's simulated cluster takes to run a pod: create -> bound -> ContainerCreating -> Running.

The target is "Running within about 1-3 s" with the default settings (bind delay 0.2 s, kubelet start
about 1.5 s). This starts a lab on the ``pair`` scenario in-process with default settings, creates pods one at a time
over HTTP, follows each through a watch, and reports median, p95 and max per phase. No assertion: the figures go to
``bench/results/cluster.{json,md}``.

Run: ``python -m bench.cluster_bench [--pods N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import aiohttp

from observatory.embedded import EmbeddedLab
from observatory.settings import LabSettings

RESULTS = Path(__file__).parent / "results"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def one_pod(http: aiohttp.ClientSession, name: str) -> dict[str, float]:
    """Seconds from the create request to each phase, seen on a watch of that pod."""
    async with http.get("/api/v1/namespaces/default/pods") as resp:
        rv = (await resp.json())["metadata"]["resourceVersion"]
    seen: dict[str, float] = {}
    start = time.perf_counter()
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}
    async with http.get(f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}"
                        f"&fieldSelector=metadata.name%3D{name}&timeoutSeconds=30") as watch:
        async with http.post("/api/v1/namespaces/default/pods", json=body) as resp:
            assert resp.status == 201
        async for line in watch.content:
            pod = json.loads(line)["object"]
            now = time.perf_counter() - start
            if pod["spec"].get("nodeName"):
                seen.setdefault("bound", now)
            waiting = [c for c in pod["status"].get("containerStatuses", []) if "waiting" in c.get("state", {})]
            if waiting:
                seen.setdefault("container_creating", now)
            if pod["status"].get("phase") == "Running":
                seen["running"] = now
                break
    return seen


async def main(pods: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        lab = EmbeddedLab(LabSettings(), scenario="pair", kubeconfig_path=Path(tmp) / "kc")
        await lab.start()
        try:
            async with aiohttp.ClientSession(base_url=lab.url) as http:
                runs = [await one_pod(http, f"bench-{i}") for i in range(pods)]
        finally:
            await lab.stop()
    phases = {}
    for phase in ("bound", "container_creating", "running"):
        values = [r[phase] for r in runs if phase in r]
        phases[phase] = {"median_s": statistics.median(values), "p95_s": percentile(values, 0.95),
                         "max_s": max(values), "n": len(values)}
    return {"date": datetime.now(UTC).isoformat(timespec="seconds"), "python": platform.python_version(),
            "settings": {"bind_delay_s": 0.2, "kubelet_start_seconds": 1.5}, "pods": pods, "phases": phases}


def report(result: dict) -> str:
    lines = [f"# Lab cluster: create to Running ({result['date']})", "",
             f"{result['pods']} pods created one at a time on `pair`, default settings; Python {result['python']}.", "",
             "| phase reached | median | p95 | max |", "|---|---:|---:|---:|"]
    for phase, v in result["phases"].items():
        lines.append(f"| {phase.replace('_', ' ')} | {v['median_s']:.2f} s | {v['p95_s']:.2f} s | {v['max_s']:.2f} s |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=20, help="pods to run one after another (default 20)")
    args = parser.parse_args()
    result = asyncio.run(main(args.pods))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cluster.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "cluster.md").write_text(report(result))
    print(report(result))
