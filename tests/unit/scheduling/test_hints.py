"""The plugins' QueueingHints, with the cases of upstream's per-plugin tests (kubernetes v1.34:
``noderesources/fit_test.go`` ``TestFitIsSchedulableAfterNodeChange`` and ``Test_isSchedulableAfterPodEvent``,
``tainttoleration/taint_toleration_test.go``, ``nodeaffinity/node_affinity_test.go``,
``nodeunschedulable/node_unschedulable_test.go``, ``nodeports/node_ports_test.go``,
``schedulinggates/scheduling_gates_test.go``, ``podtopologyspread/plugin_test.go``,
``interpodaffinity/plugin_test.go``), named as there where a case exists."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from observatory.scheduling.clusterevents import (
    ASSIGNED_POD,
    NODE,
    UNSCHEDULABLE_POD,
    ActionType,
    ClusterEvent,
    node_update_events,
    pod_update_events,
)
from observatory.scheduling.hints import REGISTRATIONS, rejecting_plugins, requeue_strategy
from tests.unit.scheduling.objects import node, pod

A = ActionType
NODE_ADD = ClusterEvent(NODE, A.ADD)


def hint(plugin: str, event: ClusterEvent, target: dict, old: Any, new: Any) -> bool:
    """What ``plugin`` says for ``event`` (True: Queue) through the queue's strategy, the plugin alone rejecting."""
    return requeue_strategy(target, {plugin}, (), event, old, new) != "skip"


def labelled(obj: dict, **labels: str) -> dict:
    out = copy.deepcopy(obj)
    out["metadata"].setdefault("labels", {}).update(labels)
    return out


def bare(name: str = "n", **alloc: str) -> dict:
    """A node as upstream's ``st.MakeNode().Capacity(...)``: only the given resources, and 32 pods."""
    out = node(name, pods="32")
    out["status"]["allocatable"] = {"pods": "32", **alloc}
    return out


# -- NodeResourcesFit ------------------------------------------------------------------------------------------------

FIT = "NodeResourcesFit"
WANTS = pod("p", uid="p", requests={"memory": "2", "example.com/a": "1"})


@pytest.mark.parametrize(("name", "old", "new", "queue"), [
    ("skip-queue-on-node-add-without-sufficient-resources", None, bare(memory="1", **{"example.com/a": "1"}), False),
    ("skip-queue-on-node-add-without-required-resource-type", None, bare(memory="4", **{"example.com/b": "1"}),
     False),
    ("queue-on-node-add-with-sufficient-resources", None, bare(memory="4", **{"example.com/a": "2"}), True),
    ("skip-queue-on-node-unrelated-changes", bare(memory="2", **{"example.com/a": "2"}),
     bare(memory="2", **{"example.com/a": "1", "example.com/b": "2"}), False),
    ("queue-on-pod-requested-resources-increase", bare(memory="2", **{"example.com/a": "1"}),
     bare(memory="2", **{"example.com/a": "2"}), True),
    ("skip-queue-on-node-changes-from-suitable-to-unsuitable", bare(memory="4", **{"example.com/a": "2"}),
     bare(memory="1", **{"example.com/a": "2"}), False),
    ("queue-on-node-changes-from-unsuitable-to-suitable", bare(memory="1", **{"example.com/a": "2"}),
     bare(memory="4", **{"example.com/a": "2"}), True),
])
def test_node_resources_fit_after_node_change(name, old, new, queue):
    event = NODE_ADD if old is None else ClusterEvent(NODE, A.UPDATE_NODE_ALLOCATABLE)
    assert hint(FIT, event, WANTS, old, new) is queue, name


def test_node_resources_fit_queues_when_the_allowed_pod_count_goes_up():
    small = pod("p", uid="p", requests={"cpu": "100m"})
    assert hint(FIT, ClusterEvent(NODE, A.UPDATE_NODE_ALLOCATABLE), small, node("n", pods="10"), node("n", pods="11"))


def test_node_resources_fit_does_not_register_node_label_updates():
    """Only Node/Add|UpdateNodeAllocatable are registered with QHint on: a label change is Skip however it fits."""
    small = pod("p", uid="p", requests={"cpu": "100m"})
    event = node_update_events(node("n"), labelled(node("n"), lesson="again"))
    assert event == [ClusterEvent(NODE, A.UPDATE_NODE_LABEL)]
    assert not hint(FIT, event[0], small, node("n"), labelled(node("n"), lesson="again"))


@pytest.mark.parametrize(("name", "old", "new", "queue"), [
    ("queue-on-assigned-pod-deleted", pod("x", uid="x", node_name="n"),
     None, True),
    ("skip-queue-on-unscheduled-pod-deleted", pod("x", uid="x"), None, False),
    ("queue-on-nominated-pod-deleted", {**pod("x", uid="x"), "status": {"nominatedNodeName": "n"}}, None, True),
    ("queue-on-other-pod-scaled-down", pod("x", uid="x", node_name="n", requests={"memory": "2"}),
     pod("x", uid="x", node_name="n", requests={"memory": "1"}), True),
    ("skip-queue-on-other-pod-unrelated-resource-scaled-down",
     pod("x", uid="x", node_name="n", requests={"cpu": "2"}), pod("x", uid="x", node_name="n", requests={"cpu": "1"}),
     False),
    ("skip-queue-on-other-unscheduled-pod-scaled-down", pod("x", uid="x", requests={"memory": "2"}),
     pod("x", uid="x", requests={"memory": "1"}), False),
    ("queue-on-target-pod-scaled-down", pod("p", uid="p", requests={"memory": "3"}), WANTS, True),
])
def test_node_resources_fit_after_pod_event(name, old, new, queue):
    event = ClusterEvent(ASSIGNED_POD if (new or old)["spec"].get("nodeName") else UNSCHEDULABLE_POD,
                         A.DELETE if new is None else A.UPDATE_POD_SCALE_DOWN)
    assert hint(FIT, event, WANTS, old, new) is queue, name


# -- TaintToleration, NodeUnschedulable, NodeName, SchedulingGates ---------------------------------------------------

TAINTED = node("n", taints=[{"key": "foo", "value": "bar", "effect": "NoSchedule"}])
TOLERATES = pod("p", uid="p", tolerations=[{"key": "foo", "operator": "Equal", "value": "bar",
                                            "effect": "NoSchedule"}])


@pytest.mark.parametrize(("name", "target", "old", "new", "queue"), [
    ("node-added-with-untolerated-taint", pod("p", uid="p"), None, TAINTED, False),
    ("node-added-with-tolerated-taint", TOLERATES, None, TAINTED, True),
    ("node-added-without-taints", pod("p", uid="p"), None, node("n"), True),
    ("node-changed-untolerated-to-tolerated", pod("p", uid="p"), TAINTED, node("n"), True),
    ("node-changed-tolerated-to-untolerated", pod("p", uid="p"), node("n"), TAINTED, False),
    ("node-changed-untolerated-stays-untolerated", pod("p", uid="p"), TAINTED,
     node("n", taints=[{"key": "foo", "value": "bar", "effect": "NoExecute"}]), False),
    ("prefer-no-schedule-does-not-count", pod("p", uid="p"), TAINTED,
     node("n", taints=[{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}]), True),
])
def test_taint_toleration_after_node_change(name, target, old, new, queue):
    event = NODE_ADD if old is None else ClusterEvent(NODE, A.UPDATE_NODE_TAINT)
    assert hint("TaintToleration", event, target, old, new) is queue, name


def test_taint_toleration_queues_only_on_the_pending_pods_own_toleration_change():
    event = ClusterEvent(UNSCHEDULABLE_POD, A.UPDATE_POD_TOLERATION)
    assert hint("TaintToleration", event, TOLERATES, pod("p", uid="p"), TOLERATES)
    other = {**TOLERATES, "metadata": {"name": "q", "namespace": "default", "uid": "q"}}
    assert not hint("TaintToleration", event, pod("p", uid="p"), pod("q", uid="q"), other)


@pytest.mark.parametrize(("name", "old", "new", "queue"), [
    ("queue-on-schedulable-node-added", None, node("n"), True),
    ("skip-unschedulable-node-added", None, node("n", unschedulable=True), False),
    ("queue-on-unschedulable-field-change", node("n", unschedulable=True), node("n"), True),
    ("skip-unrelated-change", node("n", unschedulable=True),
     node("n", unschedulable=True, taints=[{"key": "k", "effect": "NoSchedule"}]), False),
])
def test_node_unschedulable_after_node_change(name, old, new, queue):
    event = NODE_ADD if old is None else (node_update_events(old, new) or [ClusterEvent(NODE, A.UPDATE_NODE_TAINT)])[0]
    assert hint("NodeUnschedulable", event, pod("p", uid="p"), old, new) is queue, name


def test_cordon_lifted_is_reported_as_a_taint_update():
    """``extractNodeSpecUnschedulableChange``: only the change to schedulable makes an event."""
    assert node_update_events(node("n", unschedulable=True), node("n")) == [ClusterEvent(NODE, A.UPDATE_NODE_TAINT)]
    assert node_update_events(node("n"), node("n", unschedulable=True)) == []


def test_node_unschedulable_after_the_pods_toleration_change():
    tolerant = pod("p", uid="p", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                               "effect": "NoSchedule"}])
    event = ClusterEvent(UNSCHEDULABLE_POD, A.UPDATE_POD_TOLERATION)
    assert hint("NodeUnschedulable", event, tolerant, pod("p", uid="p"), tolerant)
    assert not hint("NodeUnschedulable", event, TOLERATES, pod("p", uid="p"), TOLERATES)


def test_node_name_registers_node_add_without_a_hint():
    assert REGISTRATIONS["NodeName"] == ((NODE_ADD, None),)
    assert hint("NodeName", NODE_ADD, pod("p", uid="p", nodeName="elsewhere"), None, node("n"))
    assert not hint("NodeName", ClusterEvent(NODE, A.UPDATE_NODE_LABEL), pod("p", uid="p"), node("n"),
                    labelled(node("n"), a="b"))


@pytest.mark.parametrize(("name", "old", "new", "queue"), [
    ("skip-queue-on-other-pod-updated", pod("q", uid="q", schedulingGates=[{"name": "foo"}, {"name": "bar"}]),
     pod("q", uid="q", schedulingGates=[{"name": "foo"}]), False),
    ("queue-on-the-unsched-pod-updated", pod("p", uid="p", schedulingGates=[{"name": "foo"}]), pod("p", uid="p"),
     True),
])
def test_scheduling_gates_after_pod_update(name, old, new, queue):
    event = ClusterEvent(UNSCHEDULABLE_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    target = pod("p", uid="p", schedulingGates=[{"name": "foo"}])
    assert hint("SchedulingGates", event, target, old, new) is queue, name


# -- NodeAffinity, NodePorts -----------------------------------------------------------------------------------------

SELECTS = pod("p", uid="p", nodeSelector={"foo": "bar"})


@pytest.mark.parametrize(("name", "old", "new", "queue"), [
    ("add-matched-node", None, labelled(node("n"), foo="bar"), True),
    ("add-unmatched-node", None, node("n"), False),
    ("update-node-label-unmatched-to-matched", node("n"), labelled(node("n"), foo="bar"), True),
    ("update-node-label-matched-to-matched", labelled(node("n"), foo="bar"), labelled(node("n"), foo="bar", x="y"),
     False),
    ("update-node-label-unmatched-to-unmatched", node("n"), labelled(node("n"), foo="baz"), False),
])
def test_node_affinity_after_node_change(name, old, new, queue):
    event = NODE_ADD if old is None else ClusterEvent(NODE, A.UPDATE_NODE_LABEL)
    assert hint("NodeAffinity", event, SELECTS, old, new) is queue, name


def ports(name: str, port: int, *, node_name: str | None = "n", uid: str | None = None) -> dict:
    out = pod(name, uid=uid or name, node_name=node_name)
    out["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": port}]
    return out


@pytest.mark.parametrize(("name", "deleted", "queue"), [
    ("skip-queue-on-unscheduled", ports("x", 8080, node_name=None), False),
    ("skip-queue-on-non-hostport", pod("x", uid="x", node_name="n"), False),
    ("skip-queue-on-unrelated-hostport", ports("x", 8081), False),
    ("queue-on-released-hostport", ports("x", 8080), True),
])
def test_node_ports_after_pod_deleted(name, deleted, queue):
    event = ClusterEvent(ASSIGNED_POD, A.DELETE)
    assert hint("NodePorts", event, ports("p", 8080, node_name=None), deleted, None) is queue, name


# -- PodTopologySpread, InterPodAffinity -----------------------------------------------------------------------------

SPREAD = pod("p", uid="p", topologySpreadConstraints=[{
    "maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"foo": ""}}}])


@pytest.mark.parametrize(("name", "old", "new", "queue"), [
    ("add pod with labels match topologySpreadConstraints selector", None, labelled(pod("x", uid="x", node_name="n"),
                                                                                      foo=""), True),
    ("add un-scheduled pod", None, labelled(pod("x", uid="x"), foo=""), False),
    ("update un-scheduled pod", labelled(pod("x", uid="x"), foo=""), labelled(pod("x", uid="x"), bar=""), False),
    ("delete un-scheduled pod", labelled(pod("x", uid="x"), foo=""), None, False),
    ("add pod with different namespace", None,
     labelled(pod("x", uid="x", node_name="n", namespace="ns1"), foo=""), False),
    ("add pod with labels don't match topologySpreadConstraints selector", None,
     labelled(pod("x", uid="x", node_name="n"), bar=""), False),
    ("delete pod with labels that match topologySpreadConstraints selector",
     labelled(pod("x", uid="x", node_name="n"), foo=""), None, True),
    ("delete pod with labels that don't match topologySpreadConstraints selector",
     labelled(pod("x", uid="x", node_name="n"), bar=""), None, False),
    ("update pod's non-related label", labelled(pod("x", uid="x", node_name="n"), foo="", bar="bar1"),
     labelled(pod("x", uid="x", node_name="n"), foo="", bar="bar2"), False),
    ("add pod's label that matches topologySpreadConstraints selector", labelled(pod("x", uid="x", node_name="n")),
     labelled(pod("x", uid="x", node_name="n"), foo=""), True),
    ("delete pod's label that matches topologySpreadConstraints selector",
     labelled(pod("x", uid="x", node_name="n"), foo="", bar=""), labelled(pod("x", uid="x", node_name="n"), bar=""),
     True),
])
def test_pod_topology_spread_after_pod_change(name, old, new, queue):
    changed = new or old
    resource = ASSIGNED_POD if changed["spec"].get("nodeName") else UNSCHEDULABLE_POD
    action = A.ADD if old is None else A.DELETE if new is None else A.UPDATE_POD_LABEL
    assert hint("PodTopologySpread", ClusterEvent(resource, action), SPREAD, old, new) is queue, name


@pytest.mark.parametrize(("name", "old", "new", "queue"), [
    ("node updates label which matches topologyKey", labelled(node("n"), zone="zone1"),
     labelled(node("n"), zone="zone2"), True),
    ("node that doesn't match topologySpreadConstraints updates non-related label", labelled(node("n"), foo="bar1"),
     labelled(node("n"), foo="bar2"), False),
    ("node that match topologySpreadConstraints adds non-related label", labelled(node("n"), zone="zone1"),
     labelled(node("n"), zone="zone1", foo="bar"), False),
    ("create node with non-related labels", None, labelled(node("n"), foo="bar"), False),
    ("create node with related labels", None, labelled(node("n"), zone="zone1"), True),
    ("delete node with non-related labels", labelled(node("n"), foo="bar"), None, False),
    ("delete node with related labels", labelled(node("n"), zone="zone1"), None, True),
    ("add node's label that matches topologyKey", node("n"), labelled(node("n"), zone="zone1"), True),
    ("changes node's taint", labelled(node("n"), zone="zone1"),
     {**labelled(node("n"), zone="zone1"), "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}, True),
])
def test_pod_topology_spread_after_node_change(name, old, new, queue):
    action = A.ADD if old is None else A.DELETE if new is None else A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT
    assert hint("PodTopologySpread", ClusterEvent(NODE, action), SPREAD, old, new) is queue, name


def affinity_pod(**sections: Any) -> dict:
    return pod("p", uid="p", affinity={k: {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"service": "securityscan"}}, "topologyKey": "zone"}]}
        for k in sections})


@pytest.mark.parametrize(("name", "target", "old", "new", "queue"), [
    ("add a pod which matches the pod affinity", affinity_pod(podAffinity=1), None,
     labelled(pod("x", uid="x", node_name="n"), service="securityscan"), True),
    ("add an un-scheduled pod", affinity_pod(podAffinity=1), None, labelled(pod("x", uid="x"), service="securityscan"),
     False),
    ("add a pod which doesn't match the pod affinity", affinity_pod(podAffinity=1), None,
     labelled(pod("x", uid="x", node_name="n"), aaa="a"), False),
    ("update a pod from non-match to match pod affinity", affinity_pod(podAffinity=1),
     labelled(pod("x", uid="x", node_name="n"), aaa="a"),
     labelled(pod("x", uid="x", node_name="n"), service="securityscan"), True),
    ("the updating pod matches target pod's anti affinity", affinity_pod(podAntiAffinity=1),
     labelled(pod("x", uid="x", node_name="n"), aaa="a"),
     labelled(pod("x", uid="x", node_name="n"), service="securityscan"), False),
    ("update a pod from match to non-match the pod's anti affinity", affinity_pod(podAntiAffinity=1),
     labelled(pod("x", uid="x", node_name="n"), service="securityscan"),
     labelled(pod("x", uid="x", node_name="n"), aaa="a"), True),
    ("delete a pod which doesn't match pod's anti-affinity", affinity_pod(podAntiAffinity=1),
     labelled(pod("x", uid="x", node_name="n"), aaa="a"), None, False),
    ("delete a pod which matches pod's anti-affinity", affinity_pod(podAntiAffinity=1),
     labelled(pod("x", uid="x", node_name="n"), service="securityscan"), None, True),
])
def test_inter_pod_affinity_after_pod_change(name, target, old, new, queue):
    action = A.ADD if old is None else A.DELETE if new is None else A.UPDATE_POD_LABEL
    assert hint("InterPodAffinity", ClusterEvent(ASSIGNED_POD, action), target, old, new) is queue, name


@pytest.mark.parametrize(("name", "target", "new", "queue"), [
    ("add a new node with matched pod affinity topologyKey", affinity_pod(podAffinity=1),
     labelled(node("n"), zone="zone1"), True),
    ("add a new node with matched pod anti-affinity topologyKey", affinity_pod(podAntiAffinity=1),
     labelled(node("n"), zone="zone1"), True),
    ("add a new node without matched topologyKey", affinity_pod(podAffinity=1), labelled(node("n"), region="r1"),
     False),
])
def test_inter_pod_affinity_after_node_change(name, target, new, queue):
    assert hint("InterPodAffinity", NODE_ADD, target, None, new) is queue, name


# -- events and the strategy -----------------------------------------------------------------------------------------

def test_node_update_events_follow_node_scheduling_properties_change():
    old = node("n")
    new = labelled(node("n", cpu="8"), a="b")
    new["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    assert node_update_events(old, new) == [ClusterEvent(NODE, A.UPDATE_NODE_ALLOCATABLE),
                                            ClusterEvent(NODE, A.UPDATE_NODE_LABEL),
                                            ClusterEvent(NODE, A.UPDATE_NODE_CONDITION)]
    heartbeat = copy.deepcopy(old)
    heartbeat["status"]["conditions"] = []
    assert node_update_events(old, heartbeat) == []


def test_pod_update_events_fall_back_to_the_general_update():
    old = pod("x", uid="x", node_name="n")
    newer = copy.deepcopy(old)
    newer["status"]["phase"] = "Running"
    assert pod_update_events(old, newer) == [ClusterEvent(ASSIGNED_POD, A.UPDATE)]
    assert pod_update_events(old, labelled(old, a="b")) == [ClusterEvent(ASSIGNED_POD, A.UPDATE_POD_LABEL)]


def test_strategy_pending_plugin_queues_immediately_and_unschedulable_after_backoff():
    """``isPodWorthRequeuing``: Queue from a pending plugin beats Queue from an unschedulable one; no plugins at all
    or a wildcard event: after backoff; no rejecting plugin's hint saying Queue: Skip."""
    target = pod("p", uid="p", requests={"cpu": "1"})
    freed = pod("x", uid="x", node_name="n")
    event = ClusterEvent(ASSIGNED_POD, A.DELETE)
    assert requeue_strategy(target, {FIT}, (), event, freed, None) == "backoff"
    assert requeue_strategy(target, {FIT}, {"Custom"}, event, freed, None) == "immediately"
    assert requeue_strategy(target, {"TaintToleration"}, (), event, freed, None) == "skip"
    assert requeue_strategy(target, (), (), event, freed, None) == "backoff"
    assert requeue_strategy(target, {"TaintToleration"}, (), ClusterEvent("*", A.ALL), None, None) == "backoff"


def test_rejecting_plugins_are_read_from_the_verdicts():
    from observatory.scheduling import filter_nodes
    from tests.unit.scheduling.objects import pair

    verdicts = filter_nodes(pod("huge", requests={"cpu": "100"}), pair())
    assert rejecting_plugins(verdicts) == {"TaintToleration", FIT}
