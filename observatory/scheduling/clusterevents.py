"""Cluster events as kube-scheduler v1.34.1 names them, and which ones a Node or Pod change makes. Pure, no I/O.

Reproduces ``staging/src/k8s.io/kube-scheduler/framework/types.go`` (``ActionType`` bits, ``ClusterEvent.Match``:
the resources match, ``Pod`` matching both ``AssignedPod`` and ``UnschedulablePod``, and the action types share a
bit) and ``pkg/scheduler/framework/events.go``:

* :func:`node_update_events` is ``NodeSchedulingPropertiesChange``: one event per kind of change, in upstream's
  order: ``spec.unschedulable`` turned false (reported as ``UpdateNodeTaint``), allocatable, labels, taints,
  condition statuses, annotations. A heartbeat that changes nothing of these makes no event.
* :func:`pod_update_events` is ``PodSchedulingPropertiesChange``: labels, a request scaled down or removed
  (``UpdatePodScaleDown``), the last scheduling gate removed, a toleration added; when none of these, the general
  ``Update``. The resource is ``AssignedPod`` when the new pod has ``spec.nodeName``, else ``UnschedulablePod``.

Objects are Pod and Node JSON as the API serves them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .resources import compute_pod_resources

__all__ = [
    "ASSIGNED_POD", "NODE", "POD", "UNSCHEDULABLE_POD", "WILDCARD", "ActionType", "ClusterEvent",
    "node_update_events", "pod_update_events",
]

POD, ASSIGNED_POD, UNSCHEDULABLE_POD, NODE, WILDCARD = "Pod", "AssignedPod", "UnschedulablePod", "Node", "*"


class ActionType(enum.Flag):
    """``fwk.ActionType``: what happened to the object (bits, so a registration can name several)."""

    ADD = enum.auto()
    DELETE = enum.auto()
    UPDATE_NODE_ALLOCATABLE = enum.auto()
    UPDATE_NODE_LABEL = enum.auto()
    UPDATE_NODE_TAINT = enum.auto()
    UPDATE_NODE_CONDITION = enum.auto()
    UPDATE_NODE_ANNOTATION = enum.auto()
    UPDATE_POD_LABEL = enum.auto()
    UPDATE_POD_SCALE_DOWN = enum.auto()
    UPDATE_POD_TOLERATION = enum.auto()
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = enum.auto()
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = enum.auto()
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT | UPDATE_NODE_CONDITION
              | UPDATE_NODE_ANNOTATION | UPDATE_POD_LABEL | UPDATE_POD_SCALE_DOWN | UPDATE_POD_TOLERATION
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED | UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    ALL = ADD | DELETE | UPDATE


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """``fwk.ClusterEvent``: a ``resource`` (``Pod``, ``AssignedPod``, ``UnschedulablePod``, ``Node`` or ``*``) and
    its ``action``."""

    resource: str
    action: ActionType

    @property
    def wildcard(self) -> bool:
        return self.resource == WILDCARD and self.action == ActionType.ALL

    def matches(self, incoming: ClusterEvent) -> bool:
        """``ClusterEvent.Match``: this registration covers the ``incoming`` event."""
        if self.wildcard:
            return True
        resource_ok = (self.resource in (WILDCARD, incoming.resource)
                       or (self.resource == POD and incoming.resource in (ASSIGNED_POD, UNSCHEDULABLE_POD)))
        return resource_ok and bool(self.action & incoming.action)


def _section(obj: Mapping[str, Any] | None, name: str) -> Mapping[str, Any]:
    value = obj.get(name) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _labels(obj: Mapping[str, Any] | None) -> Any:
    return _section(obj, "metadata").get("labels") or {}


def _condition_statuses(node: Mapping[str, Any]) -> dict[Any, Any]:
    conditions = _section(node, "status").get("conditions")
    if not isinstance(conditions, list):
        return {}
    return {c.get("type"): c.get("status") for c in conditions if isinstance(c, Mapping)}


def node_update_events(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[ClusterEvent]:
    """``NodeSchedulingPropertiesChange(new, old)``: the Node update events, in upstream's order."""
    old_spec, new_spec = _section(old, "spec"), _section(new, "spec")
    actions = []
    if bool(old_spec.get("unschedulable")) != bool(new_spec.get("unschedulable")) and not new_spec.get(
            "unschedulable"):
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if _section(old, "status").get("allocatable") != _section(new, "status").get("allocatable"):
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if _labels(old) != _labels(new):
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if (old_spec.get("taints") or []) != (new_spec.get("taints") or []):
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if _condition_statuses(old) != _condition_statuses(new):
        actions.append(ActionType.UPDATE_NODE_CONDITION)
    if (_section(old, "metadata").get("annotations") or {}) != (_section(new, "metadata").get("annotations") or {}):
        actions.append(ActionType.UPDATE_NODE_ANNOTATION)
    return [ClusterEvent(NODE, a) for a in actions]


def _scaled_down(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """``extractPodScaleDown``: some request of ``old`` is gone or smaller in ``new`` (spec requests; upstream also
    reads the status' resources under InPlacePodVerticalScaling)."""
    old_requests, new_requests = compute_pod_resources(old).requests, compute_pod_resources(new).requests
    return any(name not in new_requests or amount > new_requests[name] for name, amount in old_requests.items())


def pod_update_events(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[ClusterEvent]:
    """``PodSchedulingPropertiesChange(new, old)``: the Pod update events, or the general ``Update``."""
    resource = ASSIGNED_POD if _section(new, "spec").get("nodeName") else UNSCHEDULABLE_POD
    old_spec, new_spec = _section(old, "spec"), _section(new, "spec")
    actions = []
    if _labels(old) != _labels(new):
        actions.append(ActionType.UPDATE_POD_LABEL)
    if _scaled_down(old, new):
        actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if not new_spec.get("schedulingGates") and old_spec.get("schedulingGates"):
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new_spec.get("tolerations") or []) != len(old_spec.get("tolerations") or []):
        actions.append(ActionType.UPDATE_POD_TOLERATION)
    return [ClusterEvent(resource, a) for a in actions] or [ClusterEvent(resource, ActionType.UPDATE)]
