"""The cluster events a watch delta makes, as kube-scheduler's event handlers report them to the queue. Pure.

``pkg/scheduler/eventhandlers.go`` (v1.34.1, QueueingHints on) calls ``MoveAllToActiveOrBackoffQueue`` with:

* a Node added: ``Node/Add`` (old None); updated: one event per kind of change
  (:func:`~observatory.scheduling.clusterevents.node_update_events`); deleted: ``Node/Delete`` (new None);
* an assigned pod added: ``AssignedPod/Add``; updated: ``PodSchedulingPropertiesChange``; deleted:
  ``AssignedPod/Delete``. kube-scheduler's pod informer selects ``status.phase!=Succeeded,status.phase!=Failed``,
  so a bound pod that finishes is a delete to it, and a finished pod's later updates are not seen;
* an unscheduled pod with ``status.nominatedNodeName`` deleted: ``UnschedulablePod/Delete`` (a nominated pod holds
  room on its node for lower-priority pods);
* a Binding that failed: ``AssignedPod/Delete`` with the assumed pod (``handleBindingCycleError``).

Each function returns ``(event, old, new)`` triples, computed *before* the delta is applied to the
:class:`~.cache.ClusterCache`; ``None`` as the event stands for a relist, handed to the queue as the wildcard.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from observatory.model.deltas import Deleted, Delta, Relisted, Upserted
from observatory.scheduling.clusterevents import (
    ASSIGNED_POD,
    NODE,
    UNSCHEDULABLE_POD,
    ActionType,
    ClusterEvent,
    node_update_events,
    pod_update_events,
)
from observatory.scheduling.pods import is_terminal

__all__ = ["ChangeEvent", "assumed_pod_deleted", "bound_pod_events", "node_events", "unbound_pod_deleted"]

Obj = Mapping[str, Any]
ChangeEvent = tuple[ClusterEvent | None, Obj | None, Obj | None]


def _identity(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return str(meta.get("uid") or "") or f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def node_events(delta: Delta, nodes: Mapping[str, Obj]) -> list[ChangeEvent]:
    """The events of a delta of the Nodes' watch; ``nodes`` is the cache's name -> Node before the delta."""
    if isinstance(delta, Relisted):
        return [(None, None, None)]
    if isinstance(delta, Upserted):
        old = nodes.get(str((delta.obj.get("metadata") or {}).get("name") or ""))
        if old is None:
            return [(ClusterEvent(NODE, ActionType.ADD), None, delta.obj)]
        return [(event, old, delta.obj) for event in node_update_events(old, delta.obj)]
    if isinstance(delta, Deleted):
        return [(ClusterEvent(NODE, ActionType.DELETE), delta.obj, None)]
    return []


def bound_pod_events(delta: Delta, bound: Mapping[str, Obj]) -> list[ChangeEvent]:
    """The events of a delta of the bound pods' watch; ``bound`` is the cache's uid -> Pod before the delta."""
    if isinstance(delta, Relisted):
        return [(None, None, None)]
    if isinstance(delta, Upserted):
        old = bound.get(_identity(delta.obj))
        new_done = is_terminal(delta.obj)
        if old is None or is_terminal(old):
            return [] if new_done else [(ClusterEvent(ASSIGNED_POD, ActionType.ADD), None, delta.obj)]
        if new_done:
            return [(ClusterEvent(ASSIGNED_POD, ActionType.DELETE), old, None)]
        return [(event, old, delta.obj) for event in pod_update_events(old, delta.obj)]
    if isinstance(delta, Deleted):
        old = bound.get(_identity(delta.obj), delta.obj)
        return [] if is_terminal(old) else [(ClusterEvent(ASSIGNED_POD, ActionType.DELETE), delta.obj, None)]
    return []


def unbound_pod_deleted(pod: Obj) -> list[ChangeEvent]:
    """An unscheduled pod left the API: an event only when it was nominated to a node."""
    if (pod.get("spec") or {}).get("nodeName") or not (pod.get("status") or {}).get("nominatedNodeName"):
        return []
    return [(ClusterEvent(UNSCHEDULABLE_POD, ActionType.DELETE), pod, None)]


def assumed_pod_deleted(pod: Obj, node: str) -> list[ChangeEvent]:
    """A pod assumed on ``node`` is no longer counted there (its Binding failed, or it was deleted first)."""
    assumed = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node}}
    return [(ClusterEvent(ASSIGNED_POD, ActionType.DELETE), assumed, None)]
