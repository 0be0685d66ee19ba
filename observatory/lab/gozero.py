"""Fields a typed Go decode and re-encode gives back after a patch, where the lab keeps plain JSON.

kube-apiserver applies a patch to the object's JSON, decodes the result into the Go type and stores that; writing it
out again emits every field Go's ``encoding/json`` cannot omit. A patch that adds a pod condition loses its
``"lastProbeTime": null`` on the way (the strategic merge's ``discardNullValuesFromPatch`` for values it adds whole,
RFC 7386 for a merge patch), but ``PodCondition.LastProbeTime`` and ``LastTransitionTime`` are ``metav1.Time``
structs, for which ``omitempty`` has no effect (``k8s.io/api/core/v1/types.go``), so the stored condition carries
them again, as ``null`` when zero. :func:`restore_pod_condition_times` does the same, in ``PodCondition``'s field
order (type, observedGeneration, status, lastProbeTime, lastTransitionTime, reason, message; other keys after).
"""

from __future__ import annotations

from typing import Any

__all__ = ["restore_pod_condition_times"]

_POD_CONDITION_ORDER = ("type", "observedGeneration", "status", "lastProbeTime", "lastTransitionTime", "reason",
                        "message")
_ALWAYS = ("lastProbeTime", "lastTransitionTime")


def restore_pod_condition_times(pod: dict[str, Any]) -> None:
    """Give each ``status.conditions`` entry of ``pod`` its ``lastProbeTime`` and ``lastTransitionTime`` (null
    when missing), in ``PodCondition``'s field order; entries that are not objects are left to validation."""
    status = pod.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return
    for i, cond in enumerate(conditions):
        if not isinstance(cond, dict) or all(k in cond for k in _ALWAYS):
            continue
        full = {**cond, **{k: cond.get(k) for k in _ALWAYS}}
        ordered = {k: full[k] for k in _POD_CONDITION_ORDER if k in full}
        ordered.update((k, v) for k, v in full.items() if k not in ordered)
        conditions[i] = ordered
