"""``ValidatePodUpdate`` and ``ValidatePodStatusUpdate`` of k/k ``pkg/apis/core/validation/validation.go``.

Update: ObjectMeta update rules, the whole pod revalidated, ``pod updates may not add or remove containers``
(``Forbidden``, and nothing more is checked), images ``Required value``, activeDeadlineSeconds (``must be between 0 and
2147483647, inclusive``, ``must be less than or equal to previous value``, ``must not update from a positive integer to
nil value``), tolerations (``existing toleration can not be modified except its tolerationSeconds``), scheduling gates
(``only deletion is allowed, but found new scheduling gate 'x'``), for gated pods additions to ``spec.nodeSelector``
(``only additions to spec.nodeSelector are allowed (no mutations or deletions)``) and node-affinity changes, and any
other spec change: ``spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,...``.
Upstream appends a newline and a ``cmp.Diff`` of the specs to that last message; the lab does not print the diff.

Status update: ObjectMeta update rules, condition types (non-system ones must be qualified names, reported at
``metadata.conditions[i].Type`` as upstream does), ``status.nodeName: Forbidden: may not be changed directly``,
``status.nominatedNodeName`` a DNS subdomain, ``status.qosClass`` immutable, and terminated containers that may not
restart ``may not be transitioned to non-terminated state``.
"""

from __future__ import annotations

import copy
from typing import Any

from observatory.lab.selectors import go_quote
from observatory.lab.validation import field, names, scheduling
from observatory.lab.validation.field import Cause
from observatory.lab.validation.meta import FIELD_IMMUTABLE, validate_object_meta_update
from observatory.lab.validation.pod import MAX_INT32, range_error, validate_pod_metadata_and_spec

UPDATABLE = ("`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
             "`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
             "(allow it to be set to 1 if it was previously negative)")
"""``updatablePodSpecFields`` joined with ``,``."""


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _spec(pod: dict[str, Any]) -> dict[str, Any]:
    return _map(pod.get("spec"))


def _containers(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    value = spec.get(kind)
    return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []


def _go_string_map(value: dict[str, Any]) -> str:
    """``%#v`` of a ``map[string]string`` (keys sorted, as fmt prints maps)."""
    return "map[string]string{" + ", ".join(f"{go_quote(k)}:{go_quote(str(v))}" for k, v in sorted(value.items())) \
        + "}"


def _toleration_key(toleration: Any) -> dict[str, Any]:
    """A toleration as Go's ``DeepEqual`` sees it once tolerationSeconds is set aside: unset and empty are alike."""
    return {k: v for k, v in _map(toleration).items() if k != "tolerationSeconds" and v not in ("", None)}


def _only_added_tolerations(new: list[Any], old: list[Any]) -> list[Cause]:
    """``validateOnlyAddedTolerations``: each old toleration is still there (tolerationSeconds may change)."""
    for toleration in old:
        if not any(_toleration_key(toleration) == _toleration_key(n) for n in new):
            return [field.forbidden("spec.tolerations",
                                    "existing toleration can not be modified except its tolerationSeconds")]
    return scheduling.validate_tolerations(new, "spec.tolerations")


def _only_deleted_gates(new: list[Any], old: list[Any]) -> list[Cause]:
    old_names = {g.get("name") for g in old if isinstance(g, dict)}
    added: dict[str, int] = {}
    for i, gate in enumerate(new):
        if isinstance(gate, dict):
            added[gate.get("name") or ""] = i
    return [field.forbidden(f"spec.schedulingGates[{i}].name",
                            f"only deletion is allowed, but found new scheduling gate '{name}'")
            for name, i in added.items() if name not in old_names]


def validate_pod_update(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidatePodUpdate`` (``new`` after ``PrepareForUpdate``: it carries the stored status)."""
    causes = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    causes += validate_pod_metadata_and_spec(new)
    new_spec, old_spec = _spec(new), _spec(old)
    for kind in ("containers", "initContainers"):
        new_c, old_c = _containers(new_spec, kind), _containers(old_spec, kind)
        if len(new_c) != len(old_c):
            return [*causes, field.forbidden(f"spec.{kind}", "pod updates may not add or remove containers")]
        for i, ctr in enumerate(new_c):
            image = ctr.get("image") or ""
            if not image:
                causes.append(field.required(f"spec.{kind}[{i}].image"))
            if image != image.strip():
                causes.append(field.invalid(f"spec.{kind}[{i}].image", image,
                                            "must not have leading or trailing whitespace"))
    new_deadline, old_deadline = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if isinstance(new_deadline, int):
        if not 0 <= new_deadline <= MAX_INT32:
            return [*causes, field.invalid("spec.activeDeadlineSeconds", new_deadline, range_error(0, MAX_INT32))]
        if isinstance(old_deadline, int) and old_deadline < new_deadline:
            return [*causes, field.invalid("spec.activeDeadlineSeconds", new_deadline,
                                           "must be less than or equal to previous value")]
    elif old_deadline is not None:
        causes.append(field.invalid("spec.activeDeadlineSeconds", None,
                                    "must not update from a positive integer to nil value"))
    new_tolerations = _list(new_spec.get("tolerations"))
    old_tolerations = _list(old_spec.get("tolerations"))
    causes += _only_added_tolerations(new_tolerations, old_tolerations)
    new_gates = _list(new_spec.get("schedulingGates"))
    old_gates = _list(old_spec.get("schedulingGates"))
    causes += _only_deleted_gates(new_gates, old_gates)
    if new_spec == old_spec:
        return causes
    munged = copy.deepcopy(new_spec)
    for kind in ("containers", "initContainers"):
        for ctr, old_ctr in zip(_containers(munged, kind), _containers(old_spec, kind), strict=False):
            ctr["image"] = old_ctr.get("image")
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged.pop(key, None)
        if key in old_spec:
            munged[key] = old_spec[key]
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if old_gates:
        new_selector = _map(munged.get("nodeSelector"))
        old_selector = _map(old_spec.get("nodeSelector"))
        if new_selector != old_selector:
            if any(new_selector.get(k) != v for k, v in old_selector.items()):
                causes.append(field.invalid("spec.nodeSelector", field.GoValue(_go_string_map(new_selector)),
                                            "only additions to spec.nodeSelector are allowed (no mutations or "
                                            "deletions)"))
            munged.pop("nodeSelector", None)
            if "nodeSelector" in old_spec:
                munged["nodeSelector"] = old_spec["nodeSelector"]
        new_affinity = _map(munged.get("affinity"))
        old_affinity = _map(old_spec.get("affinity"))
        if new_affinity.get("nodeAffinity") != old_affinity.get("nodeAffinity"):
            rest = {k: v for k, v in new_affinity.items() if k != "nodeAffinity"}
            if old_affinity.get("nodeAffinity") is not None:
                rest["nodeAffinity"] = old_affinity["nodeAffinity"]
            if rest or "affinity" in old_spec:
                munged["affinity"] = rest
            else:
                munged.pop("affinity", None)
    if munged != old_spec:
        causes.append(field.forbidden("spec", f"pod updates may not change fields other than {UPDATABLE}"))
    return causes


def _terminated(status: dict[str, Any]) -> bool:
    state = status.get("state")
    return isinstance(state, dict) and state.get("terminated") is not None


def _exit_code(status: dict[str, Any]) -> int:
    return ((status.get("state") or {}).get("terminated") or {}).get("exitCode") or 0


def _state_transitions(new: Any, old: Any, policy: str, path: str, restartable: set[Any]) -> list[Cause]:
    """``ValidateContainerStateTransition`` (init containers: restartable sidecars may restart)."""
    if policy == "Always":
        return []
    causes: list[Cause] = []
    new_list = [s for s in new if isinstance(s, dict)] if isinstance(new, list) else []
    for i, old_status in enumerate(s for s in (old if isinstance(old, list) else []) if isinstance(s, dict)):
        if not _terminated(old_status) or (_exit_code(old_status) != 0 and policy == "OnFailure"):
            continue
        if old_status.get("name") in restartable:
            continue
        for new_status in new_list:
            if new_status.get("name") == old_status.get("name") and not _terminated(new_status):
                causes.append(field.forbidden(f"{path}[{i}].state", "may not be transitioned to non-terminated state"))
    return causes


def validate_pod_status_update(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidatePodStatusUpdate``."""
    causes = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    status = _map(new.get("status"))
    old_status = _map(old.get("status"))
    system = ("PodScheduled", "Ready", "Initialized")
    for i, cond in enumerate(_list(status.get("conditions"))):
        kind = cond.get("type") if isinstance(cond, dict) else ""
        if isinstance(kind, str) and kind not in system:
            causes += [field.invalid(f"metadata.conditions[{i}].Type", kind, msg)
                       for msg in names.is_qualified_name(kind)]
    if (_spec(new).get("nodeName") or "") != (_spec(old).get("nodeName") or ""):
        causes.append(field.forbidden("status.nodeName", "may not be changed directly"))
    nominated = status.get("nominatedNodeName") or ""
    if nominated and nominated != (old_status.get("nominatedNodeName") or ""):
        causes += [field.invalid("status.nominatedNodeName", nominated, msg)
                   for msg in names.name_is_dns_subdomain(nominated)]
    if (status.get("qosClass") or "") != (old_status.get("qosClass") or ""):
        causes.append(field.invalid("status.qosClass", status.get("qosClass") or "", FIELD_IMMUTABLE))
    policy = _spec(old).get("restartPolicy") or ""
    restartable = {c.get("name") for c in _containers(_spec(old), "initContainers")
                   if c.get("restartPolicy") == "Always"}
    causes += _state_transitions(status.get("containerStatuses"), old_status.get("containerStatuses"), policy,
                                 "status.containerStatuses", set())
    causes += _state_transitions(status.get("initContainerStatuses"), old_status.get("initContainerStatuses"), policy,
                                 "status.initContainerStatuses", restartable)
    return causes
