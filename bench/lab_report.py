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
        "uncommitted_lab_changes": [ln[3:] for ln in dirty],
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
        + (" with uncommitted lab changes" if env["uncommitted_lab_changes"] else "")
        + f"; load average at start {env['loadavg_at_start'][0]:.2f}. Mode: {cfg['mode']}.",
        "",
        f"## List {cfg['pods']:,} pods over HTTP ({cfg['repetitions']} repetitions after one warm-up)",
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
        "server CPU | loop lag p99 | every watcher saw every event once, in order |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in results["watch"]:
        m = row["median"]
        c = row["correctness"]
        verdict = "yes" if c["ok"] else (
            f"**no**: missing {c['missing']}, duplicates {c['duplicates']}, out of order {c['out_of_order']}, "
            f"unexpected {c['unexpected']}, ended early {c['ended_early']}, bad JSON {c['bad_json']}")
        out.append(
            f"| {row['writer']} | {row['target_rate']:,} | {m['achieved_rate']:,.0f} | {m['delivered_per_s']:,.0f} | "
            f"{_ms(m['latency_p50_s'])} | {_ms(m['latency_p95_s'])} | {_ms(m['latency_p99_s'])} | "
            f"{_ms(m['latency_max_s'])} | {m['server_cpu_util']:.0%} | {_ms(m['loop_lag_p99_s'])} | "
            f"{verdict} ({c['events_checked']:,} events checked) |"
        )
    mem = results["memory"]
    out += [
        "",
        "## Lab process memory",
        "",
        "| Point | RSS | peak RSS (VmHWM) |",
        "|---|---:|---:|",
        f"| lab started, no pods | {mem['started']['VmRSS'] / 1024:,.0f} MiB | {mem['started']['VmHWM'] / 1024:,.0f} MiB |",
        f"| after creating {cfg['pods']:,} pods (took {results['populate_s']:.1f} s) | "
        f"{mem['populated']['VmRSS'] / 1024:,.0f} MiB | {mem['populated']['VmHWM'] / 1024:,.0f} MiB |",
        f"| end of the benchmark (after lists and churn) | {mem['final']['VmRSS'] / 1024:,.0f} MiB | "
        f"{mem['final']['VmHWM'] / 1024:,.0f} MiB |",
        "",
    ]
    return "\n".join(out)
