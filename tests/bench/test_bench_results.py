"""The recorded scale report: bench/results/ holds a full run from this machine that covers
every figure the issue lists, and the README quotes its Markdown (headings two levels down).

These read the committed files only; nothing here measures or asserts a time.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"


def finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def test_the_recorded_full_run_covers_every_figure_of_the_issue():
    results = json.loads((RESULTS / "scale.json").read_text())
    assert results["config"]["mode"] == "full"
    scales = {(s["pods"], s["nodes"]): s for s in results["scales"]}
    assert set(scales) == {(1000, 100), (10000, 1000), (50000, 1000)}  # initial sync at 1k, 10k and 50k
    for scale in scales.values():
        for figure in ("sync_model_s", "sync_render_s", "kubectl_list_s", "app_peak_rss_bytes"):
            assert finite(scale[figure]["median"]), figure
    reflect = scales[(10000, 1000)]
    assert [level["rate"] for level in reflect["levels"]] == [0, 100, 1000]
    for level in reflect["levels"]:
        for who in ("observatory", "kubectl"):  # the same writes seen by both, p50/p95/p99
            assert level[who]["n"] > 0 and all(finite(level[who][q]) for q in ("median", "p95", "p99"))
        assert finite(level["ratio_median"]) and finite(level["keys"]["p99"])
        assert all(finite(level["cpu_percent"][p]) for p in ("observatory", "lab", "kubectl"))
    assert set(reflect["by_op"]) == {"create", "event", "status", "bind"}  # bind, create, status change, event
    assert reflect["lab_list"]["items"] == 10000 and finite(reflect["lab_list"]["plain"]["median"])
    assert reflect["fan_out"]["delivered"] > 0 and finite(reflect["fan_out"]["latency"]["p99"])
    assert results["profile"]  # where a target is missed, the hot spots
    assert results["environment"]["cpu_count"]


def test_the_readme_quotes_the_recorded_report():
    report = (RESULTS / "scale.md").read_text().rstrip("\n").split("\n")
    quoted = "\n".join("##" + line if line.startswith("#") else line for line in report)
    assert quoted in (REPO / "README.md").read_text()


def test_the_recorded_scheduler_run_covers_both_kinds_of_pod_beside_the_bound():
    """bench/results/scheduler.json: the full default profile at 1,000 nodes, pods without and with inter-pod
    terms, the plain-bind loop and an earlier source tree (the baseline), alternating in one run; medians and
    ratios are those of the recorded runs."""
    import statistics

    results = json.loads((RESULTS / "scheduler.json").read_text())
    config, medians = results["config"], results["median_pods_per_second"]
    assert config["nodes"] == 1000 and results["decision_cost"]["nodes"] == 1000
    assert set(results["runs"]) == set(medians) == {"scheduler", "scheduler_affinity", "plain", "baseline"}
    assert config["baseline"] and "/" not in config["baseline"]  # a commit, not a path of the machine
    for kind, runs in results["runs"].items():
        assert len(runs) == config["repeats"] >= 3, kind
        assert all(run["pods"] == config["pods_per_run"] and finite(run["per_second"]) for run in runs), kind
        assert medians[kind] == statistics.median(run["per_second"] for run in runs), kind
        assert results["median_pods_per_cpu_second"][kind] == statistics.median(
            run["per_cpu_second"] for run in runs), kind
        if kind != "plain":
            assert all(run["outcomes"] == {"bound": config["pods_per_run"]} for run in runs), kind
    assert results["ratio"] == medians["scheduler"] / medians["plain"]
    assert results["ratio_affinity"] == medians["scheduler_affinity"] / medians["plain"]
    cost = results["decision_cost"]
    assert cost["nodes_to_find"] == 420  # percentageOfNodesToScore, adaptive at 1,000 nodes
    for pod in ("plain", "affinity"):
        for mode in ("sampled", "every_node"):
            assert finite(cost[f"{pod}_{mode}_ms"]) and finite(cost[f"{pod}_{mode}_cpu_ms"]), (pod, mode)
    assert all(finite(x) for x in results["machine"]["loadavg_before"] + results["machine"]["loadavg_after"])


def test_the_readme_quotes_the_recorded_scheduler_figures():
    results = json.loads((RESULTS / "scheduler.json").read_text())
    medians, per_cpu = results["median_pods_per_second"], results["median_pods_per_cpu_second"]
    readme = (REPO / "README.md").read_text()
    for kind in ("scheduler", "scheduler_affinity", "plain", "baseline"):
        assert f"{medians[kind]:,.1f}" in readme, kind
    assert f"{per_cpu['scheduler']:,.1f}" in readme and f"{per_cpu['scheduler_affinity']:,.1f}" in readme
    assert f"{medians['scheduler'] / medians['baseline']:.2f}" in readme
    assert (RESULTS / "scheduler.md").read_text().startswith("# Scheduler throughput (" + results["when"])
