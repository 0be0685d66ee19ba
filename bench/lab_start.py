"""How long a big lab takes to start and to have its default-scheduler place the pods waiting for it.

``python -m bench.lab_start [--scenario scale:nodes=100,pods=5000] [--repeats 3] [--baseline-tree DIR]``

Each repetition runs, in a fresh Python process (so imports, the scenario's generation and the garbage collector
start cold each time), ``EmbeddedLab(LabSettings(kubelet=False), scenario=...)`` with the default bind delay, and
times, from just before ``start()``:

* **listening**: ``start()`` returned (the scenario is loaded, the API server listens, the kubeconfig is written);
* **all bound**: every pod for ``default-scheduler`` that is neither gated nor being deleted has ``spec.nodeName``
  (the scenario's pending pods are small enough to fit somewhere), read from the lab's store every 20 ms.

With ``--baseline-tree DIR`` (a checkout of an earlier commit) the same is run from that tree, alternating with this
one, and the ratio of the medians is reported. No assertion: the figures go to ``bench/results/lab_start.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
HERE = Path(__file__).resolve().parent.parent

CHILD = r"""
import asyncio, json, sys, tempfile, time
from pathlib import Path

async def main(scenario):
    t0 = time.monotonic()
    from observatory.embedded import EmbeddedLab
    from observatory.settings import LabSettings
    lab = EmbeddedLab(LabSettings(kubelet=False), scenario=scenario,
                      kubeconfig_path=Path(tempfile.mkdtemp()) / "kubeconfig")
    await lab.start()
    listening = time.monotonic() - t0

    def waiting():
        return sum(1 for p in lab.store.iter("pods")
                   if not (p.get("spec") or {}).get("nodeName")
                   and (p.get("spec") or {}).get("schedulerName", "default-scheduler") == "default-scheduler"
                   and not (p.get("spec") or {}).get("schedulingGates")
                   and not p["metadata"].get("deletionTimestamp"))

    before = waiting()
    deadline = t0 + 300
    while waiting() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    bound = time.monotonic() - t0
    left = waiting()
    await lab.stop()
    print(json.dumps({"listening": listening, "all_bound": bound, "pending_at_start": before, "left": left}))

asyncio.run(main(sys.argv[1]))
"""


def _commit(tree: Path) -> str:
    out = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def _run(tree: Path, scenario: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", CHILD, scenario], capture_output=True, text=True, env=env,
                         cwd=tree, timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"the lab run from {tree.name} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lab_start", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="scale:nodes=100,pods=5000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline-tree", type=Path, help="a checkout of an earlier commit to compare with")
    args = parser.parse_args(argv)
    trees = {"this": HERE}
    if args.baseline_tree:
        trees["baseline"] = args.baseline_tree.resolve()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(args.repeats):
        for name, tree in trees.items():
            runs[name].append(_run(tree, args.scenario))
    result: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"), "scenario": args.scenario, "repeats": args.repeats,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average": os.getloadavg()[0],
        "trees": {name: {"commit": _commit(tree), "runs": runs[name],
                         "median_listening": _median(runs[name], "listening"),
                         "median_all_bound": _median(runs[name], "all_bound")} for name, tree in trees.items()},
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "lab_start.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"# Lab start: {args.scenario} ({result['when']})", "",
             f"{result['machine']}; load average {result['load_average']:.2f} at the end; medians of "
             f"{args.repeats} runs, each in a fresh process, the trees alternating.", "",
             "| tree | commit | listening | every pending pod bound | pending at start |", "|---|---|---|---|---|"]
    for name, tree in result["trees"].items():
        lines.append(f"| {name} | {tree['commit']} | {tree['median_listening']:.2f} s | "
                     f"{tree['median_all_bound']:.2f} s | {tree['runs'][0]['pending_at_start']} |")
    if "baseline" in result["trees"]:
        this, base = result["trees"]["this"], result["trees"]["baseline"]
        lines += ["", f"Ratio this ÷ baseline: listening {this['median_listening'] / base['median_listening']:.2f}, "
                      f"every pending pod bound {this['median_all_bound'] / base['median_all_bound']:.2f}."]
    (RESULTS / "lab_start.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
