"""The strategic merge patches the lab's components send (``CreateTwoWayMergePatch``, ``PatchPodStatus``,
``PatchNodeStatus``, ``PatchNodeTaints``), and that the registry applying them stores what a PUT of the same status
stored: same object, same key order."""

from __future__ import annotations

import copy
import json

from observatory.lab.registry import Registry
from observatory.lab.resources import CORE_V1
from observatory.lab.simulation.statuspatch import (
    node_status_patch,
    node_taints_patch,
    pod_status_patch,
    two_way_merge_patch,
    wire,
)
from observatory.lab.store import Store
from observatory.lab.strategicpatch import strategic_merge_patch

NOW, LATER = "2026-08-22T14:20:24Z", "2026-08-22T14:20:27Z"


def cond(type_, status, at, reason="", message=""):
    c = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": at}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


SCHEDULED = {"phase": "Pending", "conditions": [cond("PodScheduled", "True", NOW)], "qosClass": "BestEffort"}
CREATING = {
    "phase": "Pending",
    "conditions": [cond("PodReadyToStartContainers", "False", NOW), cond("Initialized", "True", NOW),
                   cond("Ready", "False", NOW, "ContainersNotReady", "containers with unready status: [pause]"),
                   cond("ContainersReady", "False", NOW, "ContainersNotReady",
                        "containers with unready status: [pause]"),
                   cond("PodScheduled", "True", NOW)],
    "qosClass": "BestEffort",
    "hostIP": "172.18.0.3", "hostIPs": [{"ip": "172.18.0.3"}], "startTime": NOW,
    "containerStatuses": [{"name": "pause", "state": {"waiting": {"reason": "ContainerCreating"}}, "lastState": {},
                           "ready": False, "restartCount": 0, "image": "registry.k8s.io/pause:3.9", "imageID": "",
                           "started": False}],
}
RUNNING = {
    **CREATING, "phase": "Running",
    "conditions": [cond("PodReadyToStartContainers", "True", LATER), cond("Initialized", "True", NOW),
                   cond("Ready", "True", LATER), cond("ContainersReady", "True", LATER),
                   cond("PodScheduled", "True", NOW)],
    "podIP": "10.244.1.7", "podIPs": [{"ip": "10.244.1.7"}],
    "containerStatuses": [{"name": "pause", "state": {"running": {"startedAt": LATER}}, "lastState": {},
                           "ready": True, "restartCount": 0, "image": "registry.k8s.io/pause:3.9",
                           "imageID": "registry.k8s.io/pause@sha256:0123", "containerID": "containerd://ab",
                           "started": True}],
}


def test_a_changed_condition_is_its_changed_fields_its_key_and_the_element_order():
    # the shape of kube-scheduler's PodScheduled patch and the kubelet's condition updates (patch.go diffListsOfMaps)
    old = {"status": {"conditions": [cond("Ready", "False", NOW, "ContainersNotReady", "m"),
                                     cond("PodScheduled", "True", NOW)]}}
    new = {"status": {"conditions": [cond("Ready", "True", LATER), cond("PodScheduled", "True", NOW)]}}
    assert two_way_merge_patch(old, new, "Pod") == {"status": {
        "conditions": [{"lastTransitionTime": LATER, "status": "True", "reason": None, "message": None,
                        "type": "Ready"}],
        "$setElementOrder/conditions": [{"type": "Ready"}, {"type": "PodScheduled"}]}}


def test_a_removed_element_is_a_delete_directive_and_lists_without_strategy_are_replaced():
    old = {"status": {"conditions": [cond("A", "True", NOW), cond("B", "True", NOW)], "images": [{"names": ["x"]}]}}
    new = {"status": {"conditions": [cond("B", "True", NOW)], "images": [{"names": ["y"]}]}}
    assert two_way_merge_patch(old, new, "Node") == {"status": {
        "conditions": [{"$patch": "delete", "type": "A"}],
        "$setElementOrder/conditions": [{"type": "B"}],
        "images": [{"names": ["y"]}]}}


def test_unchanged_lists_and_maps_give_nothing():
    assert two_way_merge_patch({"status": RUNNING}, {"status": copy.deepcopy(RUNNING)}, "Pod") == {}


def test_primitive_merge_lists_add_delete_and_order():
    old = {"metadata": {"finalizers": ["a", "b"]}}
    new = {"metadata": {"finalizers": ["b", "c"]}}
    assert two_way_merge_patch(old, new, "Pod") == {"metadata": {
        "finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"], "$setElementOrder/finalizers": ["b", "c"]}}


def test_pod_status_patch_carries_the_uid_and_is_none_when_nothing_changes():
    pod = {"metadata": {"name": "p", "uid": "u-1"}, "status": SCHEDULED}
    patch = pod_status_patch(pod, CREATING)
    assert patch is not None and patch["metadata"] == {"uid": "u-1"}
    assert patch["status"]["$setElementOrder/conditions"][0] == {"type": "PodReadyToStartContainers"}
    assert "qosClass" not in patch["status"] and patch["status"]["hostIP"] == "172.18.0.3"
    assert pod_status_patch(pod, copy.deepcopy(SCHEDULED)) is None


def test_wire_sorts_keys_as_go_marshals_maps():
    patch = pod_status_patch({"metadata": {"uid": "u"}, "status": SCHEDULED}, CREATING)
    text = json.dumps(wire(patch))
    assert text.startswith('{"metadata": {"uid": "u"}, "status": {"$setElementOrder/conditions": ')
    assert json.loads(text) == patch


def _registry_with(pod):
    registry = Registry(Store(100, 100))
    registry.create(CORE_V1["namespaces"], "", {"metadata": {"name": "ns"}})
    registry.create(CORE_V1["pods"], "ns", pod)
    return registry


def _stored(registry):
    pod = copy.deepcopy(registry.get(CORE_V1["pods"], "ns", "p"))
    pod["metadata"].pop("resourceVersion")
    pod["metadata"].pop("managedFields", None)
    pod["metadata"].pop("uid")
    pod["metadata"].pop("creationTimestamp")
    return pod


def test_the_registry_stores_the_kubelets_patch_exactly_as_it_stored_the_put():
    # the kubelet builds each status from a copy of the stored one (status.update), as Kubelets._start does
    pod = {"metadata": {"name": "p", "namespace": "ns"},
           "spec": {"nodeName": "pair-worker", "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.9"}]},
           "status": copy.deepcopy(SCHEDULED)}
    by_put, by_patch = _registry_with(copy.deepcopy(pod)), _registry_with(copy.deepcopy(pod))
    for changes in (CREATING, RUNNING):
        current = by_put.get(CORE_V1["pods"], "ns", "p")
        status = copy.deepcopy(current["status"])
        status.update(copy.deepcopy(changes))
        by_put.update_status(CORE_V1["pods"], "ns", "p", {"metadata": {"resourceVersion":
                                                                      current["metadata"]["resourceVersion"]},
                                                         "status": status})
        stored = by_patch.get(CORE_V1["pods"], "ns", "p")
        status = copy.deepcopy(stored["status"])
        status.update(copy.deepcopy(changes))
        patch = pod_status_patch(stored, status)
        assert patch is not None and patch["metadata"] == {"uid": stored["metadata"]["uid"]}
        by_patch.patch(CORE_V1["pods"], "ns", "p", "application/strategic-merge-patch+json",
                       json.dumps(patch).encode(), subresource="status")
        put, patched = _stored(by_put), _stored(by_patch)
        assert patched == put
        assert json.dumps(patched) == json.dumps(put)  # key for key, in order: the same watch frame bytes


def test_node_status_patch_keeps_the_old_spec_and_applies_to_the_new_status():
    old = {"metadata": {"name": "n", "resourceVersion": "5"}, "spec": {"podCIDR": "10.244.1.0/24"},
           "status": {"conditions": [cond("Ready", "True", NOW)], "images": []}}
    new = {**old, "spec": {"unschedulable": True}, "status": {**old["status"], "images": [{"names": ["x"]}]}}
    patch = node_status_patch(old, new)
    assert patch == {"status": {"images": [{"names": ["x"]}]}}
    assert strategic_merge_patch(old, patch, "Node")["status"] == new["status"]


def test_node_taints_patch_carries_the_resource_version_and_replaces_the_taints():
    old = {"metadata": {"name": "n", "resourceVersion": "5"},
           "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]}}
    assert node_taints_patch(old, []) == {"metadata": {"resourceVersion": "5"}, "spec": {"taints": None}}
    added = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    assert node_taints_patch(old, added) == {"metadata": {"resourceVersion": "5"}, "spec": {"taints": added}}
