"""Benchmark the lab server's own costs: listing 10,000 pods, and fanning a watch out to 20 watchers under churn.

Run from the repository root::

    python -m bench.lab_bench            # full run, about 2-3 minutes; writes bench/results/lab.{json,md}
    python -m bench.lab_bench --quick    # about 25 s, fewer repetitions, no kubectl; same files
    python -m bench.lab_bench --help

The lab runs in a child process (:mod:`bench.lab_server_proc`) and is only ever measured through real HTTP on
127.0.0.1; this process is the client. Nothing here asserts on time: it records numbers (see bench/README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench import lab_lists, lab_report, lab_server_proc, lab_watch

REPO = Path(__file__).resolve().parent.parent
SPAWN = mp.get_context("spawn")
READY_TIMEOUT_S = 300
DRAIN_TIMEOUT_S = 30


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.lab_bench",
        description="Measure the observatory lab server over HTTP: list N pods five ways (plain JSON, paged by "
                    "500, server-side Table, kubernetes-asyncio, kubectl), fan a pod watch out to W watchers "
                    "while pods are patched at target rates, and record the lab process's memory. Writes "
                    "<out>/lab.json and <out>/lab.md. Loopback only; no assertions on time.")
    p.add_argument("--quick", action="store_true",
                   help="a ~25 s run: 2 list repetitions and no warm-ups, no kubectl, one 2 s watch run per "
                        "rate, in-loop writer only")
    p.add_argument("-n", "--repetitions", type=int, default=None,
                   help="timed repetitions per list (default 5; 2 with --quick)")
    p.add_argument("--pods", type=int, default=10_000, help="pods created in the lab (default 10000)")
    p.add_argument("--watchers", type=int, default=20, help="concurrent watchers (default 20)")
    p.add_argument("--rates", default="200,1000",
                   help="target pod writes per second, comma-separated (default 200,1000)")
    p.add_argument("--writers", default=None,
                   help="who writes during the watch runs: 'inloop' (registry.patch on the lab's event loop), "
                        "'http' (PATCH from a separate process), or both comma-separated (default inloop,http; "
                        "inloop with --quick)")
    p.add_argument("--watch-seconds", type=float, default=None,
                   help="churn time per watch run (default 4; 2 with --quick)")
    p.add_argument("--watch-repetitions", type=int, default=None,
                   help="runs per writer and rate (default 3; 1 with --quick)")
    p.add_argument("--kubectl-repetitions", type=int, default=None,
                   help="timed kubectl runs (default 3; 0, none, with --quick): kubectl takes seconds per run and is "
                        "only a peer figure")
    p.add_argument("--no-kubectl", action="store_true", help="skip the kubectl peer measurement")
    p.add_argument("--simulations", action="store_true",
                   help="leave the lab's simulated scheduler, kubelets, pod GC and node lifecycle on (default: off, so "
                        "only the benchmark writes; with them on, their own writes show up in every figure)")
    p.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results", help="where lab.json and lab.md go")
    args = p.parse_args(argv)
    quick = args.quick
    args.repetitions = args.repetitions or (2 if quick else 5)
    if args.kubectl_repetitions is None:
        args.kubectl_repetitions = 0 if quick else 3
    args.watch_seconds = args.watch_seconds or (2.0 if quick else 4.0)
    args.watch_repetitions = args.watch_repetitions or (1 if quick else 3)
    args.writers = [w.strip() for w in (args.writers or ("inloop" if quick else "inloop,http")).split(",") if w.strip()]
    args.rates = [int(r) for r in args.rates.split(",") if r.strip()]
    if not set(args.writers) <= {"inloop", "http"}:
        p.error("--writers takes inloop, http or both")
    return args


class LabProcess:
    """The child running the lab, and the pipe to it."""

    def __init__(self, pods: int, simulations: bool = False) -> None:
        self.conn, child = SPAWN.Pipe()
        self.proc = SPAWN.Process(target=lab_server_proc.main, name="lab-under-test",
                                  args=(child, pods, lab_server_proc.lab_settings(simulations)))
        self.proc.start()
        child.close()
        try:
            if not self.conn.poll(READY_TIMEOUT_S):
                raise EOFError
            self.info: dict[str, Any] = self.conn.recv()
        except EOFError:
            self.kill()
            raise RuntimeError(f"the lab process did not report ready (exit code {self.proc.exitcode})") from None

    async def ask(self, msg: dict[str, Any]) -> Any:
        """Send a command and await the answer without blocking this event loop (the watchers keep reading)."""
        self.conn.send(msg)
        return await asyncio.get_running_loop().run_in_executor(None, self.conn.recv)

    async def cpu(self) -> float:
        return await self.ask({"cmd": "cpu"})

    def stop(self) -> dict[str, Any]:
        self.conn.send({"cmd": "stop"})
        final = self.conn.recv() if self.conn.poll(30) else {}
        self.proc.join(10)
        self.kill()
        return final

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)


async def run_lists(lab: LabProcess, args: argparse.Namespace) -> list[dict[str, Any]]:
    url, kubeconfig, n = lab.info["url"], lab.info["kubeconfig"], args.pods
    rows: list[dict[str, Any]] = []

    warm = not args.quick

    def row(label: str, key: str, raw: dict[str, Any]) -> None:
        rows.append({"label": label, "key": key, "wall_s": lab_report.summary(raw["walls"]),
                     "server_cpu_s": lab_report.summary(raw["server_cpu"]), "bytes": raw["bytes"],
                     "items": raw["items"]})
        print(f"  {label}: median {lab_report.percentile(raw['walls'], 50) * 1000:.0f} ms", flush=True)

    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(base_url=url, timeout=timeout) as s:
        row("(a) `GET /api/v1/pods`, plain JSON", "plain_json",
            await lab_lists.repeat(lambda: lab_lists.plain_json(s, n), lab.cpu, args.repetitions, warm))
        row("(b) paged, `?limit=500` + `continue`", "paged_500",
            await lab_lists.repeat(lambda: lab_lists.paged_json(s, n), lab.cpu, args.repetitions, warm))
        row("(c) server-side Table (`as=Table`)", "table",
            await lab_lists.repeat(lambda: lab_lists.table(s, n), lab.cpu, args.repetitions, warm))
    api = await lab_lists.kubernetes_asyncio_client(kubeconfig)
    async with api:
        row("(d) kubernetes-asyncio `list_pod_for_all_namespaces(_preload_content=False)` + `json.loads`",
            "kubernetes_asyncio", await lab_lists.repeat(lambda: lab_lists.k8s_asyncio_raw(api, n), lab.cpu,
                                                          args.repetitions, warm))
    if not args.no_kubectl and args.kubectl_repetitions > 0:
        with tempfile.TemporaryDirectory(prefix="lab-bench-kubectl-") as cache:
            row("(e) `kubectl get pods -A -o name` (process wall time, peer)", "kubectl",
                await lab_lists.repeat(lambda: lab_lists.kubectl_names(kubeconfig, cache, n), lab.cpu,
                                       args.kubectl_repetitions, warm))
    return rows


async def watch_run(lab: LabProcess, args: argparse.Namespace, writer: str, rate: int, offset: int) -> dict[str, Any]:
    """One churn run with this process's garbage collector paused, so the client adds no GC pauses of its own."""
    gc.collect()
    gc.disable()
    try:
        return await _watch_run(lab, args, writer, rate, offset)
    finally:
        gc.enable()
        gc.collect()


async def _watch_run(lab: LabProcess, args: argparse.Namespace, writer: str, rate: int, offset: int) -> dict[str, Any]:
    """One churn run: open the watchers at the current list RV, write, drain, and analyse what arrived."""
    url = lab.info["url"]
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    connector = aiohttp.TCPConnector(limit=args.watchers + 4)
    async with aiohttp.ClientSession(base_url=url, timeout=timeout, connector=connector) as session:
        async with session.get("/api/v1/pods", params={"limit": "1"}) as resp:
            list_rv = (await resp.json())["metadata"]["resourceVersion"]
        logs = [lab_watch.WatchLog() for _ in range(args.watchers)]
        opened: list[int] = []
        stream_timeout = int(args.watch_seconds + DRAIN_TIMEOUT_S + 60)
        tasks = [asyncio.create_task(lab_watch.watch_one(session, list_rv, log, opened, stream_timeout))
                 for log in logs]
        for _ in range(1000):  # bounded: at most 10 s for the watches to open
            if len(opened) == args.watchers or all(t.done() for t in tasks):
                break
            await asyncio.sleep(0.01)
        if writer == "inloop":
            await lab.ask({"cmd": "stamp_start"})
            driver = await lab.ask({"cmd": "churn", "rate": rate, "duration": args.watch_seconds, "offset": offset})
        else:
            driver = await http_writer(lab, args, rate, offset)
        final_rv = await lab.ask({"cmd": "rv"})
        for _ in range(DRAIN_TIMEOUT_S * 100):  # bounded drain wait
            if all(log.last_rv >= final_rv or log.ended_early or log.error for log in logs):
                break
            await asyncio.sleep(0.01)
        server = await lab.ask({"cmd": "stamp_stop"})
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    result = lab_watch.analyse(logs, server["stamps"], int(list_rv))
    lags = server["loop_lag_s"]
    gen2 = [pause for gen, pause, _ in server["gc_pauses"] if gen == 2]
    result.update({
        "writer": writer, "target_rate": rate, "list_rv": int(list_rv), "final_rv": final_rv,
        "watchers_opened": len(opened), "watch_errors": sorted({log.error for log in logs if log.error}),
        "event_types": {k: sum(log.types.get(k, 0) for log in logs) for k in {k for log in logs for k in log.types}},
        "achieved_rate": result["writes_committed"] / driver["driver_s"] if driver.get("driver_s") else 0.0,
        "write_errors": driver.get("write_errors",
                                   sum(n for code, n in driver.get("statuses", {}).items() if code != 200)),
        "driver": driver, "server_cpu_s": server["server_cpu_s"], "server_wall_s": server["wall_s"],
        "server_cpu_util": server["server_cpu_s"] / server["wall_s"] if server["wall_s"] else 0.0,
        "loop_lag_p50_s": lab_report.percentile(lags, 50), "loop_lag_p99_s": lab_report.percentile(lags, 99),
        "loop_lag_max_s": max(lags) if lags else None,
        "gc_collections": len(server["gc_pauses"]), "gc_pause_total_s": sum(p for _, p, _ in server["gc_pauses"]),
        "gc_gen2_collections": len(gen2), "gc_gen2_max_pause_s": max(gen2) if gen2 else 0.0,
    })
    return result


async def http_writer(lab: LabProcess, args: argparse.Namespace, rate: int, offset: int) -> dict[str, Any]:
    """Start the HTTP churn process, wait until it has imported, start stamping, let it write, collect its summary."""
    conn, child = SPAWN.Pipe()
    proc = SPAWN.Process(target=lab_watch.http_churn_main, name="http-churn",
                         args=(child, lab.info["url"], lab.info["pods"], rate, args.watch_seconds, offset))
    proc.start()
    child.close()
    loop = asyncio.get_running_loop()

    def recv(timeout: float) -> Any:
        try:
            return conn.recv() if conn.poll(timeout) else {}
        except EOFError:
            return {}

    try:
        if await loop.run_in_executor(None, recv, 60) != "ready":
            raise RuntimeError(f"the HTTP churn process did not start (exit code {proc.exitcode})")
        await lab.ask({"cmd": "stamp_start"})
        conn.send("go")
        return await loop.run_in_executor(None, recv, args.watch_seconds + 60) or {}
    finally:
        # Joined off the event loop: the watchers are still timing the last events while the driver exits.
        await loop.run_in_executor(None, proc.join, 10)
        if proc.is_alive():
            proc.kill()
            await loop.run_in_executor(None, proc.join, 5)


async def run_watch(lab: LabProcess, args: argparse.Namespace) -> list[dict[str, Any]]:
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {(w, r): [] for w in args.writers for r in args.rates}
    offset = 0
    for rep in range(args.watch_repetitions):
        for (writer, rate), bucket in runs.items():
            run = await watch_run(lab, args, writer, rate, offset)
            offset += run["writes_committed"]
            bucket.append(run)
            print(f"  {writer} {rate} w/s run {rep + 1}: achieved {run['achieved_rate']:.0f} w/s, "
                  f"p99 {run['latency_p99_s'] * 1000:.1f} ms, ok={run['correctness']['ok']}", flush=True)
    rows = []
    keys = ("achieved_rate", "delivered_per_s", "latency_p50_s", "latency_p95_s", "latency_p99_s", "latency_max_s",
            "server_cpu_util", "loop_lag_p99_s", "drain_after_last_commit_s", "gc_gen2_collections",
            "gc_gen2_max_pause_s", "gc_pause_total_s")
    for (writer, rate), bucket in runs.items():
        correctness = {k: sum(r["correctness"][k] for r in bucket) for k in bucket[0]["correctness"] if k != "ok"}
        correctness["ok"] = all(r["correctness"]["ok"] for r in bucket)
        correctness["write_errors"] = sum(r["write_errors"] for r in bucket)
        rows.append({
            "writer": "registry.patch on the lab's loop" if writer == "inloop" else "HTTP PATCH, separate process",
            "writer_key": writer, "target_rate": rate,
            "median": {k: lab_report.percentile([r[k] for r in bucket if r[k] is not None], 50) for k in keys},
            "correctness": correctness, "runs": bucket,
        })
    return rows


async def client_main(lab: LabProcess, args: argparse.Namespace) -> dict[str, Any]:
    print("lists:", flush=True)
    lists = await run_lists(lab, args)
    mem_after_lists = await lab.ask({"cmd": "mem"})
    print("watch fan-out:", flush=True)
    watch = await run_watch(lab, args)
    return {"list": lists, "watch": watch, "mem_after_lists": mem_after_lists,
            "client_plain_json_loads_s": lab_report.summary(lab_lists.CLIENT_DECODE_S)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = lab_report.environment(str(REPO))
    started = time.perf_counter()
    print(f"starting the lab with {args.pods:,} pods ...", flush=True)
    lab = LabProcess(args.pods, args.simulations)
    try:
        print(f"  populated in {lab.info['populate_s']:.1f} s; lab at {lab.info['url']}", flush=True)
        measured = asyncio.run(client_main(lab, args))
    finally:
        final = lab.stop()
    by_key = {r["key"]: r for r in measured["list"]}
    ratio = None
    if "kubectl" in by_key:
        ratio = by_key["plain_json"]["wall_s"]["median"] / by_key["kubectl"]["wall_s"]["median"]
    env["lab_source_sha256"] = lab.info["lab_source_sha256"]
    results = {
        "environment": env,
        "config": {"mode": "quick" if args.quick else "full", "pods": args.pods, "repetitions": args.repetitions,
                   "warmup": not args.quick, "kubectl_repetitions": args.kubectl_repetitions,
                   "watchers": args.watchers, "rates": args.rates, "writers": args.writers,
                   "watch_duration_s": args.watch_seconds, "watch_repetitions": args.watch_repetitions,
                   "simulations": args.simulations, "lab_settings": lab.info["settings"]},
        "populate_s": lab.info["populate_s"],
        "list": measured["list"],
        "ratio_lab_json_to_kubectl": ratio,
        "watch": measured["watch"],
        "client_plain_json_loads_s": measured["client_plain_json_loads_s"],
        "memory": {"started": lab.info["mem_started"], "populated": lab.info["mem_populated"],
                   "after_lists": measured["mem_after_lists"], "final": final.get("mem_final", {})},
        "total_run_s": time.perf_counter() - started,
        "loadavg_at_end": os.getloadavg(),
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "lab.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    md = lab_report.markdown(results)
    (args.out_dir / "lab.md").write_text(md)
    print(md)
    print(f"total {results['total_run_s']:.0f} s; wrote {args.out_dir / 'lab.json'} and {args.out_dir / 'lab.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
