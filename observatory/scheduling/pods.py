"""Small facts about Pods the scheduler needs: priority, responsibility, terminal phase, identity.

Reproduces, from kube-scheduler v1.34.1:

* ``k8s.io/component-helpers scheduling/corev1/helpers.go`` ``PodPriority``: ``spec.priority``, or 0 when unset;
* ``pkg/scheduler/eventhandlers.go`` ``responsibleForPod`` / ``assignedPod`` and ``pkg/scheduler/schedule_one.go``
  ``skipPodSchedule``: a scheduler queues a pod only when ``spec.schedulerName`` names it (the API server defaults
  an empty name to ``default-scheduler``) and ``spec.nodeName`` is empty; it skips a pod being deleted; the
  ``SchedulingGates`` PreEnqueue plugin holds a pod with ``spec.schedulingGates``;
* ``pkg/scheduler/scheduler.go`` ``newPodInformer``: pods in phase Succeeded or Failed are not watched at all, so
  they neither get scheduled nor count towards a node's usage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "DEFAULT_SCHEDULER_NAME", "is_terminal", "not_responsible_reason", "pod_key", "pod_priority",
    "responsible_for_pod",
]

DEFAULT_SCHEDULER_NAME = "default-scheduler"


def _spec(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    return spec if isinstance(spec, Mapping) else {}


def _meta(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = pod.get("metadata") if isinstance(pod, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def pod_priority(pod: Mapping[str, Any]) -> int:
    """``spec.priority`` (set by the API server's Priority admission from ``priorityClassName``), else 0."""
    priority = _spec(pod).get("priority")
    return priority if isinstance(priority, int) and not isinstance(priority, bool) else 0


def pod_key(pod: Mapping[str, Any]) -> str:
    """``namespace/name`` (namespace ``default`` when missing), as events and logs name a pod."""
    meta = _meta(pod)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def is_terminal(pod: Mapping[str, Any]) -> bool:
    """Phase Succeeded or Failed: invisible to the scheduler, and its requests no longer count on its node."""
    status = pod.get("status") if isinstance(pod, Mapping) else None
    return isinstance(status, Mapping) and status.get("phase") in ("Succeeded", "Failed")


def not_responsible_reason(pod: Mapping[str, Any], scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> str | None:
    """Why the scheduler named ``scheduler_name`` would not try to place ``pod`` now, or None when it would.

    The reasons, checked in this order: ``schedulerName is "<other>"``, ``already bound to <node>``,
    ``phase is <Succeeded|Failed>``, ``being deleted``, ``scheduling gates: <a>, <b>``."""
    spec = _spec(pod)
    name = spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME
    if name != scheduler_name:
        return f'schedulerName is "{name}"'
    if spec.get("nodeName"):
        return f"already bound to {spec['nodeName']}"
    if is_terminal(pod):
        return f"phase is {pod['status']['phase']}"
    if _meta(pod).get("deletionTimestamp"):
        return "being deleted"
    gates = spec.get("schedulingGates")
    if isinstance(gates, list) and gates:
        names = [g.get("name", "") if isinstance(g, Mapping) else str(g) for g in gates]
        return "scheduling gates: " + ", ".join(names)
    return None


def responsible_for_pod(pod: Mapping[str, Any], scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> bool:
    """True when ``scheduler_name`` would schedule ``pod`` now: its schedulerName matches, it is not bound, not
    terminal, not being deleted and not gated."""
    return not_responsible_reason(pod, scheduler_name) is None
