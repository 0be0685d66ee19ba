"""Summary statistics, the environment record and the Markdown rendering of the lab benchmark's results."""

from __future__ import annotations

import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default), ``q`` in [0, 100]; NaN for no values."""
    if not values:
        return float("nan")
    s = sorted(values)
    pos = (len(s) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summary(values: Sequence[float]) -> dict[str, Any]:
    """median, p95, min and max of repeated measurements, plus the raw samples."""
    return {"median": percentile(values, 50), "p95": percentile(values, 95), "min": min(values) if values else None,
            "max": max(values) if values else None, "n": len(values), "samples": list(values)}


def _run(args: list[str]) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=20, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def environment(repo: str) -> dict[str, Any]:
    """Where and on what the numbers were taken. Git is only read (rev-parse, status)."""
    import aiohttp
    import kubernetes_asyncio

    cpu_model = ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu_model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "")
    except OSError:
        pass
    kubectl = shutil.which("kubectl")
    dirty = _run(["git", "-C", repo, "status", "--porcelain", "--", "observatory"]).splitlines()
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": cpu_model,
        "loadavg_at_start": os.getloadavg(),
        "aiohttp": aiohttp.__version__,
        "kubernetes_asyncio": kubernetes_asyncio.__version__,
        "kubectl": _run([kubectl, "version", "--client", "-o", "yaml"]).split("gitVersion:")[-1].split()[0]
        if kubectl else None,
        "git_commit": _run(["git", "-C", repo, "rev-parse", "HEAD"]),
        "uncommitted_lab_changes": [ln[2:].strip() for ln in dirty],  # "XY path"; _run strips the first line's X
    }


def _ms(x: float | None) -> str:
    if x is None or x != x:
        return "–"
    return f"{x * 1000:,.0f} ms" if x >= 0.1 else f"{x * 1000:,.1f} ms"


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def markdown(results: dict[str, Any]) -> str:
    """The results as Markdown tables (lists, watch fan-out, memory), figures rounded for reading."""
    env, cfg = results["environment"], results["config"]
    out = [
        f"# Lab benchmark results ({env['date']})",
        "",
        f"{cfg['pods']:,} pods; {env['cpu_count']} CPUs ({env['cpu_model'] or env['machine']}); Python "
        f"{env['python']}; aiohttp {env['aiohttp']}; kubernetes-asyncio {env['kubernetes_asyncio']}; kubectl "
        f"{env['kubectl']}; commit {env['git_commit'][:10]}"
        + (f" with uncommitted changes (observatory/ sources sha256 {env['lab_source_sha256'][:12]})"
           if env["uncommitted_lab_changes"] else "")
        + f"; 1-minute load average {env['loadavg_at_start'][0]:.2f} at start, "
        + f"{results.get('loadavg_at_end', [float('nan')])[0]:.2f} at end. Mode: {cfg['mode']}; "
        + ("simulated control plane **on**; " if cfg.get("simulations") else "simulated control plane off; ")
        + f"whole run {results['total_run_s']:.0f} s.",
        "",
        f"## List {cfg['pods']:,} pods over HTTP ({cfg['repetitions']} timed repetitions"
        + (", each after one warm-up" if cfg["warmup"] else ", no warm-up")
        + (f"; kubectl {cfg['kubectl_repetitions']}"
           if 0 < cfg["kubectl_repetitions"] != cfg["repetitions"] else "") + ")",
        "",
        "| Request | median | p95 | min | server CPU (median) | body | items |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results["list"]:
        wall, cpu = row["wall_s"], row.get("server_cpu_s")
        out.append(
            f"| {row['label']} | {_ms(wall['median'])} | {_ms(wall['p95'])} | {_ms(wall['min'])} | "
            f"{_ms(cpu['median']) if cpu else '–'} | {_mb(row['bytes']) if row.get('bytes') else '–'} | "
            f"{row['items']:,} |"
        )
    decode = results.get("client_plain_json_loads_s") or {}
    if decode.get("n"):
        out += ["", f"`json.loads` of the plain list body in the client, after (a)'s clock stopped: "
                    f"{_ms(decode['median'])} (median of {decode['n']}); (b) and (d) include that decoding."]
    ratio = results.get("ratio_lab_json_to_kubectl")
    if ratio is not None:
        out += ["", f"Lab plain JSON list / `kubectl get pods -A -o name` wall time (medians): **{ratio:.2f}** "
                    "(information only; kubectl pages by 500 and starts a process each time)."]
    out += [
        "",
        f"## Watch fan-out: {cfg['watchers']} watchers on `/api/v1/pods?watch=1` under churn "
        f"({cfg['watch_duration_s']:g} s per run, {cfg['watch_repetitions']} run(s) each; medians over runs)",
        "",
        "| Writer | target w/s | achieved w/s | delivered events/s | latency p50 | p95 | p99 | max | "
        "server CPU | loop lag p99 | gen-2 GC runs, longest pause | every watcher saw every event once, in order |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in results["watch"]:
        m = row["median"]
        gc_runs = sum(r["gc_gen2_collections"] for r in row["runs"])
        gc_max = max(r["gc_gen2_max_pause_s"] for r in row["runs"])
        c = row["correctness"]
        verdict = "yes" if c["ok"] else (
            f"**no**: missing {c['missing']}, duplicates {c['duplicates']}, out of order {c['out_of_order']}, "
            f"unexpected {c['unexpected']}, ended early {c['ended_early']}, bad JSON {c['bad_json']}")
        if c.get("write_errors"):
            verdict += f"; **{c['write_errors']} writes failed**"
        out.append(
            f"| {row['writer']} | {row['target_rate']:,} | {m['achieved_rate']:,.0f} | {m['delivered_per_s']:,.0f} | "
            f"{_ms(m['latency_p50_s'])} | {_ms(m['latency_p95_s'])} | {_ms(m['latency_p99_s'])} | "
            f"{_ms(m['latency_max_s'])} | {m['server_cpu_util']:.0%} | {_ms(m['loop_lag_p99_s'])} | "
            f"{gc_runs}, {_ms(gc_max)} | {verdict} ({c['events_checked']:,} events checked) |"
        )
    notes = []
    for row in results["watch"]:
        runs = row["runs"]
        if row["writer_key"] == "inloop":
            per_write = [r["driver"]["registry_patch_s"] / r["driver"]["writes"]
                         for r in runs if r["driver"].get("writes")]
            notes.append(f"in-loop at {row['target_rate']:,} w/s: `registry.patch` took "
                         f"{percentile(per_write, 50) * 1e6:,.0f} µs per write (median over runs)")
        else:
            p50 = percentile([r["driver"]["patch_latency_p50_s"] for r in runs], 50)
            p99 = percentile([r["driver"]["patch_latency_p99_s"] for r in runs], 50)
            notes.append(f"HTTP at {row['target_rate']:,} w/s: PATCH round trip p50 {_ms(p50)}, p99 {_ms(p99)}")
    if notes:
        out += ["", "Writer cost: " + "; ".join(notes) + "."]
    mem = results["memory"]
    out += ["", "## Lab process memory", "", "| Point | RSS | peak RSS (VmHWM) |", "|---|---:|---:|"]
    points = (("started", "lab started, no pods"),
              ("populated", f"after creating {cfg['pods']:,} pods (took {results['populate_s']:.1f} s)"),
              ("after_lists", "after the list measurements"),
              ("final", "end of the benchmark (after the watch runs)"))
    for key, label in points:
        m = mem.get(key) or {}
        if m:
            out.append(f"| {label} | {m['VmRSS'] / 1024:,.0f} MiB | {m['VmHWM'] / 1024:,.0f} MiB |")
    out.append("")
    return "\n".join(out)
