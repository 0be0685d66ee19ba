"""The audit variant of the scale benchmark: ``python -m bench scale --audit`` (with ``--quick`` for one brief run).

It runs the scale benchmark twice on the same settings: first as usual, then with the lab started with
``--audit-log-path FILE`` (its default audit policy: pod writes, Bindings and node writes at ``RequestResponse``, other
writes at ``Metadata``, reads not at all) and observatory following that file as ``observatory --audit-log FILE``
does (:class:`observatory.kube.audit_log.AuditLogFeed`, handed to the screen as ``capabilities().audit``). At each
background churn rate it records the CPU of observatory's process and of the lab's (``/proc/PID/stat`` over the
level, percent of one core, medians over repetitions) without and with audit, the reflect latency medians, and the
audit events observatory read. It writes ``<out-dir>/scale_audit.json`` and ``<out-dir>/scale_audit.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["compare", "markdown"]


def _levels(measured: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Per churn rate at the reflect scale: CPU medians, reflect p50, audit events observatory read during the
    level (each run's)."""
    out: dict[int, dict[str, Any]] = {}
    for scale in measured["scales"]:
        for level in scale.get("levels", []):
            read = [lv["audit_read"] for r in scale["runs"] for lv in r.get("levels", [])
                    if lv["rate"] == level["rate"] and "audit_read" in lv]
            out[level["rate"]] = {"pods": scale["pods"], "nodes": scale["nodes"], "achieved_wps": level["achieved_wps"],
                                  "cpu_observatory": level["cpu_percent"]["observatory"],
                                  "cpu_lab": level["cpu_percent"]["lab"],
                                  "reflect_p50_s": level["observatory"]["median"], "audit_events_read": read}
    return out


def markdown(results: dict[str, Any]) -> str:
    """The comparison table: per churn rate, CPU of observatory and of the lab without and with audit."""
    lines = ["# Scale benchmark: the cost of auditing", "",
             f"Command: `{results['command']}`; commit {results['environment'].get('git_commit', '?')}; "
             f"{results['config']['repetitions']} repetition(s); load average at start "
             f"{results['environment'].get('loadavg_at_start', '?')}, at end {results['loadavg_at_end']}.", "",
             "The lab writes `--audit-log-path` with its default policy; observatory follows the file as "
             "`observatory --audit-log` does. CPU is percent of one core over each churn level (medians).", "",
             "| churn (watch events/s) | achieved w/s | observatory CPU | with audit | lab CPU | with audit | "
             "reflect p50 | with audit | audit events read in the level |",
             "|---|---|---|---|---|---|---|---|---|"]
    without, with_ = results["without_audit"], results["with_audit"]
    for rate in sorted(set(without) | set(with_), key=int):
        a, b = without.get(rate, {}), with_.get(rate, {})
        lines.append(
            f"| {rate} | {b.get('achieved_wps', float('nan')):.0f} | {a.get('cpu_observatory', float('nan')):.0f}% | "
            f"{b.get('cpu_observatory', float('nan')):.0f}% | {a.get('cpu_lab', float('nan')):.0f}% | "
            f"{b.get('cpu_lab', float('nan')):.0f}% | {a.get('reflect_p50_s', float('nan')) * 1000:.0f} ms | "
            f"{b.get('reflect_p50_s', float('nan')) * 1000:.0f} ms | {sum(b.get('audit_events_read', []))} |")
    lines += ["", "A single run on a shared 2-core machine is a record, not a threshold; compare the two columns of "
              "the same run."]
    return "\n".join(lines) + "\n"


def compare(args: argparse.Namespace, env: dict[str, Any],
            run: Callable[[argparse.Namespace], Coroutine[Any, Any, dict[str, Any]]]) -> int:
    """Run the benchmark without and then with audit, write scale_audit.json/.md to ``args.out_dir``."""
    started = time.monotonic()
    print("== without audit", flush=True)
    args.audit_variant = False
    plain = asyncio.run(run(args))
    print("== with audit: the lab writes --audit-log-path, observatory follows it", flush=True)
    args.audit_variant = True
    audited = asyncio.run(run(args))
    results = {
        "environment": env, "command": "python -m bench scale " + " ".join(sys.argv[2:] or ["--audit"]),
        "config": {"mode": "quick" if args.quick else "full", "scales": args.scales, "repetitions": args.repetitions,
                   "reflect_scale": args.reflect_scale, "churn": args.churn, "probes": args.probes},
        "without_audit": _levels(plain), "with_audit": _levels(audited),
        "total_run_s": time.monotonic() - started, "loadavg_at_end": os.getloadavg(),
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "scale_audit.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    md = markdown(json.loads(json.dumps(results, default=str)))
    (args.out_dir / "scale_audit.md").write_text(md)
    print(md)
    print(f"wrote {args.out_dir / 'scale_audit.json'} and {args.out_dir / 'scale_audit.md'}")
    return 0
