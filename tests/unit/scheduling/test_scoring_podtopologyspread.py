"""PodTopologySpread's PreScore, Score and NormalizeScore, with the cases of upstream's
``plugins/podtopologyspread/scoring_test.go`` (``TestPodTopologySpreadScore``): ``nodes`` are the feasible nodes,
``failed`` the nodes the filters rejected (counted at PreScore, not scored)."""

from __future__ import annotations

from typing import Any

import pytest

from observatory.scheduling import PodInfo, Snapshot, schedule_one
from observatory.scheduling.podtopologyspread_scoring import (
    pod_topology_spread_normalize,
    pod_topology_spread_prescore,
    pod_topology_spread_score,
)

from .objects import node, pod

HOSTNAME = "kubernetes.io/hostname"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}


def soft(max_skew: int, key: str, selector: dict | None = FOO, **extra: Any) -> dict[str, Any]:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": selector, **extra}


def incoming(*constraints: dict, labels: dict | None = None, **spec: Any) -> dict[str, Any]:
    obj = pod("p", topologySpreadConstraints=list(constraints), **spec) if constraints else pod("p", **spec)
    obj["metadata"]["labels"] = labels if labels is not None else {"foo": ""}
    return obj


def existing(name: str, node_name: str, labels: dict | None = None, namespace: str = "default") -> dict[str, Any]:
    obj = pod(name, node_name=node_name, namespace=namespace, uid=name)
    obj["metadata"]["labels"] = {"foo": ""} if labels is None else labels
    return obj


def spread(counts: dict[str, int], labels: dict | None = None) -> list[dict[str, Any]]:
    """``count`` matching pods on each named node."""
    return [existing(f"p-{n}{i}", n, labels) for n, c in counts.items() for i in range(c)]


def zoned(name: str, zone: str) -> dict[str, Any]:
    return node(name, labels={"zone": zone})


def scores(the_pod: dict, nodes: list[dict], pods: list[dict], failed: list[dict] = (),
           snapshot: Snapshot | None = None) -> dict[str, int] | None:
    """Normalised scores of the feasible ``nodes``; None when PreScore skips."""
    snap = snapshot or Snapshot([*nodes, *failed], pods)
    info = PodInfo.from_pod(the_pod)
    feasible = [snap.get(n["metadata"]["name"]) for n in nodes]
    state = pod_topology_spread_prescore(info, feasible, snap)
    if state is None:
        return None
    raw = pod_topology_spread_score(state, feasible)
    return dict(zip((n.name for n in feasible), pod_topology_spread_normalize(state, feasible, raw), strict=True))


def test_no_soft_constraint_and_no_default_selector_skips():
    assert scores(incoming(), [node("node-a")], []) is None
    hard = {**soft(1, HOSTNAME), "whenUnsatisfiable": "DoNotSchedule"}
    assert scores(incoming(hard), [node("node-a")], []) is None


def test_one_candidate_and_equal_counts_score_100():
    assert scores(incoming(soft(1, HOSTNAME)), [node("node-a")], [], failed=[node("node-b")]) == {"node-a": 100}
    assert scores(incoming(soft(1, HOSTNAME)), [node("node-a"), node("node-b")],
                  spread({"node-a": 1, "node-b": 1})) == {"node-a": 100, "node-b": 100}


@pytest.mark.parametrize(("max_skew", "counts", "want"), [
    (1, {"node-a": 2, "node-b": 1, "node-d": 3}, {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    (2, {"node-a": 2, "node-b": 1, "node-d": 3}, {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    (3, {"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1},
     {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
])
def test_one_constraint_on_hostname_all_four_nodes_candidates(max_skew, counts, want):
    nodes = [node(n) for n in ("node-a", "node-b", "node-c", "node-d")]
    assert scores(incoming(soft(max_skew, HOSTNAME)), nodes, spread(counts)) == want


def test_system_default_spreading_for_a_pod_selected_by_a_service():
    """Nodes without a zone label: the defaults require no label, so the scores are those of hostname maxSkew 3."""
    nodes = [node(n) for n in ("node-a", "node-b", "node-c", "node-d")]
    pods = spread({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1})
    snap = Snapshot(nodes, pods)
    assert scores(incoming(), nodes, pods, snapshot=snap) is None  # no Service: no default constraints
    snap.spread_selectors.set({"apiVersion": "v1", "kind": "Service",
                               "metadata": {"name": "svc", "namespace": "default"}, "spec": {"selector": {"foo": ""}}})
    assert scores(incoming(), nodes, pods, snapshot=snap) == {"node-a": 44, "node-b": 66, "node-c": 77,
                                                              "node-d": 100}


def test_default_selector_of_a_replicaset_owner():
    nodes = [node("node-a"), node("node-b")]
    pods = spread({"node-a": 2}, labels={"app": "web"})
    snap = Snapshot(nodes, pods)
    snap.spread_selectors.set({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                               "metadata": {"name": "web-1", "namespace": "default"},
                               "spec": {"selector": {"matchLabels": {"app": "web"}}}})
    owned = incoming(labels={"app": "web"})
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
                                             "uid": "u", "controller": True}]
    # hostname maxSkew 3, weight log(2 + 2): node-a round(2 * 1.386 + 2) = 5, node-b 2; (5 + 2 - s) * 100 // 5
    assert scores(owned, nodes, pods, snapshot=snap) == {"node-a": 40, "node-b": 100}


def test_three_of_four_nodes_candidates():
    nodes = [node("node-a"), node("node-b"), node("node-x")]
    pods = spread({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3})
    assert scores(incoming(soft(1, HOSTNAME)), nodes, pods, failed=[node("node-y")]) == {
        "node-a": 33, "node-b": 83, "node-x": 100}


def test_a_node_without_the_topology_key_is_ignored():
    b = node("node-b", labels={"n": "node-b"})
    del b["metadata"]["labels"][HOSTNAME]
    nodes = [node("node-a"), b, node("node-x")]
    pods = spread({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3})
    assert scores(incoming(soft(1, HOSTNAME)), nodes, pods, failed=[node("node-y")]) == {
        "node-a": 16, "node-b": 0, "node-x": 100}


def test_one_constraint_on_zone_three_of_four_candidates():
    nodes = [zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2")]
    pods = spread({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3})
    assert scores(incoming(soft(1, "zone")), nodes, pods, failed=[zoned("node-y", "zone2")]) == {
        "node-a": 75, "node-b": 75, "node-x": 100}


def test_two_constraints_on_zone_and_node_two_of_four_candidates():
    nodes = [zoned("node-a", "zone1"), zoned("node-x", "zone2")]
    pods = spread({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4})
    assert scores(incoming(soft(1, "zone"), soft(1, HOSTNAME)), nodes, pods,
                  failed=[zoned("node-b", "zone1"), zoned("node-y", "zone2")]) == {"node-a": 100, "node-x": 63}


def test_two_constraints_with_different_selectors():
    nodes = [zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2"), zoned("node-y", "zone2")]
    pods = [existing("p-a1", "node-a", {"foo": ""}), existing("p-b1", "node-b", {"foo": "", "bar": ""}),
            existing("p-y1", "node-y", {"foo": ""}), existing("p-y2", "node-y", {"bar": ""})]
    the_pod = incoming(soft(1, "zone"), soft(1, HOSTNAME, BAR), labels={"foo": "", "bar": ""})
    assert scores(the_pod, nodes, pods) == {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}
    pods = [existing("p-b1", "node-b", {"bar": ""}), existing("p-x1", "node-x", {"foo": ""}),
            existing("p-y1", "node-y", {"foo": "", "bar": ""})]
    assert scores(the_pod, nodes, pods) == {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}


def test_pods_of_other_namespaces_and_terminating_pods_do_not_count():
    nodes = [node("node-a"), node("node-b")]
    pods = [existing("other", "node-a", namespace="elsewhere"), existing("going", "node-a")]
    pods[1]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert scores(incoming(soft(1, HOSTNAME)), nodes, pods) == {"node-a": 100, "node-b": 100}


def test_an_empty_label_selector_counts_no_pods():
    """``countPodsMatchSelector`` returns 0 for ``selector.Empty()``: ``labelSelector: {}`` spreads nothing."""
    nodes = [node("node-a"), node("node-b")]
    assert scores(incoming(soft(1, HOSTNAME, {})), nodes, spread({"node-a": 3})) == {"node-a": 100, "node-b": 100}


def test_soft_spread_moves_the_pod_to_the_emptier_zone():
    """Without the constraint LeastAllocated picks the emptiest node (zone1's node-b); with it, zone2 wins."""
    nodes = [zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2")]
    pods = [existing(f"p-a{i}", "node-a") for i in range(3)]
    pods += [existing(f"q-x{i}", "node-x", {"other": ""}) for i in range(2)]
    for p in pods:
        p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "500m", "memory": "512Mi"}}
    plain = incoming()
    assert schedule_one(plain, nodes, pods).node == "node-b"
    decision = schedule_one(incoming(soft(1, "zone")), nodes, pods)
    assert decision.node == "node-x"
    assert decision.scores["node-x"].by_plugin["PodTopologySpread"] == 100
