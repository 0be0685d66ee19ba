"""scheduling.k8s.io/v1 PriorityClass: defaults, validation, the system classes and the delete guard.

Reproduces kube-apiserver v1.34.1:

* ``pkg/apis/scheduling/v1/defaults.go`` ``SetDefaults_PriorityClass``: ``preemptionPolicy`` defaults to
  ``PreemptLowerPriority``; ``value`` (no omitempty) is 0 when left out; ``globalDefault`` and ``description``
  are omitempty and stay absent when unset;
* ``pkg/apis/scheduling/validation/validation.go`` ``ValidatePriorityClass`` (422 Invalid): the name is a DNS-1123
  subdomain; a name with the ``system-`` prefix must be one of the two system classes with their value and
  globalDefault (``IsKnownSystemPriorityClass`` in ``pkg/apis/scheduling/v1/helpers.go``), else ``metadata.name:
  Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: <why>``; any
  other class's value is at most :data:`HIGHEST_USER_DEFINABLE_PRIORITY` (``value: Forbidden: maximum allowed
  value of a user defined priority is 1000000000``); ``preemptionPolicy`` is ``PreemptLowerPriority`` or
  ``Never`` (``ValidatePreemptionPolicy`` in ``pkg/apis/core/validation/validation.go``);
* ``ValidatePriorityClassUpdate``: ``value: Forbidden: may not be changed in an update.`` and
  ``preemptionPolicy: Invalid value: …: field is immutable``;
* ``pkg/registry/scheduling/priorityclass/storage/storage.go`` ``REST.Delete``: the system classes cannot be
  deleted (403 ``priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority
  class and cannot be deleted``);
* the ``scheduling/bootstrap-system-priority-classes`` post-start hook (``pkg/registry/scheduling/rest``): both
  system classes exist from the start (:func:`system_priority_classes`).
"""

from __future__ import annotations

import json
from typing import Any

from observatory.lab import errors
from observatory.lab.strategy import Cause, validate_object_meta

__all__ = [
    "HIGHEST_USER_DEFINABLE_PRIORITY", "SYSTEM_PRIORITY_CLASSES", "check_delete", "prepare_create",
    "system_priority_classes", "validate_create", "validate_update",
]

GROUP_RESOURCE = "priorityclasses.scheduling.k8s.io"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
"""``scheduling.HighestUserDefinablePriority``."""
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
"""``scheduling.SystemCriticalPriority``."""
SYSTEM_PREFIX = "system-"
"""``scheduling.SystemPriorityClassPrefix``."""
PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER = "PreemptLowerPriority", "Never"

SYSTEM_PRIORITY_CLASSES: dict[str, tuple[int, str]] = {
    "system-node-critical": (SYSTEM_CRITICAL_PRIORITY + 1000,
                             "Used for system critical pods that must not be moved from their current node."),
    "system-cluster-critical": (SYSTEM_CRITICAL_PRIORITY,
                                "Used for system critical pods that must run in the cluster, but can be moved to "
                                "another node if necessary."),
}
"""name -> (value, description), ``systemPriorityClasses`` in ``pkg/apis/scheduling/v1/helpers.go``."""


def system_priority_classes() -> list[dict[str, Any]]:
    """The two PriorityClass manifests kube-apiserver creates at start, cluster-critical first (the hook's order
    does not show: a list is sorted by name)."""
    return [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
             "value": value, "description": description}
            for name, (value, description) in sorted(SYSTEM_PRIORITY_CLASSES.items())]


def prepare_create(obj: dict[str, Any]) -> dict[str, Any]:
    """``SetDefaults_PriorityClass`` plus the wire form: value 0 when absent, preemptionPolicy defaulted, a false
    globalDefault and an empty description left out (omitempty)."""
    out = dict(obj)
    out["value"] = out.get("value") if out.get("value") is not None else 0
    if not out.get("preemptionPolicy"):
        out["preemptionPolicy"] = PREEMPT_LOWER_PRIORITY
    if not out.get("globalDefault"):
        out.pop("globalDefault", None)
    if not out.get("description"):
        out.pop("description", None)
    return out


def _known_system_class(name: str, value: int, global_default: bool) -> str | None:
    """``IsKnownSystemPriorityClass``: None when it is one, else the error text."""
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if known[0] != value:
        return f"value of {name} PriorityClass must be {known[0]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return None


def _validate_policy(policy: Any) -> list[Cause]:
    if policy in (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER):
        return []
    if not policy:
        return [("FieldValueRequired", "preemptionPolicy", "Required value")]
    return [("FieldValueNotSupported", "preemptionPolicy",
             f'Unsupported value: {json.dumps(policy)}: supported values: "{PREEMPT_LOWER_PRIORITY}", '
             f'"{PREEMPT_NEVER}"')]


def validate_create(obj: dict[str, Any]) -> list[Cause]:
    """``ValidatePriorityClass`` on the defaulted object."""
    causes = validate_object_meta(obj.get("metadata") or {}, namespaced=False)
    name = str((obj.get("metadata") or {}).get("name") or "")
    value = int(obj.get("value") or 0)
    if name.startswith(SYSTEM_PREFIX):
        problem = _known_system_class(name, value, bool(obj.get("globalDefault")))
        if problem is not None:
            causes.append(("FieldValueForbidden", "metadata.name",
                           f"Forbidden: priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system "
                           f"use only. error: {problem}"))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        causes.append(("FieldValueForbidden", "value", "Forbidden: maximum allowed value of a user defined priority "
                                                       f"is {HIGHEST_USER_DEFINABLE_PRIORITY}"))
    if "preemptionPolicy" in obj:
        causes.extend(_validate_policy(obj.get("preemptionPolicy")))
    return causes


def validate_update(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidatePriorityClassUpdate``: value and preemptionPolicy are immutable."""
    causes: list[Cause] = []
    if (new.get("value") or 0) != (old.get("value") or 0):
        causes.append(("FieldValueForbidden", "value", "Forbidden: may not be changed in an update."))
    if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
        causes.append(("FieldValueInvalid", "preemptionPolicy",
                       f"Invalid value: {json.dumps(new.get('preemptionPolicy'))}: field is immutable"))
    return causes


def check_delete(name: str) -> None:
    """``REST.Delete``: refuse to delete a system class (403)."""
    if name in SYSTEM_PRIORITY_CLASSES:
        raise errors.forbidden(GROUP_RESOURCE, name, "this is a system priority class and cannot be deleted")
