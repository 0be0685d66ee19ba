"""The lab's memory under many watches: N concurrent pod watches over M MB of pods, peak and settled RSS.

``python -m bench watchmem`` (or ``python -m bench.watch_memory``) starts ``observatory lab serve --scenario
scale:nodes=...,pods=M`` in a process of its own (simulated control plane off, so only the watches run) and, for
each number of watchers N, for each kind of watch:

* **initial**: N watches opened at once with ``resourceVersion`` unset (``--rv 0`` for ``resourceVersion=0``),
  each reading its synthetic ADDED events until it has every pod, then closing;
* **stalled**: N watches that read the response headers and then nothing for ``--stall`` seconds (a client that
  stops reading), then close.

Before each run the lab's peak RSS is reset (``5`` written to ``/proc/PID/clear_refs``, Linux's documented way to
reset ``VmHWM``); after it the benchmark reads ``VmHWM`` (the peak during the run), waits until the lab reports no
open watch (``GET /lab/faults``: ``openWatches``) and reads ``VmRSS`` (settled). Growth is peak minus the RSS
before the run; the ratio is growth at N over growth at one watcher, from the medians. Results go to
``bench/results/watch_memory.{json,md}``. Nothing here asserts: ``tests/lab/test_watch_memory.py`` is the bounded
check CI runs.
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
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024


@dataclass
class Lab:
    """``observatory lab serve`` in a child process."""

    proc: subprocess.Popen[str]
    url: str
    pods: int

    def status(self) -> dict[str, int]:
        """VmRSS and VmHWM of the lab process, in bytes."""
        out: dict[str, int] = {}
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(value.split()[0]) * 1024
        return out

    def reset_peak(self) -> bool:
        """Reset the lab's VmHWM to its current RSS; False where the kernel refuses."""
        try:
            with open(f"/proc/{self.proc.pid}/clear_refs", "w") as fh:
                fh.write("5")
        except OSError:
            return False
        return True


@contextlib.contextmanager
def serving(pods: int, nodes: int, workdir: Path, tree: Path = REPO) -> Iterator[Lab]:
    """A lab with ``pods`` generated pods on ``nodes`` nodes, run from the source ``tree`` (default this one),
    stopped with SIGTERM at the end of the block."""
    env = dict(os.environ, OBSERVATORY_LAB__PODGC="false", OBSERVATORY_LAB__NODE_LIFECYCLE="false",
               PYTHONPATH=str(tree))
    proc = subprocess.Popen(
        [sys.executable, "-m", "observatory", "lab", "serve", "--scenario", f"scale:nodes={nodes},pods={pods}",
         "--no-scheduler", "--no-kubelet", "--no-pv-controller", "--kubeconfig-out", str(workdir / "kubeconfig")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tree)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"(http://\S+)", line)
        if found is None:
            raise RuntimeError(f"the lab did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
        yield Lab(proc, found.group(1), pods)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def _initial_watch(session: aiohttp.ClientSession, rv: str | None, pods: int) -> int:
    """Watch pods from ``rv``; read until every pod's ADDED line is in; return the bytes read."""
    params = {"watch": "1", "timeoutSeconds": "600"}
    if rv is not None:
        params["resourceVersion"] = rv
    async with session.get("/api/v1/pods", params=params) as resp:
        assert resp.status == 200, resp.status
        lines = size = 0
        async for chunk in resp.content.iter_any():
            size += len(chunk)
            lines += chunk.count(b"\n")
            if lines >= pods:
                return size
    raise RuntimeError(f"the watch ended after {lines} of {pods} events")


async def _stalled_watch(url: str, rv: str | None, stall: float) -> None:
    """Open a pod watch, read the headers, then read nothing for ``stall`` seconds and close."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port), limit=1024)
    query = "watch=1" + (f"&resourceVersion={rv}" if rv is not None else "")
    writer.write(f"GET /api/v1/pods?{query} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    await reader.readuntil(b"\r\n\r\n")
    await asyncio.sleep(stall)
    writer.close()


async def _open_watches(session: aiohttp.ClientSession) -> int:
    async with session.get("/lab/faults") as resp:
        return int((await resp.json())["openWatches"])


async def measure(lab: Lab, watchers: int, kind: str, rv: str | None, stall: float = 3.0) -> dict[str, Any]:
    """One run: the lab's RSS before, its peak during ``watchers`` concurrent watches of ``kind``, and after."""
    async with aiohttp.ClientSession(base_url=lab.url, read_bufsize=1 << 20) as session:
        while await _open_watches(session):
            await asyncio.sleep(0.05)
        before = lab.status()["VmRSS"]
        peak_reset = lab.reset_peak()
        t0 = time.monotonic()
        if kind == "initial":
            sizes = await asyncio.gather(*(_initial_watch(session, rv, lab.pods) for _ in range(watchers)))
            received = min(sizes)
        else:
            await asyncio.gather(*(_stalled_watch(lab.url, rv, stall) for _ in range(watchers)))
            received = 0
        elapsed = time.monotonic() - t0
        peak = lab.status()["VmHWM"]
        while await _open_watches(session):
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        after = lab.status()["VmRSS"]
    return {"watchers": watchers, "kind": kind, "before": before, "peak": peak, "after": after,
            "growth": peak - before, "retained": after - before, "seconds": elapsed,
            "bytes_per_watcher": received, "peak_reset": peak_reset}


def _median_of(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(run[key] for run in runs))


def summarise(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Medians per (kind, watchers), and growth over the growth of one watcher of the same kind."""
    rows: list[dict[str, Any]] = []
    for kind in dict.fromkeys(r["kind"] for r in runs):
        one: float | None = None
        for n in sorted({r["watchers"] for r in runs if r["kind"] == kind}):
            mine = [r for r in runs if r["kind"] == kind and r["watchers"] == n]
            growth = _median_of(mine, "growth")
            if n == 1:
                one = growth
            rows.append({"kind": kind, "watchers": n, "runs": len(mine), "before": _median_of(mine, "before"),
                         "peak": _median_of(mine, "peak"), "growth": growth,
                         "retained": _median_of(mine, "retained"), "seconds": _median_of(mine, "seconds"),
                         "bytes_per_watcher": _median_of(mine, "bytes_per_watcher"),
                         "ratio_to_one": growth / one if one else None})
    return rows


def markdown(results: dict[str, Any]) -> str:
    config = results["config"]
    env = results["environment"]
    lines = [
        "# The lab's memory under many watches",
        "",
        f"Recorded {results['recorded']} with `{results['command']}`; commit {results['commit']}; "
        f"{env['cpus']} CPUs; Python {env['python']}; 1-minute load {env['load_before']:.2f} at start, "
        f"{env['load_after']:.2f} at end. {config['pods']:,} pods ({results['pods_mb']:.1f} MB of watch events per "
        f"watcher: M), a fresh lab per run, {config['repeats']} run(s) per row, medians. *initial*: N watches with "
        f"resourceVersion {config['rv'] or 'unset'} read every ADDED event and close; *stalled*: N watches read "
        f"nothing for {config['stall']:g} s and close. Growth is the peak RSS of the run minus the RSS before it; "
        "settled is the RSS once the lab has no open watch, minus the RSS before.",
        "",
        "| Tree | Watch | N | RSS before | peak RSS | growth | growth / M | growth / growth at N=1 | settled "
        "| seconds |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    mb = results["pods_mb"] * 1e6
    for label, tree in results["trees"].items():
        for row in tree["summary"]:
            ratio = "–" if row["ratio_to_one"] is None else f"{row['ratio_to_one']:.1f}"
            lines.append(f"| {label} | {row['kind']} | {row['watchers']} | {row['before'] / MIB:.0f} MiB "
                         f"| {row['peak'] / MIB:.0f} MiB | {row['growth'] / MIB:.1f} MiB | {row['growth'] / mb:.2f} "
                         f"| {ratio} | {row['retained'] / MIB:+.1f} MiB | {row['seconds']:.1f} |")
    return "\n".join(lines) + "\n"


def command(argv: list[str]) -> str:
    """The command line as recorded: the baseline tree's folder (a path of this machine) shows as ``DIR``."""
    shown = list(argv)
    for i, arg in enumerate(shown):
        if arg == "--baseline-tree" and i + 1 < len(shown):
            shown[i + 1] = "DIR"
        elif arg.startswith("--baseline-tree="):
            shown[i] = "--baseline-tree=DIR"
    return " ".join(["python -m bench watchmem", *shown])


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


async def run(args: argparse.Namespace) -> dict[str, Any]:
    counts = [int(n) for n in args.watchers.split(",")]
    kinds = [k for k in args.kinds.split(",") if k]
    trees: dict[str, Path] = {"this tree": REPO}
    if args.baseline_tree:
        trees[f"baseline {args.baseline_label}".strip()] = args.baseline_tree
    results: dict[str, Any] = {}
    load_before = os.getloadavg()[0]
    pods_mb = 0.0
    for label, tree in trees.items():
        runs: list[dict[str, Any]] = []
        for _ in range(args.repeats):
            for kind in kinds:
                for n in counts:
                    # A fresh lab per run: growth is measured from a lab that has never served a watch.
                    with tempfile.TemporaryDirectory(prefix="watchmem-") as tmp, \
                            serving(args.pods, args.nodes, Path(tmp), tree) as lab:
                        run_ = await measure(lab, n, kind, args.rv, args.stall)
                    pods_mb = max(pods_mb, run_["bytes_per_watcher"] / 1e6)
                    print(f"{label}: {kind:>8} N={n:<4} before {run_['before'] / MIB:6.0f} MiB  peak "
                          f"{run_['peak'] / MIB:6.0f} MiB  after {run_['after'] / MIB:6.0f} MiB  "
                          f"{run_['seconds']:.1f} s", flush=True)
                    runs.append(run_)
        results[label] = {"runs": runs, "summary": summarise(runs)}
    return {"recorded": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": command(sys.argv[1:] if args.argv is None else args.argv),
            "commit": _git("rev-parse", "--short=10", "HEAD"),
            "environment": {"cpus": os.cpu_count(), "python": platform.python_version(),
                            "load_before": load_before, "load_after": os.getloadavg()[0]},
            "config": {"pods": args.pods, "nodes": args.nodes, "watchers": counts, "kinds": kinds, "rv": args.rv,
                       "repeats": args.repeats, "stall": args.stall, "baseline": args.baseline_label},
            "pods_mb": pods_mb, "trees": results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench watchmem", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=4000, help="pods in the lab (default 4000, about 10 MB)")
    parser.add_argument("--nodes", type=int, default=50, help="nodes in the lab (default 50)")
    parser.add_argument("--watchers", default="1,10,50,100",
                        help="comma-separated watcher counts (default 1,10,50,100)")
    parser.add_argument("--kinds", default="initial,stalled", help="initial, stalled or both (default both)")
    parser.add_argument("--rv", default=None, help="resourceVersion of the watches (default unset; 0 is the other)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per row (default 3)")
    parser.add_argument("--stall", type=float, default=3.0, help="seconds a stalled watch reads nothing (default 3)")
    parser.add_argument("--baseline-tree", type=Path, default=None,
                        help="another source tree (e.g. a worktree of an earlier commit) measured the same way")
    parser.add_argument("--baseline-label", default="", help="what the baseline is, e.g. its commit")
    parser.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results", help="where the results go")
    args = parser.parse_args(argv)
    args.argv = argv
    results = asyncio.run(run(args))
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "watch_memory.json").write_text(json.dumps(results, indent=1) + "\n")
    text = markdown(results)
    (args.out_dir / "watch_memory.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
