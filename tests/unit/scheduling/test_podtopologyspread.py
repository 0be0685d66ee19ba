"""PodTopologySpread's PreFilter and Filter against upstream's own cases.

The table follows ``TestSingleConstraint`` (and the first case of ``TestMultipleConstraints``) in kube-scheduler's
``pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go``: four nodes, ``node-a`` and ``node-b`` in
``zone1``, ``node-x`` and ``node-y`` in ``zone2``, each also labelled ``node=<name>``; existing pods labelled
``foo``. As upstream's test, the plugin runs alone (its PreFilter, then its Filter per node), so other filters do
not hide its verdicts. Codes: S Success, U Unschedulable, UU UnschedulableAndUnresolvable.
"""

from __future__ import annotations

from typing import Any

import pytest

from observatory.scheduling import PodInfo, Snapshot, schedule_one
from observatory.scheduling.podtopologyspread import (
    ERR_CONSTRAINTS_NOT_MATCH,
    ERR_NODE_LABEL_NOT_MATCH,
    POD_TOPOLOGY_SPREAD,
    SpreadState,
    prefilter,
)

CODES = {"S": "Success", "U": "Unschedulable", "UU": "UnschedulableAndUnresolvable"}
ALLOC = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "status": ALLOC}


FOUR = [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b"),
        node("node-x", zone="zone2", node="node-x"), node("node-y", zone="zone2", node="node-y")]


def existing(name: str, on: str, namespace: str = "default", terminating: bool = False,
             **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
                            "labels": labels or {"foo": ""}}
    if terminating:
        meta["deletionTimestamp"] = "2026-12-01T00:00:00Z"
    return {"metadata": meta, "spec": {"nodeName": on, "containers": [{"name": "c", "image": "pause"}]},
            "status": {"phase": "Running"}}


def incoming(*constraints: tuple[int, str, str], labels: dict[str, str] | None = None,
             node_in: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}], "topologySpreadConstraints": [
        {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchExpressions": [{"key": selector, "operator": "Exists"}]}}
        for skew, key, selector in constraints]}
    if node_in:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "node", "operator": "In", "values": node_in}]}]}}}
    return {"metadata": {"name": "p", "namespace": "default", "labels": {"foo": ""} if labels is None else labels},
            "spec": spec}


SPREAD_2_1_0_3 = [existing("p-a1", "node-a"), existing("p-a2", "node-a"), existing("p-b1", "node-b"),
                  existing("p-y1", "node-y"), existing("p-y2", "node-y"), existing("p-y3", "node-y")]

CASES = [
    ("no existing pods", incoming((1, "zone", "foo")), FOUR, [], "S S S S"),
    ("no existing pods, incoming pod doesn't match itself", incoming((1, "zone", "bar")), FOUR, [], "S S S S"),
    ("existing pods in a different namespace do not count", incoming((1, "zone", "foo")), FOUR,
     [existing("p-a1", "node-a", "ns1"), existing("p-b1", "node-a", "ns2"), existing("p-x1", "node-x"),
      existing("p-y1", "node-y")], "S S U U"),
    ("pods spread across zones as 3/3, all nodes fit", incoming((1, "zone", "foo")), FOUR, SPREAD_2_1_0_3, "S S S S"),
    ("pods spread across zones as 1/2 due to absence of label 'zone' on node-b", incoming((1, "zone", "foo")),
     [FOUR[0], node("node-b", zon="zone1", node="node-b"), FOUR[2], FOUR[3]],
     [existing("p-a1", "node-a"), existing("p-b1", "node-b"), existing("p-x1", "node-x"),
      existing("p-y1", "node-y")], "S UU U U"),
    ("pod cannot be scheduled as all nodes don't have label 'rack'", incoming((1, "rack", "foo")),
     [FOUR[0], FOUR[2]], [], "UU UU"),
    ("pods spread across nodes as 2/1/0/3, only node-x fits", incoming((1, "node", "foo")), FOUR, SPREAD_2_1_0_3,
     "U U S U"),
    ("pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit", incoming((2, "node", "foo")), FOUR,
     SPREAD_2_1_0_3, "U S S U"),
    ("pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
     incoming((1, "node", "foo"), labels={"bar": ""}), FOUR, SPREAD_2_1_0_3, "U S S U"),
    ("incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
     incoming((1, "node", "foo"), node_in=["node-a", "node-y"]), FOUR, SPREAD_2_1_0_3, "S S S U"),
    ("terminating Pods should be excluded", incoming((1, "node", "foo")), [node("node-a", node="node-a"),
                                                                            node("node-b", node="node-b")],
     [existing("p-a", "node-a", terminating=True), existing("p-b", "node-b")], "S U"),
    ("two constraints on zone and node, spreads = [3/3, 2/1/0/3]", incoming((1, "zone", "foo"), (1, "node", "foo")),
     FOUR, SPREAD_2_1_0_3, "U U S U"),
]


@pytest.mark.parametrize(("pod", "nodes", "pods", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_single_and_multiple_constraints(pod, nodes, pods, want):
    snapshot = Snapshot(nodes, pods)
    state = prefilter(PodInfo.from_pod(pod), snapshot)
    assert isinstance(state, SpreadState)
    got = []
    for info in snapshot:
        status = state.filter(info)
        got.append("Success" if status is None else status[0])
    assert got == [CODES[c] for c in want.split()]


PAIR_ZONES = [node("node-a", **{"topology.kubernetes.io/zone": "a", "kubernetes.io/hostname": "node-a"}),
              node("node-b", **{"topology.kubernetes.io/zone": "b", "kubernetes.io/hostname": "node-b"})]


def test_the_fit_error_and_the_numbers_behind_it():
    """Three web pods in zone a, none in b, maxSkew 1: zone a is refused with upstream's reason, and the detail
    carries the counts the Why pane prints."""
    pods = [existing(f"web-{i}", "node-a", app="web") for i in range(3)]
    pod = {"metadata": {"name": "web-3", "namespace": "default", "labels": {"app": "web"}},
           "spec": {"containers": [{"name": "c", "image": "pause"}], "nodeSelector": {
               "topology.kubernetes.io/zone": "a"}, "topologySpreadConstraints": [
               {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                "nodeAffinityPolicy": "Ignore", "labelSelector": {"matchLabels": {"app": "web"}}}]}}
    decision = schedule_one(pod, PAIR_ZONES, pods)
    verdict = decision.verdicts["node-a"]
    assert (verdict.plugin, verdict.code, verdict.reasons) == (POD_TOPOLOGY_SPREAD, "Unschedulable",
                                                               (ERR_CONSTRAINTS_NOT_MATCH,))
    [violation] = verdict.details
    assert (violation.topology_value, violation.matching, violation.self_match, violation.minimum,
            violation.domains) == ("a", 3, 1, 0, {"a": 3, "b": 0})
    assert decision.message == (
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) didn't match pod "
        "topology spread constraints. no new claims to deallocate, preemption: 0/2 nodes are available: 1 No "
        "preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.")


def test_a_missing_topology_label_is_unresolvable():
    pod = incoming((1, "rack", "foo"))
    decision = schedule_one(pod, [FOUR[0]], [])
    assert decision.verdicts["node-a"].reasons == (ERR_NODE_LABEL_NOT_MATCH,)
    assert decision.message == (
        "0/1 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label). "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
        "scheduling.")


def test_min_domains_makes_the_global_minimum_zero():
    """minDomains 3 over two zones: the global minimum counts as 0, so 1 pod in each zone already hits maxSkew."""
    pods = [existing("p-a1", "node-a"), existing("p-x1", "node-x")]
    pod = incoming((1, "zone", "foo"))
    pod["spec"]["topologySpreadConstraints"][0]["minDomains"] = 3
    state = prefilter(PodInfo.from_pod(pod), Snapshot(FOUR, pods))
    assert isinstance(state, SpreadState)
    assert all(state.filter(n) is not None for n in Snapshot(FOUR, pods))


def test_match_label_keys_add_the_pods_own_values():
    """matchLabelKeys pod-template-hash: only pods of the same revision count."""
    pods = [existing("old-1", "node-a", app="web", **{"pod-template-hash": "old"}),
            existing("old-2", "node-a", app="web", **{"pod-template-hash": "old"})]
    pod = incoming((1, "node", "app"), labels={"app": "web", "pod-template-hash": "new"})
    pod["spec"]["topologySpreadConstraints"][0]["matchLabelKeys"] = ["pod-template-hash"]
    snapshot = Snapshot(FOUR, pods)
    state = prefilter(PodInfo.from_pod(pod), snapshot)
    assert isinstance(state, SpreadState)
    assert all(state.filter(n) is None for n in snapshot)  # the old revision's pods do not count


def test_schedule_anyway_constraints_do_not_filter():
    pod = incoming((1, "rack", "foo"))
    pod["spec"]["topologySpreadConstraints"][0]["whenUnsatisfiable"] = "ScheduleAnyway"
    assert prefilter(PodInfo.from_pod(pod), Snapshot(FOUR)) is None
    assert schedule_one(pod, FOUR, []).node is not None


def test_preemption_removes_victims_from_the_counts():
    pods = [existing("p-a1", "node-a"), existing("p-a2", "node-a")]
    pods[0]["spec"]["priority"] = pods[1]["spec"]["priority"] = 0
    pod = incoming((1, "node", "foo"))
    pod["spec"]["priority"] = 100
    pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "node", "operator": "In", "values": ["node-a"]}]}]}}}
    pod["spec"]["topologySpreadConstraints"][0]["nodeAffinityPolicy"] = "Ignore"
    decision = schedule_one(pod, [FOUR[0], FOUR[1]], pods)
    assert decision.verdicts["node-a"].plugin == POD_TOPOLOGY_SPREAD
    assert decision.preemption_candidates == ("node-a",)
    assert len(decision.preemption["node-a"].victims) == 2  # node-b has 0: node-a must drop to 0 as well
