"""InterPodAffinity's PreScore, Score and NormalizeScore, with the cases of upstream's
``plugins/interpodaffinity/scoring_test.go`` (``TestPreferredAffinity``): every node is feasible, and the
expected lists are upstream's."""

from __future__ import annotations

from typing import Any

import pytest

from observatory.scheduling import PodInfo, Snapshot, schedule_one
from observatory.scheduling.interpodaffinity_scoring import (
    inter_pod_affinity_normalize,
    inter_pod_affinity_prescore,
    inter_pod_affinity_score,
)

from .objects import node, pod

CHINA, INDIA = {"region": "China"}, {"region": "India"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1, S2 = {"security": "S1"}, {"security": "S2"}


def security_in(*values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": "security", "operator": "In", "values": list(values)}]}


def weighted(weight: int, selector: dict, key: str, **term: Any) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": {"labelSelector": selector, "topologyKey": key, **term}}


STAY_WITH_S1_IN_REGION = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(5, security_in("S1"), "region")]}}
STAY_WITH_S2_IN_REGION = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(6, security_in("S2"), "region")]}}
AFFINITY3 = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(8, {"matchExpressions": [{"key": "security", "operator": "NotIn", "values": ["S1"]},
                                      {"key": "security", "operator": "In", "values": ["S2"]}]}, "region"),
    weighted(2, {"matchExpressions": [{"key": "security", "operator": "Exists"},
                                      {"key": "wrongkey", "operator": "DoesNotExist"}]}, "region")]}}
HARD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": security_in("S1", "value2"), "topologyKey": "region"},
    {"labelSelector": {"matchExpressions": [{"key": "security", "operator": "Exists"},
                                            {"key": "wrongkey", "operator": "DoesNotExist"}]},
     "topologyKey": "region"}]}}
AWAY_FROM_S1_IN_AZ = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(5, security_in("S1"), "az")]}}
AWAY_FROM_S2_IN_AZ = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(5, security_in("S2"), "az")]}}
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = {
    "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [weighted(8, security_in("S1"), "region")]},
    "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [weighted(5, security_in("S2"), "az")]}}
TEAM1 = {"matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]}
AFFINITY_NAMESPACE_SELECTOR = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(5, security_in("S1"), "region", namespaces=["subteam2.team2"], namespaceSelector=TEAM1)]}}
ANTI_AFFINITY_NAMESPACE_SELECTOR = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(5, security_in("S1"), "region", namespaces=["subteam2.team2"], namespaceSelector=TEAM1)]}}
NAMESPACES = [("subteam1.team1", {"team": "team1"}), ("subteam2.team1", {"team": "team1"}),
              ("subteam1.team2", {"team": "team2"}), ("subteam2.team2", {"team": "team2"})]

_seq = iter(range(10**6))


def p(labels: dict | None = None, node_name: str | None = None, affinity: dict | None = None,
      namespace: str = "default") -> dict[str, Any]:
    n = next(_seq)
    obj = pod(f"p{n}", node_name=node_name, namespace=namespace, uid=f"u{n}",
              **({"affinity": affinity} if affinity else {}))
    obj["metadata"]["labels"] = dict(labels or {})
    return obj


def scores(the_pod: dict, nodes: list[dict], pods: list[dict], *, hard_weight: int = 1) -> dict[str, int] | None:
    snap = Snapshot(nodes, pods)
    for name, labels in NAMESPACES:
        snap.set_namespace({"metadata": {"name": name, "labels": labels}})
    snap.set_namespace({"metadata": {"name": "default"}})
    state = inter_pod_affinity_prescore(PodInfo.from_pod(the_pod), snap, hard_weight)
    if state is None:
        return None
    feasible = list(snap)
    raw = inter_pod_affinity_score(state, feasible)
    return dict(zip((n.name for n in feasible), inter_pod_affinity_normalize(raw), strict=True))


def nodes_(*labels: dict) -> list[dict]:
    return [node(f"node{i}", labels=lab) for i, lab in enumerate(labels, 1)]


def test_no_affinity_anywhere_skips():
    assert scores(p(S1), nodes_(CHINA, INDIA, AZ1), []) is None


CASES = [
    ("pod that matches topology key and pods on the node scores highest",
     p(S1, affinity=STAY_WITH_S1_IN_REGION), [p(S1, "node1"), p(S2, "node2"), p(S1, "node3")],
     nodes_(CHINA, INDIA, AZ1), [100, 0, 0]),
    ("nodes with the same topology value as a matching pod score the same",
     p(affinity=STAY_WITH_S1_IN_REGION), [p(S1, "node1")], nodes_(CHINA, CHINA_AZ1, INDIA), [100, 100, 0]),
    ("the region with more matching pods scores higher",
     p(S1, affinity=STAY_WITH_S2_IN_REGION),
     [p(S2, "node1"), p(S2, "node1"), p(S2, "node2"), p(S2, "node3"), p(S2, "node4"), p(S2, "node5")],
     nodes_(CHINA, INDIA, CHINA, CHINA, INDIA), [100, 0, 100, 100, 0]),
    ("different operators and values, some match failures",
     p(S1, affinity=AFFINITY3), [p(S1, "node1"), p(S2, "node2"), p(S1, "node3")],
     nodes_(CHINA, INDIA, AZ1), [20, 100, 0]),
    ("symmetry: existing pods' preferred affinity",
     p(S2), [p(S1, "node1", STAY_WITH_S1_IN_REGION), p(S2, "node2", STAY_WITH_S2_IN_REGION)],
     nodes_(CHINA, INDIA, AZ1), [0, 100, 0]),
    ("symmetry with a namespace selector",
     p(S1, namespace="subteam1.team1"),
     [p(S1, "node1", AFFINITY_NAMESPACE_SELECTOR), p(S2, "node2", STAY_WITH_S2_IN_REGION)],
     nodes_(CHINA, INDIA, AZ1), [100, 0, 0]),
    ("anti-affinity symmetry with a namespace selector",
     p(S1, namespace="subteam1.team1"),
     [p(S1, "node1", ANTI_AFFINITY_NAMESPACE_SELECTOR), p(S2, "node2", STAY_WITH_S2_IN_REGION)],
     nodes_(CHINA, INDIA, AZ1), [0, 100, 100]),
    ("symmetry: existing pods' required affinity at hardPodAffinityWeight",
     p(S1), [p(S1, "node1", HARD_AFFINITY), p(S2, "node2", HARD_AFFINITY)], nodes_(CHINA, INDIA, AZ1), [100, 100, 0]),
    ("anti-affinity: a node without matching pods scores high",
     p(S1, affinity=AWAY_FROM_S1_IN_AZ), [p(S1, "node1"), p(S2, "node2")], nodes_(AZ1, CHINA), [0, 100]),
    ("anti-affinity: a node without the topology key scores high",
     p(S1, affinity=AWAY_FROM_S1_IN_AZ), [p(S1, "node1"), p(S1, "node2")], nodes_(AZ1, CHINA), [0, 100]),
    ("anti-affinity: more matching pods score lower",
     p(S1, affinity=AWAY_FROM_S1_IN_AZ), [p(S1, "node1"), p(S1, "node1"), p(S2, "node2")], nodes_(AZ1, INDIA),
     [0, 100]),
    ("anti-affinity symmetry",
     p(S2), [p(S1, "node1", AWAY_FROM_S2_IN_AZ), p(S2, "node2", AWAY_FROM_S1_IN_AZ)], nodes_(AZ1, AZ2), [0, 100]),
    ("affinity and anti-affinity",
     p(S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), [p(S1, "node1"), p(S1, "node2")],
     nodes_(CHINA, AZ1), [100, 0]),
    ("affinity and anti-affinity, the pod and the existing pods have the same labels",
     p(S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
     [p(S1, "node1"), p(S1, "node1"), p(S1, "node2"), p(S1, "node3"), p(S1, "node3"), p(S1, "node4"),
      p(S1, "node5")], nodes_(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA), [100, 0, 100, 100, 0]),
    ("affinity, anti-affinity and symmetry together",
     p(S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
     [p(S1, "node1"), p(S2, "node2"), p(None, "node3", STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
      p(None, "node4", AWAY_FROM_S1_IN_AZ)], nodes_(CHINA, AZ1, INDIA, AZ2), [100, 0, 100, 0]),
    ("some nodes of a topology without pods with affinity",
     p(S1), [p(S1, "node1"), p(None, "node2", STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)], nodes_(CHINA, CHINA),
     [0, 0]),
]


@pytest.mark.parametrize(("the_pod", "pods", "nodes", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_preferred_affinity(the_pod, pods, nodes, want):
    got = scores(the_pod, nodes, pods)
    assert got == {f"node{i}": w for i, w in enumerate(want, 1)}


def test_hard_pod_affinity_weight_zero_ignores_existing_required_terms():
    pods = [p(S1, "node1", HARD_AFFINITY), p(S2, "node2", HARD_AFFINITY)]
    assert scores(p(S1), nodes_(CHINA, INDIA, AZ1), pods, hard_weight=0) is None
    assert scores(p(S1), nodes_(CHINA, INDIA, AZ1), pods, hard_weight=1) == {"node1": 100, "node2": 100, "node3": 0}


def test_a_malformed_preferred_selector_fails_the_cycle_at_prefilter():
    bad = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        weighted(8, {"matchExpressions": [{"key": "security", "operator": "In", "values": ["{{.bad-value.}}"]}]},
                 "region")]}}
    decision = schedule_one(p(affinity=bad), nodes_(CHINA, CHINA), [])
    assert decision.node is None
    assert decision.message is not None and decision.message.startswith("0/2 nodes are available: parsing pod: ")


def test_preferred_affinity_changes_the_chosen_node():
    """LeastAllocated alone prefers the empty node1; the preferred term (weight 2 of 200 points) pulls the pod to
    node2, beside its S1 peer."""
    peer = p(S1, "node2")
    peer["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "500m", "memory": "512Mi"}}
    nodes = [node("node1"), node("node2")]
    assert schedule_one(p(S2), nodes, [peer]).node == "node1"
    stay = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        weighted(10, security_in("S1"), "kubernetes.io/hostname")]}}
    decision = schedule_one(p(S2, affinity=stay), nodes, [peer])
    assert decision.node == "node2"
    assert decision.scores["node2"].by_plugin["InterPodAffinity"] == 100
    away = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        weighted(10, security_in("S2"), "kubernetes.io/hostname")]}}
    assert schedule_one(p(S1, affinity=away), nodes, [p(S2, "node1")]).node == "node2"
