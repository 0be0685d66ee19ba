"""The JSON a scheduler writes besides the Binding: events, the PodScheduled condition patch, the Lease. Pure.

* :func:`scheduler_event`: an ``events.k8s.io/v1`` Event as client-go's events/v1 recorder makes it
  (``tools/events/event_recorder.go`` ``makeEvent``; reference §4.1-§4.2): ``metadata.name`` ``<pod>.<hex unix
  nanoseconds>`` in the pod's namespace, ``eventTime`` now (MicroTime), ``reportingController`` the profile (the
  schedulerName), ``reportingInstance`` ``<schedulerName>-<hostname>``, ``action``, ``reason``, ``regarding`` (the
  pod's ObjectReference: kind, namespace, name, uid, apiVersion, resourceVersion), ``note`` and ``type``; no
  deprecated fields. :func:`legacy_event` is the same through the core/v1 recorder that client-go's
  ``EventBroadcasterAdapter`` falls back to when the server does not serve ``events.k8s.io/v1``.
* :func:`condition_patch`: kube-scheduler's ``updatePod`` (``schedule_one.go``): ``podutil.UpdatePodCondition``
  with ``{type: PodScheduled, status: False, reason, message}`` (lastTransitionTime kept while the status does not
  change; nothing to write when nothing changed), sent as the strategic merge patch ``util.PatchPodStatus`` computes
  (``strategicpatch.CreateTwoWayMergePatch`` of the old and new status: the changed condition fields plus its
  ``type``, and ``$setElementOrder/conditions``).
* :func:`lease_spec`: client-go's ``LeaderElectionRecordToLeaseSpec`` (``tools/leaderelection/resourcelock``).

Times are ``metav1.MicroTime`` as serialised: RFC 3339 UTC with microseconds (``2026-08-22T14:20:24.123456Z``);
``metav1.Time`` (lastTransitionTime) has whole seconds.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "EVENTS_V1", "condition_patch", "lease_body", "lease_spec", "legacy_event", "micro_time", "object_reference",
    "rfc3339", "scheduler_event",
]

EVENTS_V1 = "events.k8s.io/v1"
POD_SCHEDULED = "PodScheduled"


def micro_time(now: datetime | None = None) -> str:
    """``metav1.MicroTime``: ``2026-08-22T14:20:24.123456Z``."""
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(now: datetime | None = None) -> str:
    """``metav1.Time``: ``2026-08-22T14:20:24Z``."""
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _meta(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = pod.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def object_reference(pod: Mapping[str, Any]) -> dict[str, str]:
    """``ref.GetReference`` of a Pod, as both recorders put it in ``regarding`` / ``involvedObject``."""
    meta = _meta(pod)
    ref = {"kind": "Pod", "namespace": str(meta.get("namespace") or ""), "name": str(meta.get("name") or ""),
           "uid": str(meta.get("uid") or ""), "apiVersion": "v1"}
    if meta.get("resourceVersion"):
        ref["resourceVersion"] = str(meta["resourceVersion"])
    return ref


def _event_name(pod: Mapping[str, Any], nanos: int | None) -> str:
    """``<name>.<hex unix nanoseconds>`` (``fmt.Sprintf("%v.%x", ref.Name, t.UnixNano())``)."""
    return f"{_meta(pod).get('name') or ''}.{(nanos if nanos is not None else time.time_ns()):x}"


def scheduler_event(pod: Mapping[str, Any], type_: str, reason: str, action: str, note: str, *, controller: str,
                    instance: str, now: datetime | None = None, nanos: int | None = None,
                    related: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``events.k8s.io/v1`` Event for ``POST /apis/events.k8s.io/v1/namespaces/{ns}/events``; ``related`` is
    the second object of ``Eventf(regarding, related, …)`` (the preemptor of a ``Preempted`` event), put after
    ``regarding`` as the Event type orders its fields."""
    namespace = str(_meta(pod).get("namespace") or "") or "default"
    event: dict[str, Any] = {
        "apiVersion": EVENTS_V1, "kind": "Event", "metadata": {"name": _event_name(pod, nanos), "namespace": namespace},
        "eventTime": micro_time(now), "reportingController": controller, "reportingInstance": instance,
        "action": action, "reason": reason, "regarding": object_reference(pod)}
    if related is not None:
        event["related"] = object_reference(related)
    event.update({"note": note, "type": type_})
    return event


def legacy_event(pod: Mapping[str, Any], type_: str, reason: str, note: str, *, controller: str,
                 now: datetime | None = None, nanos: int | None = None,
                 related: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The core/v1 Event the legacy recorder (``tools/record``, source ``{component: controller}``) makes, for
    ``POST /api/v1/namespaces/{ns}/events`` when ``events.k8s.io/v1`` is not served."""
    namespace = str(_meta(pod).get("namespace") or "") or "default"
    stamp = rfc3339(now)
    event = {"apiVersion": "v1", "kind": "Event",
             "metadata": {"name": _event_name(pod, nanos), "namespace": namespace},
             "involvedObject": object_reference(pod), "reason": reason, "message": note,
             "source": {"component": controller}, "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
             "type": type_, "eventTime": None, "reportingComponent": controller, "reportingInstance": ""}
    if related is not None:
        event["related"] = object_reference(related)
    return event


def series_patch(count: int, last_observed: datetime) -> dict[str, Any]:
    """The strategic merge patch client-go sends for an isomorphic event: ``{"series": {count, lastObservedTime}}``."""
    return {"series": {"count": count, "lastObservedTime": micro_time(last_observed)}}


def _diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``new`` that differ from ``old`` (a missing key counts as null; removed keys become null): a
    two-way merge patch of two maps whose absent fields serialise as null."""
    out: dict[str, Any] = {k: v for k, v in new.items() if old.get(k) != v}
    out.update({k: None for k, v in old.items() if k not in new and v is not None})
    return out


def condition_patch(pod: Mapping[str, Any], reason: str, message: str,
                    now: datetime | None = None) -> dict[str, Any] | None:
    """The strategic merge patch for ``PATCH /api/v1/namespaces/{ns}/pods/{name}/status`` that sets
    ``PodScheduled=False`` with ``reason`` (``Unschedulable`` or ``SchedulerError``) and ``message`` (the full
    FitError text), or None when the pod already carries exactly that condition (upstream then writes nothing)."""
    status = pod.get("status")
    status = status if isinstance(status, Mapping) else {}
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, Mapping)]
    condition: dict[str, Any] = {"type": POD_SCHEDULED, "status": "False", "lastProbeTime": None,
                                 "lastTransitionTime": rfc3339(now), "reason": reason, "message": message}
    old = next((c for c in conditions if c.get("type") == POD_SCHEDULED), None)
    order = [{"type": c.get("type")} for c in conditions]
    if old is None:
        element = {k: v for k, v in condition.items() if v is not None}
        order.append({"type": POD_SCHEDULED})
    else:
        if old.get("status") == "False" and old.get("lastTransitionTime"):
            condition["lastTransitionTime"] = old["lastTransitionTime"]  # same status: the transition stands
        element = _diff(old, condition)
        if not element:
            return None
        element["type"] = POD_SCHEDULED
    return {"status": {"$setElementOrder/conditions": order, "conditions": [element]}}


def lease_spec(holder: str, duration_seconds: int, acquired: datetime, renewed: datetime,
               transitions: int) -> dict[str, Any]:
    """``LeaderElectionRecordToLeaseSpec``: holderIdentity, leaseDurationSeconds, acquireTime, renewTime,
    leaseTransitions (``holder`` "" on release)."""
    return {"holderIdentity": holder, "leaseDurationSeconds": int(duration_seconds),
            "acquireTime": micro_time(acquired), "renewTime": micro_time(renewed), "leaseTransitions": transitions}


def lease_body(namespace: str, name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A new Lease for ``POST /apis/coordination.k8s.io/v1/namespaces/{namespace}/leases``."""
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": namespace}, "spec": dict(spec)}
