"""Throughput of ``observatory schedule`` at 1,000 nodes, against a plain loop that binds without filtering.

The lab runs in its own process (``observatory lab serve --scenario scale:nodes=1000,pods=5000 --no-scheduler
--no-kubelet``: 1,000 nodes, about 4,000 bound pods, nothing else scheduling). Each repetition creates ``--pods``
pending pods (100m cpu, 128Mi) with ``schedulerName: my-scheduler`` in a fresh namespace, then runs, in this
process, over one kubernetes-asyncio client:

* **scheduler**: :class:`observatory.scheduler.loop.Scheduler` scoped to that namespace, the same code as the CLI:
  the full default profile (PreFilter and Filter from the round-robin start until ``percentageOfNodesToScore``
  worth of nodes fit, adaptive: 420 of 1,000; PreScore, Score and NormalizeScore of every score plugin), Binding,
  Scheduled event;
* **scheduler, inter-pod terms**: the same with pods that carry a preferred pod anti-affinity term against their
  own label over ``kubernetes.io/hostname`` (weight 100), so InterPodAffinity's PreScore walks every node and pod;
* **plain loop**: a reflector on the same field selector and a round-robin over the node names, POSTing each
  Binding with the same number in flight (16) and writing nothing else: the API round trip's upper bound.

Throughput is pods bound per second from the moment the watches have listed (the pods are all queued then) to the
last 2xx. The three alternate, ``--repeats`` times each; medians are reported with their ratios to the plain loop,
from the same run. Also the pure cost of one scheduling decision over the synced 1,000-node snapshot
(``schedule_one``) for each kind of pod, sampled as the scheduler samples and over every node as the explanations
filter. No assertion: the figures go to ``bench/results/scheduler.{json,md}``.

Run: ``python -m bench.scheduler_bench [--pods 300] [--repeats 3] [--nodes 1000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

from observatory.kube.binding import post_binding
from observatory.kube.connect import connect
from observatory.kube.fetch import list_all
from observatory.kube.reflector import Reflector
from observatory.model.deltas import Relisted, Upserted
from observatory.scheduler.loop import Scheduler
from observatory.scheduler.options import SchedulerOptions, field_selector
from observatory.scheduling import PodInfo, Snapshot, schedule_one

RESULTS = Path(__file__).parent / "results"
NAME = "my-scheduler"
IN_FLIGHT = 16
KINDS = ("scheduler", "scheduler_affinity", "plain")


def pod_body(name: str, app: str, affinity: bool) -> dict[str, Any]:
    """A pending pod for ``my-scheduler``; with ``affinity``, a preferred anti-affinity to its own ``app``."""
    spec: dict[str, Any] = {"schedulerName": NAME, "containers": [{
        "name": "app", "image": "registry.k8s.io/pause:3.9",
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}
    if affinity:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": app}},
                                               "topologyKey": "kubernetes.io/hostname"}}]}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": app}}, "spec": spec}


def start_lab(tmp: Path, nodes: int, pods: int) -> tuple[subprocess.Popen, str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "observatory", "lab", "serve", "--scenario", f"scale:nodes={nodes},pods={pods}",
         "--no-scheduler", "--no-kubelet", "--kubeconfig-out", str(tmp / "kc")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    match = re.fullmatch(r"Lab API server: (\S+)\n", line)
    if match is None:
        proc.kill()
        raise SystemExit(f"the lab did not start: {line!r} {proc.stderr.read()}")
    proc.stdout.readline()
    return proc, match.group(1), str(tmp / "kc")


async def create_pods(url: str, namespace: str, count: int, affinity: bool = False) -> None:
    async with aiohttp.ClientSession(base_url=url) as http:
        async with http.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                          "metadata": {"name": namespace}}) as resp:
            assert resp.status == 201, await resp.text()
        sem = asyncio.Semaphore(16)

        async def one(i: int) -> None:
            body = pod_body(f"p-{i:05d}", namespace, affinity)
            async with sem, http.post(f"/api/v1/namespaces/{namespace}/pods", json=body) as resp:
                assert resp.status == 201, await resp.text()

        await asyncio.gather(*(one(i) for i in range(count)))


async def run_scheduler(api: Any, namespace: str, count: int) -> dict[str, float]:
    synced = asyncio.get_running_loop().create_future()

    def log(line: str) -> None:
        if line.startswith("Synced") and not synced.done():
            synced.set_result((time.perf_counter(), time.process_time()))

    started = time.perf_counter()
    scheduler = Scheduler(api, SchedulerOptions(NAME, bind_concurrency=IN_FLIGHT), namespace=namespace, log=log)
    bound = 0
    outcomes: dict[str, int] = {}
    async with contextlib.aclosing(scheduler.decisions()) as decisions:
        async for decision in decisions:
            outcomes[decision.outcome] = outcomes.get(decision.outcome, 0) + 1
            if decision.outcome == "bound":
                bound += 1
                if bound == count:
                    break
        end, cpu_end = time.perf_counter(), time.process_time()
    t0, cpu0 = synced.result()
    return {"pods": count, "seconds": end - t0, "per_second": count / (end - t0), "sync_seconds": t0 - started,
            "cpu_seconds": cpu_end - cpu0, "per_cpu_second": count / (cpu_end - cpu0),
            "events_written": scheduler.recorder.written, "outcomes": outcomes}


async def run_plain(api: Any, namespace: str, count: int) -> dict[str, float]:
    started = time.perf_counter()
    nodes = sorted(n["metadata"]["name"] for n in (await list_all(api, "/api/v1/nodes"))[0])
    reflector = Reflector(api, "pods", namespace, field_selector=field_selector(NAME))
    sem = asyncio.Semaphore(IN_FLIGHT)
    done = asyncio.Event()
    seen: set[str] = set()
    results = {"bound": 0, "failed": 0}
    tasks: set[asyncio.Task[None]] = set()
    t0 = cpu0 = 0.0

    async def bind(name: str, uid: str, node: str) -> None:
        try:
            exchange = await post_binding(api, namespace, name, node, uid=uid)
        finally:
            sem.release()
        results["bound" if exchange.ok else "failed"] += 1
        if results["bound"] == count:
            done.set()

    async def feed() -> None:
        nonlocal t0, cpu0
        i = 0
        async with contextlib.aclosing(reflector.run()) as deltas:
            async for delta in deltas:
                objs = delta.objs if isinstance(delta, Relisted) else (delta.obj,) if isinstance(delta, Upserted) \
                    else ()
                if isinstance(delta, Relisted) and not t0:
                    t0, cpu0 = time.perf_counter(), time.process_time()
                for obj in objs:
                    name = obj["metadata"]["name"]
                    if name in seen:
                        continue
                    seen.add(name)
                    await sem.acquire()
                    task = asyncio.create_task(bind(name, obj["metadata"].get("uid", ""), nodes[i % len(nodes)]))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                    i += 1

    feeder = asyncio.create_task(feed())
    await done.wait()
    end, cpu_end = time.perf_counter(), time.process_time()
    feeder.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await feeder
    return {"pods": count, "seconds": end - t0, "per_second": count / (end - t0), "sync_seconds": t0 - started,
            "cpu_seconds": cpu_end - cpu0, "per_cpu_second": count / (cpu_end - cpu0), "failed": results["failed"]}


async def decision_cost(api: Any, samples: int = 50) -> dict[str, Any]:
    """Milliseconds per ``schedule_one`` over the lab's nodes and bound pods (parsed once into a Snapshot), for a
    plain pod and one with a preferred anti-affinity term: sampled as the scheduler does (``percentageOfNodesToScore``,
    round robin, no resource tables) and over every node."""
    from observatory.scheduling import NodeSampler  # imported here: a --baseline-tree child may predate it

    nodes, _ = await list_all(api, "/api/v1/nodes")
    pods, _ = await list_all(api, "/api/v1/pods", field_selector="spec.nodeName!=")
    snapshot = Snapshot(nodes, pods)
    out: dict[str, Any] = {"nodes": len(nodes), "bound_pods": len(pods), "samples": samples}
    for label, affinity in (("plain", False), ("affinity", True)):
        body = pod_body("probe", "probe", affinity)
        body["metadata"]["namespace"] = "bench"
        pod = PodInfo.from_pod(body)
        for mode in ("sampled", "every_node"):
            sampler = NodeSampler() if mode == "sampled" else None
            times, cpu = [], []
            for _ in range(samples):
                start, cpu_start = time.perf_counter(), time.process_time()
                schedule_one(pod, snapshot, sampler=sampler, resource_tables=sampler is None)
                times.append((time.perf_counter() - start) * 1000)
                cpu.append((time.process_time() - cpu_start) * 1000)
            out[f"{label}_{mode}_ms"] = statistics.median(times)
            out[f"{label}_{mode}_cpu_ms"] = statistics.median(cpu)
    out["nodes_to_find"] = NodeSampler().num_to_find(len(nodes))
    return out


async def run_baseline(tree: Path, url: str, kubeconfig: str, namespace: str, count: int) -> dict[str, Any]:
    """The ``scheduler`` run with the ``observatory`` package of another source ``tree``, in a child process (this
    file run with ``PYTHONPATH=tree``), against the same lab: the same pods, the same measure."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).resolve()), "--child", url, kubeconfig, namespace, str(count),
        env={**os.environ, "PYTHONPATH": str(tree)}, cwd=str(tree), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"the baseline run failed: {err.decode()[-2000:]}")
    return dict(json.loads(out.decode().strip().splitlines()[-1]))


async def child(url: str, kubeconfig: str, namespace: str, count: int) -> None:
    connection = await connect(kubeconfig)
    try:
        print(json.dumps(await run_scheduler(connection.api, namespace, count)), flush=True)
    finally:
        await connection.close()


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="scheduler-bench-") as tmp:
        proc, url, kubeconfig = start_lab(Path(tmp), args.nodes, args.scenario_pods)
        try:
            connection = await connect(kubeconfig)
            kinds = [*args.kinds, *(["baseline"] if args.baseline_tree else [])]
            runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
            try:
                cost = await decision_cost(connection.api)
                for r in range(args.repeats):
                    for kind in kinds:
                        namespace = f"bench-{kind.replace('_', '-')}-{r}"
                        await create_pods(url, namespace, args.pods, affinity=kind == "scheduler_affinity")
                        if kind == "baseline":
                            result = await run_baseline(args.baseline_tree, url, kubeconfig, namespace, args.pods)
                        else:
                            runner = run_plain if kind == "plain" else run_scheduler
                            result = await runner(connection.api, namespace, args.pods)
                        runs[kind].append(result)
                        print(f"{kind:18} run {r + 1}: {result['per_second']:.1f} pods/s "
                              f"({result['pods']} pods in {result['seconds']:.2f} s)", flush=True)
            finally:
                await connection.close()
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    med = {kind: statistics.median(r["per_second"] for r in rs) for kind, rs in runs.items()}
    med_cpu = {kind: statistics.median(r["per_cpu_second"] for r in rs) for kind, rs in runs.items()}
    return {"when": datetime.now(UTC).isoformat(timespec="seconds"), "python": platform.python_version(),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                        "loadavg_before": list(load_before), "loadavg_after": list(os.getloadavg())},
            "config": {"nodes": args.nodes, "scenario_pods": args.scenario_pods, "pods_per_run": args.pods,
                       "repeats": args.repeats, "in_flight": IN_FLIGHT,
                       "baseline": args.baseline_label or (str(args.baseline_tree) if args.baseline_tree else None)},
            "decision_cost": cost, "runs": runs, "median_pods_per_second": med,
            "median_pods_per_cpu_second": med_cpu,
            "ratio": med.get("scheduler", 0) / med.get("plain", 1),
            "ratio_affinity": med.get("scheduler_affinity", 0) / med.get("plain", 1)}


def markdown(result: dict[str, Any]) -> str:
    med, cfg, cost = result["median_pods_per_second"], result["config"], result["decision_cost"]
    cpu = result["median_pods_per_cpu_second"]
    return "\n".join([
        f"# Scheduler throughput ({result['when']})",
        "",
        f"`observatory schedule` (the full default profile) against a plain loop that binds round-robin without "
        f"filtering, on the lab's `scale:nodes={cfg['nodes']},pods={cfg['scenario_pods']}` ({cost['nodes']} nodes, "
        f"{cost['bound_pods']} bound pods; lab in its own process, its scheduler and kubelets off). "
        f"{cfg['pods_per_run']} pending pods per run, {cfg['in_flight']} Bindings in flight, median of "
        f"{cfg['repeats']} runs each, every kind alternating; Python {result['python']}, "
        f"{result['machine']['cpus']} cores shared with other work (1-minute load average "
        f"{result['machine']['loadavg_before'][0]:.1f} before, {result['machine']['loadavg_after'][0]:.1f} after).",
        "",
        "| | pods bound per second (median) | of the bound | per CPU-second of this process (median) |",
        "|---|---:|---:|---:|",
        f"| `observatory schedule`, pods without inter-pod terms | {med['scheduler']:.1f} | "
        f"{result['ratio'] * 100:.1f} % | {cpu['scheduler']:.1f} |",
        f"| `observatory schedule`, pods with a preferred pod anti-affinity term | {med['scheduler_affinity']:.1f} | "
        f"{result['ratio_affinity'] * 100:.1f} % | {cpu['scheduler_affinity']:.1f} |",
        f"| plain loop (Binding only: the API round-trip bound) | {med['plain']:.1f} | 100 % | {cpu['plain']:.1f} |",
        *([f"| baseline ({cfg['baseline']}), pods without inter-pod terms | {med['baseline']:.1f} | "
           f"{med['baseline'] / med['plain'] * 100:.1f} % | {cpu['baseline']:.1f} |", "",
           f"Against the baseline, run alternately under the same load: {med['scheduler'] / med['baseline']:.2f}x the "
           f"pods per second, {cpu['scheduler'] / cpu['baseline']:.2f}x the pods per CPU-second."]
          if "baseline" in med else []),
        "",
        "Pods per CPU-second divides the pods by the CPU time this process used over the same window "
        "(`time.process_time`): what the scheduler would reach with a core to itself, while the lab keeps up.",
        "",
        f"One scheduling decision (`schedule_one`, median of {cost['samples']}) at {cost['nodes']} nodes:",
        "",
        "| pod | sampled as the scheduler does | every node, as the explanations |",
        "|---|---:|---:|",
        f"| without inter-pod terms | {cost['plain_sampled_ms']:.2f} ms ({cost['plain_sampled_cpu_ms']:.2f} ms CPU) | "
        f"{cost['plain_every_node_ms']:.2f} ms ({cost['plain_every_node_cpu_ms']:.2f} ms CPU) |",
        f"| preferred pod anti-affinity | {cost['affinity_sampled_ms']:.2f} ms "
        f"({cost['affinity_sampled_cpu_ms']:.2f} ms CPU) | {cost['affinity_every_node_ms']:.2f} ms "
        f"({cost['affinity_every_node_cpu_ms']:.2f} ms CPU) |",
        "",
        f"Sampled: PreFilter, then Filter from the round-robin start until {cost['nodes_to_find']} nodes fit "
        "(`percentageOfNodesToScore` adaptive, as kube-scheduler), then the score plugins over those. The rest of "
        "each cycle's cost is the Binding, the Scheduled event and the watch updates of every bound pod, which "
        "share the scheduler's one event loop.",
        ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=300, help="pending pods per run (default 300)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--nodes", type=int, default=1000, help="nodes in the scale scenario (default 1000)")
    parser.add_argument("--scenario-pods", type=int, default=5000, help="pods in the scale scenario (default 5000)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS),
                        help="which runs to make (default all three; the Markdown needs all three)")
    parser.add_argument("--baseline-tree", type=Path, default=None, metavar="DIR",
                        help="also run the plain pods' scheduler from another source tree (e.g. a checkout of the "
                        "previous commit), alternating with the others, for a ratio under the same load")
    parser.add_argument("--baseline-label", default="", help="what to call the baseline tree in the results")
    parser.add_argument("--child", nargs=4, metavar=("URL", "KUBECONFIG", "NS", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(child(args.child[0], args.child[1], args.child[2], int(args.child[3])))
        return
    result = asyncio.run(main_async(args))
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "scheduler.json").write_text(json.dumps(result, indent=2) + "\n")
    text = markdown(result) if set(args.kinds) == set(KINDS) else json.dumps(result["median_pods_per_second"])
    (args.out_dir / "scheduler.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
