"""The scale benchmark: observatory beside ``kubectl get -w`` on the same lab, at 1k, 10k and 50k pods.

Run from the repository root (kubectl on ``PATH``)::

    python -m bench scale            # full run; writes bench/results/scale.{json,md}
    python -m bench scale --quick    # one repetition, 1k pods only, a few probes
    python -m bench scale --help

For each scale (pods/nodes) it starts ``observatory lab serve --scenario scale:nodes=N,pods=M`` (:mod:`.scale_lab`),
then per repetition: ``kubectl get pods -A -w -o name`` and ``kubectl get events -A -w -o name`` (:mod:`.scale_peer`),
and once their initial lists are printed, observatory headless in its own process (:mod:`.scale_app`) through the
lab's kubeconfig. It times the initial sync, and at the reflect scale, for each background churn rate
(:mod:`.scale_churn`), writes probe pods (create, FailedScheduling event, status, Binding) and times each until its
row is painted in the pending pane and until kubectl prints it; then presses keys; CPU comes from ``/proc``. At the
end of the reflect scale it times the lab's 10k-pod list and a watch fan-out. Nothing asserts on time.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import multiprocessing as mp
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench import lab_report, scale_app, scale_report
from bench.scale_churn import Churn
from bench.scale_lab import (
    EXPECT,
    OPS,
    PROBE_NAMESPACE,
    CpuMeter,
    LabProcess,
    ProbeWriter,
    fan_out,
    proc_mem_kib,
    time_list,
)
from bench.scale_peer import KubectlWatch

REPO = Path(__file__).resolve().parent.parent
SPAWN = mp.get_context("spawn")
PREFIX = "bench-probe-"
SCREEN = (160, 50)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench scale",
        description="Measure observatory at scale against the lab, beside kubectl get -w: initial sync, reflect "
                    "latency under churn, key latency, memory and CPU, and the lab's own list and fan-out costs. "
                    "Writes <out-dir>/scale.json and <out-dir>/scale.md. No assertions on time.")
    p.add_argument("--quick", action="store_true", help="one repetition at 1,000/100 only, 4 probes, 10 keys")
    p.add_argument("--scales", default=None,
                   help="pods/nodes pairs, comma-separated (default 1000/100,10000/1000,50000/1000; --quick 1000/100)")
    p.add_argument("--reflect-scale", default=None,
                   help="the pods/nodes pair where reflect and key latency are measured (default 10000/1000, or the "
                        "first scale when that one is not run)")
    p.add_argument("-n", "--repetitions", type=int, default=None, help="runs per scale (default 3; --quick 1)")
    p.add_argument("--churn", default="0,100,1000", help="background watch events/s, comma-separated")
    p.add_argument("--probes", type=int, default=None, help="probe pods per churn level (default 25; --quick 4)")
    p.add_argument("--keys", type=int, default=None, help="key presses per churn level (default 40; --quick 10)")
    p.add_argument("--warmup", type=float, default=None, help="seconds of churn before measuring (default 3; 1)")
    p.add_argument("--watchers", type=int, default=None, help="fan-out watchers (default 10; --quick 3)")
    p.add_argument("--fan-out-rate", type=int, default=None, help="fan-out writes/s (default 1000; --quick 200)")
    p.add_argument("--fan-out-seconds", type=float, default=None, help="fan-out churn time (default 4; --quick 1)")
    p.add_argument("--profile", type=Path, default=None,
                   help="run py-spy on observatory during the highest churn level of the first repetition and "
                        "write the raw profile here (needs the 'bench' extra)")
    p.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results", help="where scale.json/.md go")
    p.add_argument("--audit", action="store_true",
                   help="measure without and then with auditing (the lab writing --audit-log-path, observatory "
                        "following it as --audit-log does) and write <out-dir>/scale_audit.json/.md instead")
    p.add_argument("--report", action="store_true",
                   help="measure nothing: write scale.md again from scale.json (and scale.notes.md) in --out-dir")
    args = p.parse_args(argv)
    q = args.quick
    pairs = args.scales or ("1000/100" if q else "1000/100,10000/1000,50000/1000")
    try:
        args.scales = [(int(n), int(p_)) for p_, n in (s.split("/") for s in pairs.split(",") if s.strip())]
        args.churn = [int(r) for r in args.churn.split(",") if r.strip()]
        if args.reflect_scale:
            p_, n = args.reflect_scale.split("/")
            args.reflect_scale = (int(n), int(p_))
    except ValueError:
        p.error("--scales and --reflect-scale take pods/nodes pairs such as 10000/1000; --churn takes integers")
    if args.reflect_scale is None or args.reflect_scale not in args.scales:
        args.reflect_scale = (1000, 10_000) if (1000, 10_000) in args.scales else args.scales[0]
    args.repetitions = args.repetitions or (1 if q else 3)
    args.probes = args.probes or (4 if q else 25)
    args.keys = args.keys or (10 if q else 40)
    args.warmup = args.warmup if args.warmup is not None else (1.0 if q else 3.0)
    args.watchers = args.watchers or (3 if q else 10)
    args.fan_out_rate = args.fan_out_rate or (200 if q else 1000)
    args.fan_out_seconds = args.fan_out_seconds or (1.0 if q else 4.0)
    return args


class AppProcess:
    """observatory in its own process (:mod:`.scale_app`), asked questions over a pipe."""

    def __init__(self, kubeconfig: Path, pods: int, nodes: int, sync_timeout: float,
                 audit_log: Path | None = None) -> None:
        self._conn, child = SPAWN.Pipe()
        self.process = SPAWN.Process(target=scale_app.main, daemon=True,
                                     args=(child, str(kubeconfig), pods, nodes, SCREEN, f"{PROBE_NAMESPACE}/{PREFIX}",
                                           sync_timeout, str(audit_log) if audit_log else None))
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {0: asyncio.get_running_loop().create_future()}
        self.process.start()
        self.pid = self.process.pid
        asyncio.get_running_loop().add_reader(self._conn.fileno(), self._receive)

    def _receive(self) -> None:
        try:
            msg = self._conn.recv()
        except (EOFError, OSError):
            asyncio.get_running_loop().remove_reader(self._conn.fileno())
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(RuntimeError("observatory's process ended"))
            self._pending.clear()
            return
        fut = self._pending.pop(msg["id"], None)
        if fut is not None and not fut.done():
            if msg["ok"]:
                fut.set_result(msg["result"])
            else:
                fut.set_exception(RuntimeError(msg["error"]))

    async def running(self, timeout: float) -> None:
        await asyncio.wait_for(self._pending[0], timeout)

    async def ask(self, cmd: str, **kw: Any) -> Any:
        """Send ``cmd`` with ``kw`` and wait for the answer (the child enforces its own timeouts)."""
        ident = next(self._ids)
        fut = self._pending[ident] = asyncio.get_running_loop().create_future()
        self._conn.send({"cmd": cmd, "id": ident, **kw})
        return await asyncio.wait_for(fut, 1800)

    async def stop(self) -> None:
        try:
            self._conn.send({"cmd": "stop", "id": -1})
        except OSError:
            pass
        await asyncio.get_running_loop().run_in_executor(None, self.process.join, 30)
        if self.process.is_alive():
            self.process.kill()
        try:
            asyncio.get_running_loop().remove_reader(self._conn.fileno())
        except (ValueError, OSError):
            pass


async def count_pods(session: aiohttp.ClientSession) -> int:
    async with session.get("/api/v1/pods", params={"limit": "1"}) as resp:
        doc = await resp.json()
    return len(doc["items"]) + int(doc["metadata"].get("remainingItemCount") or 0)


async def measure_level(args: argparse.Namespace, rate: int, rep: int, app: AppProcess, writer: ProbeWriter,
                        peers: dict[str, KubectlWatch], churn: Churn | None, pids: dict[str, int]) -> dict[str, Any]:
    """Probe writes and key presses under ``rate`` watch events/s of background churn."""
    if rate and churn is not None:
        await churn.run(rate, "status")
        await asyncio.sleep(args.warmup)
    profiler = None
    if args.profile and rep == 0 and rate == max(args.churn):
        from bench.scale_profile import PySpy
        profiler = PySpy(app.pid, args.profile)
    audit_before = (await app.ask("stats", since=time.monotonic()))["audit_received"] if args.audit else 0
    meter = CpuMeter(pids)
    meter.start()
    window = time.monotonic()
    samples: list[dict[str, Any]] = []
    timeout = 15.0
    print(f"    churn {rate}/s: probing", end="", flush=True)
    for i in range(args.probes):
        print(".", end="", flush=True)
        name = f"{PREFIX}{rep}-{rate}-{i}"
        for op in OPS:
            sent = await getattr(writer, op)(name)
            peer, peer_name = (peers["events"], f"{name}.fs") if op == "event" else (peers["pods"], name)
            painted, printed = await asyncio.gather(
                app.ask("wait_paint", key=f"{PROBE_NAMESPACE}/{name}", expect=EXPECT[op], since=sent,
                        timeout=timeout),
                peer.arrival_after(peer_name, sent, timeout))
            samples.append({"op": op, "observatory": painted - sent if painted else None,
                            "kubectl": printed - sent if printed else None})
        await writer.delete(name)
    keys = await app.ask("keys", n=args.keys, timeout=5.0)
    cpu = meter.stop()
    stats = await app.ask("stats", since=window)
    if profiler is not None:
        profiler.stop()
    churned = await churn.pause() if rate and churn is not None else {"achieved_wps": 0.0}
    return {"rate": rate, "samples": samples, "keys": keys, "cpu_percent": cpu, "churn": churned,
            "audit_read": stats["audit_received"] - audit_before, "audit_malformed": stats["audit_malformed"],
            "repaint_s": scale_report.stats(stats["repaint_s"]), "repaints": len(stats["repaint_s"]),
            "gc_full": len(stats["gc_full_s"]), "gc_full_max_s": max(stats["gc_full_s"], default=0.0)}


async def run_once(args: argparse.Namespace, lab: LabProcess, session: aiohttp.ClientSession, rep: int,
                   churn: Churn | None, workdir: Path) -> dict[str, Any]:
    total = await count_pods(session)
    peers = {"pods": KubectlWatch(lab.kubeconfig, "pods", workdir / "kubectl-cache", PREFIX, expect_listed=total),
             "events": KubectlWatch(lab.kubeconfig, "events", workdir / "kubectl-cache", PREFIX)}
    app: AppProcess | None = None
    try:
        for peer in peers.values():
            await peer.start()
        kubectl_list_s = await peers["pods"].listed(600)
        app = AppProcess(lab.kubeconfig, total, lab.nodes, sync_timeout=900, audit_log=lab.audit_log)
        await app.running(900)
        sync = await app.ask("sync")
        out: dict[str, Any] = {"kubectl_list_s": kubectl_list_s, "sync": sync,
                               "app_mem_after_sync_kib": proc_mem_kib(app.pid)}
        print(f"    sync: model {sync['model_s']:.2f} s, render {sync['render_s']:.2f} s; kubectl list "
              f"{kubectl_list_s:.2f} s", flush=True)
        if (lab.nodes, lab.pods) == args.reflect_scale:
            writer = ProbeWriter(session, lab.nodes)
            pids = {"observatory": app.pid, "lab": lab.pid, "kubectl_pods": peers["pods"].proc.pid,
                    "kubectl_events": peers["events"].proc.pid}
            if churn is not None:
                pids["churn"] = churn.pid
            out["levels"] = []
            for rate in args.churn:
                level = await measure_level(args, rate, rep, app, writer, peers, churn, pids)
                obs = [s["observatory"] for s in level["samples"] if s["observatory"] is not None]
                print(f" observatory p50 {scale_report.stats(obs)['median'] * 1000:.0f} ms, "
                      f"p99 {scale_report.stats(obs)['p99'] * 1000:.0f} ms; keys p99 "
                      f"{scale_report.stats(level['keys']['latencies_s'])['p99'] * 1000:.0f} ms; CPU "
                      f"{level['cpu_percent']['observatory']:.0f}%", flush=True)
                out["levels"].append(level)
        out["app_mem_end_kib"] = proc_mem_kib(app.pid)
        return out
    finally:
        if app is not None:
            await app.stop()
        for peer in peers.values():
            await peer.stop()


def summarise_scale(nodes: int, pods: int, lab: LabProcess, runs: list[dict[str, Any]], lists: dict[str, Any],
                    fan: dict[str, Any] | None) -> dict[str, Any]:
    st = scale_report.stats
    out: dict[str, Any] = {
        "nodes": nodes, "pods": pods, "lab_start_s": lab.start_s, "runs": runs,
        "kubectl_list_s": st([r["kubectl_list_s"] for r in runs]),
        "sync_model_s": st([r["sync"]["model_s"] for r in runs]),
        "sync_render_s": st([r["sync"]["render_s"] for r in runs]),
        "app_peak_rss_bytes": st([r["app_mem_end_kib"].get("VmHWM", float("nan")) * 1024 for r in runs]),
        "lab_list": {"plain": st(lists["plain_s"]), "paged": st(lists["paged_500_s"]), "items": lists["items"]},
    }
    if any("levels" in r for r in runs):
        levels, by_op = [], {}
        for rate in sorted({lv["rate"] for r in runs for lv in r.get("levels", [])}):
            lvs = [lv for r in runs for lv in r.get("levels", []) if lv["rate"] == rate]
            samples = [s for lv in lvs for s in lv["samples"]]
            obs, kub = st([s["observatory"] for s in samples]), st([s["kubectl"] for s in samples])
            cpu = {k: st([lv["cpu_percent"].get(k, float("nan")) for lv in lvs])["median"]
                   for k in ("observatory", "lab", "churn")}
            cpu["kubectl"] = st([lv["cpu_percent"]["kubectl_pods"] + lv["cpu_percent"]["kubectl_events"]
                                 for lv in lvs])["median"]
            levels.append({
                "rate": rate, "observatory": obs, "kubectl": kub,
                "ratio_median": obs["median"] / kub["median"] if kub["median"] else None,
                "keys": st([x for lv in lvs for x in lv["keys"]["latencies_s"]]),
                "keys_missed": sum(lv["keys"]["missed"] for lv in lvs),
                "missed": sum(s["observatory"] is None for s in samples) + sum(s["kubectl"] is None for s in samples),
                "achieved_wps": st([lv["churn"]["achieved_wps"] for lv in lvs])["median"],
                "cpu_percent": cpu,
                "repaint_s": st([lv["repaint_s"]["median"] for lv in lvs]),
                "repaint_p99_s": st([lv["repaint_s"]["p99"] for lv in lvs])["median"],
                "gc_full": sum(lv["gc_full"] for lv in lvs), "gc_full_max_s": max(lv["gc_full_max_s"] for lv in lvs)})
        for op in OPS:
            samples = [s for r in runs for lv in r.get("levels", []) for s in lv["samples"] if s["op"] == op]
            o, k = st([s["observatory"] for s in samples])["median"], st([s["kubectl"] for s in samples])["median"]
            by_op[op] = {"observatory": o, "kubectl": k, "ratio": o / k if k else None}
        out["levels"], out["by_op"] = levels, by_op
    if fan is not None:
        fan["latency"] = st(fan.pop("latencies_s"))
        out["fan_out"] = fan
    return out


async def run_scale(args: argparse.Namespace, nodes: int, pods: int, workdir: Path) -> dict[str, Any]:
    print(f"{pods:,} pods / {nodes:,} nodes: starting the lab ...", flush=True)
    audit_log = workdir / f"audit-{nodes}-{pods}.log" if getattr(args, "audit_variant", False) else None
    lab = await asyncio.get_running_loop().run_in_executor(None, LabProcess, nodes, pods, workdir, audit_log)
    print(f"  lab ready in {lab.start_s:.1f} s at {lab.url}", flush=True)
    reflect = (nodes, pods) == args.reflect_scale
    churn: Churn | None = None
    try:
        async with aiohttp.ClientSession(base_url=lab.url) as session:
            lists = await time_list(session, args.repetitions)
            if reflect:
                churn = Churn(lab.url)
                print(f"  churn pools: {await churn.setup()}", flush=True)
            runs = []
            for rep in range(args.repetitions):
                print(f"  repetition {rep + 1}/{args.repetitions}", flush=True)
                runs.append(await run_once(args, lab, session, rep, churn, workdir))
            fan = None
            if reflect and churn is not None:
                print(f"  watch fan-out: {args.watchers} watchers x {args.fan_out_rate} writes/s", flush=True)
                fan = await fan_out(session, args.watchers, churn, args.fan_out_rate, args.fan_out_seconds, lab.pid)
            return summarise_scale(nodes, pods, lab, runs, lists, fan)
    finally:
        if churn is not None:
            churn.stop()
        lab.stop()


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        return {"scales": [await run_scale(args, n, p, Path(tmp)) for n, p in args.scales]}


def write_report(out_dir: Path, results: dict[str, Any]) -> str:
    """Write scale.json and scale.md (with the hand-written scale.notes.md, when there is one) to ``out_dir``."""
    notes = out_dir / "scale.notes.md"  # the engineering's before/after and the hot spots, kept across runs
    results["notes"] = notes.read_text() if notes.exists() else ""
    results["headline"] = scale_report.headline(results)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "scale.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    md = scale_report.markdown(results)
    (out_dir / "scale.md").write_text(md)
    return md


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.report:
        md = write_report(args.out_dir, json.loads((args.out_dir / "scale.json").read_text()))
        print(md)
        return 0
    env = lab_report.environment(str(REPO))
    if args.audit:
        from bench.scale_audit import compare

        return compare(args, env, run)
    started = time.monotonic()
    measured = asyncio.run(run(args))
    results = {
        "environment": env,
        "config": {"mode": "quick" if args.quick else "full", "scales": args.scales, "repetitions": args.repetitions,
                   "reflect_scale": args.reflect_scale, "churn": args.churn, "probes": args.probes,
                   "keys": args.keys, "warmup_s": args.warmup, "watchers": args.watchers,
                   "fan_out_rate": args.fan_out_rate, "fan_out_seconds": args.fan_out_seconds, "screen": SCREEN},
        **measured,
        "total_run_s": time.monotonic() - started,
        "loadavg_at_end": os.getloadavg(),
    }
    if args.profile and args.profile.exists():
        from bench.scale_profile import summarise
        results["profile"] = summarise(args.profile)
        results["profile_rate"] = max(args.churn)
    md = write_report(args.out_dir, results)
    print(md)
    print(f"wrote {args.out_dir / 'scale.json'} and {args.out_dir / 'scale.md'}")
    return 0
