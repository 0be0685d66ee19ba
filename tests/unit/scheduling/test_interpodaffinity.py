"""InterPodAffinity's PreFilter and Filter against upstream's own cases.

The table follows ``TestRequiredAffinitySingleNode`` in kube-scheduler's
``pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go`` (v1.34): one node ``node1`` labelled
``region=r1, zone=z11``, an existing pod ``service=securityscan`` on it, and the pod to place; ``placed`` is upstream's
``expectPlaced``. The message tests check the reason strings and codes of the three rejections and the FitError
text the scheduler writes for them.
"""

from __future__ import annotations

from typing import Any

import pytest

from observatory.scheduling import Snapshot, filter_nodes, schedule_one
from observatory.scheduling.interpodaffinity import (
    ERR_AFFINITY_RULES,
    ERR_ANTI_AFFINITY_RULES,
    ERR_EXISTING_ANTI_AFFINITY_RULES,
    INTER_POD_AFFINITY,
)
from observatory.scheduling.labelselector import compile_label_selector
from observatory.scheduling.verdicts import UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE

NS1, DEFAULT = "ns1", "default"
NODE1 = {"metadata": {"name": "node1", "labels": {"region": "r1", "zone": "z11"}},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
SECURITYSCAN = {"service": "securityscan"}
S1 = {"security": "S1"}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def term(topology: str, *expressions: dict[str, Any], namespaces: list[str] | None = None,
         namespace_selector: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"labelSelector": {"matchExpressions": list(expressions)}, "topologyKey": topology}
    if namespaces is not None:
        out["namespaces"] = namespaces
    if namespace_selector is not None:
        out["namespaceSelector"] = namespace_selector
    return out


def pod(name: str, namespace: str = DEFAULT, labels: dict[str, str] | None = None, node: str = "",
        affinity: list[dict[str, Any]] | None = None, anti: list[dict[str, Any]] | None = None,
        priority: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    aff: dict[str, Any] = {}
    if affinity:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": affinity}
    if anti:
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    if aff:
        spec["affinity"] = aff
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
                         "labels": labels or {}}, "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


EXISTING = pod("pod1", NS1, SECURITYSCAN, "node1")

CASES = [
    ("no required pod affinity, a node with no existing pods", pod("p"), [], True),
    ("PodAffinity In matches the existing pod",
     pod("p", NS1, S1, affinity=[term("region", expr("service", "In", "securityscan", "value2"))]), [EXISTING], True),
    ("PodAffinity NotIn matches the existing pod",
     pod("p", NS1, S1, affinity=[term("region", expr("service", "NotIn", "securityscan3", "value3"))]), [EXISTING],
     True),
    ("PodAffinity does not match: another namespace listed",
     pod("p", DEFAULT, S1, affinity=[term("", expr("service", "In", "securityscan", "value2"),
                                         namespaces=["DiffNameSpace"])]),
     [pod("pod1", "ns", SECURITYSCAN, "node1")], False),
    ("PodAffinity does not match: unmatching labelSelector",
     pod("p", DEFAULT, SECURITYSCAN, affinity=[term("", expr("service", "In", "antivirusscan", "value2"))]),
     [EXISTING], False),
    ("several terms, different operators, all match",
     pod("p", NS1, S1, affinity=[term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                                term("region", expr("service", "In", "securityscan"),
                                     expr("service", "NotIn", "WrongValue"))]), [EXISTING], True),
    ("matchExpressions are ANDed: one item does not match",
     pod("p", DEFAULT, S1, affinity=[term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                                    term("region", expr("service", "In", "securityscan2"),
                                         expr("service", "NotIn", "WrongValue"))]), [EXISTING], False),
    ("PodAffinity and PodAntiAffinity both satisfied",
     pod("p", NS1, S1, affinity=[term("region", expr("service", "In", "securityscan", "value2"))],
         anti=[term("node", expr("service", "In", "antivirusscan", "value2"))]), [EXISTING], True),
    ("PodAffinity, PodAntiAffinity and the existing pod's anti-affinity all satisfied",
     pod("p", DEFAULT, S1, affinity=[term("region", expr("service", "In", "securityscan", "value2"))],
         anti=[term("node", expr("service", "In", "antivirusscan", "value2"))]),
     [pod("pod1", DEFAULT, SECURITYSCAN, "node1", anti=[term("node", expr("service", "In", "antivirusscan",
                                                                            "value2"))])], True),
    ("PodAffinity satisfied, PodAntiAffinity not",
     pod("p", DEFAULT, S1, affinity=[term("region", expr("service", "In", "securityscan", "value2"))],
         anti=[term("zone", expr("service", "In", "securityscan", "value2"))]),
     [pod("pod1", DEFAULT, SECURITYSCAN, "node1")], False),
    ("the existing pod's anti-affinity is not satisfied (symmetry)",
     pod("p", DEFAULT, SECURITYSCAN, affinity=[term("region", expr("service", "In", "securityscan", "value2"))],
         anti=[term("node", expr("service", "In", "antivirusscan", "value2"))]),
     [pod("pod1", DEFAULT, SECURITYSCAN, "node1", anti=[term("zone", expr("service", "In", "securityscan",
                                                                            "value2"))])], False),
    ("the pod does not match its own NotIn term and no pod matches it",
     pod("p", DEFAULT, SECURITYSCAN, affinity=[term("region", expr("service", "NotIn", "securityscan", "value2"))]),
     [pod("pod1", DEFAULT, SECURITYSCAN, "node2")], False),
    ("an existing pod's anti-affinity applies to a pod without any",
     pod("p", DEFAULT, SECURITYSCAN),
     [pod("pod1", DEFAULT, SECURITYSCAN, "node1", anti=[term("zone", expr("service", "In", "securityscan",
                                                                            "value2"))])], False),
    ("an existing pod's NotIn anti-affinity does not match the pod",
     pod("p", DEFAULT, SECURITYSCAN),
     [pod("pod1", DEFAULT, SECURITYSCAN, "node1", anti=[term("zone", expr("service", "NotIn", "securityscan",
                                                                            "value2"))])], True),
    ("anti-affinity symmetry a1: partial match on terms",
     pod("p", DEFAULT, SECURITYSCAN, anti=[term("zone", expr("service", "Exists")),
                                           term("zone", expr("security", "Exists"))]),
     [pod("pod1", DEFAULT, S1, "node1", anti=[term("zone", expr("security", "Exists"))])], False),
    ("anti-affinity symmetry a2: partial match on terms",
     pod("p", DEFAULT, S1, anti=[term("zone", expr("security", "Exists"))]),
     [pod("pod1", DEFAULT, SECURITYSCAN, "node1", anti=[term("zone", expr("service", "Exists")),
                                                         term("zone", expr("security", "Exists"))])], False),
    ("anti-affinity symmetry b1",
     pod("p", DEFAULT, {"abc": "", "xyz": ""}, anti=[term("zone", expr("abc", "Exists")),
                                                     term("zone", expr("def", "Exists"))]),
     [pod("pod1", DEFAULT, {"def": "", "xyz": ""}, "node1", anti=[term("zone", expr("abc", "Exists")),
                                                                   term("zone", expr("def", "Exists"))])], False),
]


@pytest.mark.parametrize(("pod_to_place", "pods", "placed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_required_affinity_single_node(pod_to_place, pods, placed):
    verdict = filter_nodes(pod_to_place, [NODE1], pods)["node1"]
    assert verdict.feasible is placed, verdict


def test_an_invalid_selector_fails_prefilter_on_every_node():
    bad = pod("p", DEFAULT, SECURITYSCAN, affinity=[term("region", expr("service", "In", "{{.bad-value.}}")),
                                                    term("node", expr("service", "In", "antivirusscan", "value2"))])
    decision = schedule_one(bad, [NODE1], [EXISTING])
    [verdict] = decision.verdicts.values()
    assert (verdict.plugin, verdict.code) == (INTER_POD_AFFINITY, UNSCHEDULABLE_AND_UNRESOLVABLE)
    assert decision.message.startswith("0/1 nodes are available: parsing pod: ")


def test_affinity_with_a_namespace_selector():
    """Upstream's "affinity with NamespaceSelector": the existing pod's namespace is labelled team=team1."""
    incoming = pod("p", DEFAULT, S1, affinity=[term("region", expr("service", "In", "securityscan", "value2"),
                                                    namespace_selector={"matchExpressions": [
                                                        expr("team", "In", "team1")]})])
    for namespace, team, placed in (("subteam1.team1", "team1", True), ("subteam1.team2", "team2", False)):
        snapshot = Snapshot([NODE1], [pod("pod1", namespace, SECURITYSCAN, "node1")])
        snapshot.set_namespace({"metadata": {"name": namespace, "labels": {"team": team}}})
        snapshot.set_namespace({"metadata": {"name": DEFAULT}})
        assert filter_nodes(incoming, snapshot)["node1"].feasible is placed, namespace


def test_an_existing_pods_anti_affinity_namespace_selector_reads_the_incoming_pods_namespace_labels():
    existing = pod("pod1", "subteam2.team1", SECURITYSCAN, "node1",
                   anti=[term("zone", expr("security", "Exists"),
                              namespace_selector={"matchLabels": {"team": "team1"}})])
    for team, placed in (("team1", False), ("team2", True)):
        snapshot = Snapshot([NODE1], [existing])
        snapshot.set_namespace({"metadata": {"name": "subteam1.x", "labels": {"team": team}}})
        assert filter_nodes(pod("p", "subteam1.x", S1), snapshot)["node1"].feasible is placed, team


def test_an_empty_namespace_selector_means_every_namespace_even_without_namespace_labels():
    incoming = pod("p", DEFAULT, S1, anti=[term("zone", expr("service", "Exists"), namespace_selector={})])
    verdict = filter_nodes(incoming, [NODE1], [pod("pod1", "elsewhere", SECURITYSCAN, "node1")])["node1"]
    assert (verdict.plugin, verdict.reasons) == (INTER_POD_AFFINITY, (ERR_ANTI_AFFINITY_RULES,))


WORKER = {"metadata": {"name": "pair-worker", "labels": {"kubernetes.io/hostname": "pair-worker"}},
          "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
CONTROL_PLANE = {"metadata": {"name": "pair-control-plane",
                              "labels": {"kubernetes.io/hostname": "pair-control-plane",
                                         "node-role.kubernetes.io/control-plane": ""}},
                 "spec": {"taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]},
                 "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
WEB = {"app": "web"}
HOSTNAME = "kubernetes.io/hostname"


def test_the_issue_example_required_anti_affinity_on_the_pair_cluster():
    """A pod with required anti-affinity app=web by hostname, against a node already running an app=web pod: the
    FitError kube-scheduler writes (the text quoted from a real cluster in the issue)."""
    incoming = pod("web-2", DEFAULT, WEB, anti=[term(HOSTNAME, expr("app", "In", "web"))])
    decision = schedule_one(incoming, [CONTROL_PLANE, WORKER], [pod("web-1", DEFAULT, WEB, "pair-worker")])
    assert decision.node is None
    assert decision.verdicts["pair-worker"].plugin == INTER_POD_AFFINITY
    assert decision.verdicts["pair-worker"].code == UNSCHEDULABLE
    assert decision.message == (
        "0/2 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are "
        "available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.")


def test_required_affinity_with_no_match_is_unresolvable():
    incoming = pod("cache", DEFAULT, {"app": "cache"}, affinity=[term(HOSTNAME, expr("app", "In", "db"))])
    decision = schedule_one(incoming, [CONTROL_PLANE, WORKER], [pod("web-1", DEFAULT, WEB, "pair-worker")])
    verdict = decision.verdicts["pair-worker"]
    assert (verdict.plugin, verdict.code, verdict.reasons) == (INTER_POD_AFFINITY, UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                               (ERR_AFFINITY_RULES,))
    assert decision.message == (
        "0/2 nodes are available: 1 node(s) didn't match pod affinity rules, 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling.")


def test_the_first_pod_of_a_self_affine_group_is_placed():
    """satisfyPodAffinity: no pod anywhere matches, and the pod matches its own terms."""
    incoming = pod("db-0", DEFAULT, {"app": "db"}, affinity=[term(HOSTNAME, expr("app", "In", "db"))])
    assert schedule_one(incoming, [CONTROL_PLANE, WORKER], []).node == "pair-worker"


def test_existing_pods_anti_affinity_reason_and_a_lower_priority_victim():
    existing = pod("loner", DEFAULT, {"app": "loner"}, "pair-worker", priority=0,
                   anti=[term(HOSTNAME, expr("app", "Exists"))])
    incoming = pod("web-2", DEFAULT, WEB, priority=0)
    decision = schedule_one(incoming, [CONTROL_PLANE, WORKER], [existing])
    assert decision.verdicts["pair-worker"].reasons == (ERR_EXISTING_ANTI_AFFINITY_RULES,)
    assert "1 node(s) didn't satisfy existing pods anti-affinity rules" in decision.message
    assert "1 No preemption victims found for incoming pod" in decision.message
    # a higher-priority pod may preempt the one whose anti-affinity is in the way (RemovePod on the counts)
    preemptor = pod("web-3", DEFAULT, WEB, priority=1000)
    decision = schedule_one(preemptor, [CONTROL_PLANE, WORKER], [existing])
    assert decision.preemption_candidates == ("pair-worker",)
    assert decision.preemption["pair-worker"].victims == ("default/loner",)


def test_assumed_pods_count_for_the_next_decision():
    """Two replicas with anti-affinity to each other on one schedulable node: the second waits for the first."""
    snapshot = Snapshot([CONTROL_PLANE, WORKER])
    first = pod("web-1", DEFAULT, WEB, anti=[term(HOSTNAME, expr("app", "In", "web"))])
    decision = schedule_one(first, snapshot)
    assert decision.node == "pair-worker"
    snapshot.assume(first, decision.node)
    second = pod("web-2", DEFAULT, WEB, anti=[term(HOSTNAME, expr("app", "In", "web"))])
    assert schedule_one(second, snapshot).verdicts["pair-worker"].reasons == (ERR_ANTI_AFFINITY_RULES,)


@pytest.mark.parametrize(("raw", "labels", "matches"), [
    (None, {"a": "b"}, False),
    ({}, {}, True),
    ({"matchLabels": {"a": "b"}}, {"a": "b", "c": "d"}, True),
    ({"matchLabels": {"a": "b"}}, {"a": "c"}, False),
    ({"matchExpressions": [expr("a", "NotIn", "x")]}, {}, True),
    ({"matchExpressions": [expr("a", "DoesNotExist")]}, {"a": ""}, False),
    ({"matchExpressions": [expr("a", "Bogus", "x")]}, {"a": "x"}, False),
])
def test_label_selector_as_selector(raw, labels, matches):
    assert compile_label_selector(raw).matches(labels) is matches
