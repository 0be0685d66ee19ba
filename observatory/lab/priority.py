"""The Priority admission plugin: a pod's priority from its PriorityClass, and one globalDefault class at most.

Reproduces kube-apiserver v1.34.1 ``plugin/pkg/admission/priority/admission.go``:

* ``Admit`` on pod create (subresources are ignored):
  - no ``spec.priorityClassName``: the globalDefault class (the lowest value when several claim it) gives its name,
    value and preemptionPolicy; with none, the name stays empty, priority 0 and ``PreemptLowerPriority``
    (``getDefaultPriority``);
  - a named class that does not exist: 403 ``pods "x" is forbidden: no PriorityClass with name high was found``;
  - a ``spec.priority`` that differs from the class's value: 403 ``pods "x" is forbidden: the integer value of
    priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given
    PriorityClass name``;
  - a ``spec.preemptionPolicy`` that differs from the class's: 403 ``… the string value of PreemptionPolicy
    (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from
    the given PriorityClass name``;
  - the name in the message is the pod's name, else its generateName, else ``Unknown`` (``admission.NewForbidden``
    in apiserver ``pkg/admission/errors.go``: names are generated after admission).
* ``Validate`` on PriorityClass create and update: a second globalDefault class is refused with 403
  ``priorityclasses.scheduling.k8s.io "b" is forbidden: PriorityClass a is already marked as default. Only one
  default can exist`` (on update only when the existing default is another class).

The plugin reads the classes from the store, as upstream reads its informer's lister.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from observatory.lab import errors
from observatory.lab.priorityclass import GROUP_RESOURCE, PREEMPT_LOWER_PRIORITY

__all__ = ["admit_pod", "default_priority_class", "validate_priority_class"]


def default_priority_class(classes: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """``getDefaultPriorityClass``: the globalDefault class with the lowest value (the first listed on a tie)."""
    found: dict[str, Any] | None = None
    for pc in classes:
        if pc.get("globalDefault") and (found is None or int(found.get("value") or 0) > int(pc.get("value") or 0)):
            found = pc
    return found


def _admission_name(meta: dict[str, Any]) -> str:
    return str(meta.get("name") or meta.get("generateName") or "Unknown")


def admit_pod(pod: dict[str, Any], classes: dict[str, dict[str, Any]]) -> None:
    """``admitPod`` on create: set ``spec.priorityClassName`` (from the default), ``spec.priority`` and
    ``spec.preemptionPolicy`` in place, or raise the 403 StatusError. ``classes``: name -> stored PriorityClass."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    meta = pod.get("metadata") or {}
    name = spec.get("priorityClassName") or ""
    if not name:
        default = default_priority_class(classes.values())
        if default is not None:
            name = default["metadata"]["name"]
            priority = int(default.get("value") or 0)
            policy = default.get("preemptionPolicy")
        else:
            priority, policy = 0, PREEMPT_LOWER_PRIORITY
        spec["priorityClassName"] = name
    else:
        pc = classes.get(name)
        if pc is None:
            raise errors.forbidden("pods", _admission_name(meta), f"no PriorityClass with name {name} was found")
        priority, policy = int(pc.get("value") or 0), pc.get("preemptionPolicy")
    given = spec.get("priority")
    if given is not None and given != priority:
        raise errors.forbidden("pods", _admission_name(meta), (
            f"the integer value of priority ({given}) must not be provided in pod spec; priority admission "
            f"controller computed {priority} from the given PriorityClass name"))
    spec["priority"] = priority
    if policy:
        given_policy = spec.get("preemptionPolicy")
        if given_policy and given_policy != policy:
            raise errors.forbidden("pods", _admission_name(meta), (
                f"the string value of PreemptionPolicy ({given_policy}) must not be provided in pod spec; priority "
                f"admission controller computed {policy} from the given PriorityClass name"))
        spec["preemptionPolicy"] = policy
    if not spec.get("priorityClassName"):
        spec.pop("priorityClassName", None)  # omitempty: an empty name is not serialised


def validate_priority_class(pc: dict[str, Any], classes: dict[str, dict[str, Any]], *, update: bool) -> None:
    """``validatePriorityClass``: raise the 403 when ``pc`` claims globalDefault while another class holds it."""
    if not pc.get("globalDefault"):
        return
    default = default_priority_class(classes.values())
    if default is None:
        return
    name = pc["metadata"]["name"]
    held_by = default["metadata"]["name"]
    if not update or held_by != name:
        raise errors.forbidden(GROUP_RESOURCE, name,
                               f"PriorityClass {held_by} is already marked as default. Only one default can exist")
