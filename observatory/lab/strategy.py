"""Defaulting, validation and create-time status for the kinds the lab serves.

This is the part of kube-apiserver that runs between decoding and storage: the scheme's defaulters
(``pkg/apis/core/v1/defaults.go``), the admission plugins a default cluster runs on pods (ServiceAccount's
``serviceAccountName``, DefaultTolerationSeconds, Priority), the pod strategy's ``PrepareForCreate`` (phase Pending,
qosClass, the SchedulingGated condition of reference §1.6), and the field validation whose messages the reference
pins (``pkg/apis/core/validation/validation.go``). Errors are returned as ``(type, field, detail)`` causes for
:func:`observatory.lab.errors.invalid`.
"""

from __future__ import annotations

import copy
import re
import secrets
from typing import Any

Cause = tuple[str, str, str]

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_GENERATE_CHARS = "bcdfghjklmnpqrstvwxz2456789"
"""``utilrand.String``'s alphabet (apimachinery ``pkg/util/rand``), used for ``generateName`` suffixes."""

GATED_CONDITION = {
    "type": "PodScheduled",
    "status": "False",
    "lastProbeTime": None,
    "lastTransitionTime": None,
    "reason": "SchedulingGated",
    "message": "Scheduling is blocked due to non-empty scheduling gates",
}


def generate_name(prefix: str) -> str:
    """``prefix`` plus five random characters, as the names.SimpleNameGenerator does (prefix cut to 58)."""
    return prefix[:58] + "".join(secrets.choice(_GENERATE_CHARS) for _ in range(5))


def validate_object_meta(meta: dict[str, Any], namespaced: bool, name_is_label: bool = False) -> list[Cause]:
    """ObjectMeta checks: name (or generateName) required and well formed."""
    causes: list[Cause] = []
    name = meta.get("name") or ""
    if not name:
        causes.append(("FieldValueRequired", "metadata.name", "Required value: name or generateName is required"))
    else:
        pattern, msg = (_DNS1123_LABEL, _LABEL_MSG) if name_is_label else (_DNS1123_SUBDOMAIN, _SUBDOMAIN_MSG)
        if len(name) > (63 if name_is_label else 253) or not pattern.match(name):
            causes.append(("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": {msg}'))
    return causes


def _image_pull_policy(image: str) -> str:
    """``SetDefaults_Container``: Always for ``:latest`` or an untagged image without digest, else IfNotPresent."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _default_container(c: dict[str, Any]) -> None:
    c.setdefault("resources", {})
    res = c["resources"]
    if res.get("limits") and not res.get("requests"):
        res["requests"] = dict(res["limits"])
    elif res.get("limits"):
        for k, v in res["limits"].items():
            res["requests"].setdefault(k, v)
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    if c.get("image"):
        c.setdefault("imagePullPolicy", _image_pull_policy(c["image"]))


def qos_class(spec: dict[str, Any]) -> str:
    """The pod's QoS class (``pkg/apis/core/helper/qos``): Guaranteed, Burstable or BestEffort."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    any_set = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req = {k: v for k, v in (res.get("requests") or {}).items() if k in ("cpu", "memory")}
        lim = {k: v for k, v in (res.get("limits") or {}).items() if k in ("cpu", "memory")}
        if req or lim:
            any_set = True
        if set(lim) != {"cpu", "memory"} or any(str(req.get(k, lim[k])) != str(lim[k]) for k in lim):
            guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def prepare_pod_create(pod: dict[str, Any]) -> dict[str, Any]:
    """Default a new pod and set its create-time status. Returns a new dict."""
    pod = copy.deepcopy(pod)
    spec = pod.setdefault("spec", {})
    for c in spec.get("containers") or []:
        if isinstance(c, dict):
            _default_container(c)
    for c in spec.get("initContainers") or []:
        if isinstance(c, dict):
            _default_container(c)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    if spec.get("tolerations") is None:  # JSON null decodes to a nil slice in Go: as if left out
        spec["tolerations"] = []
    tolerations = spec["tolerations"]
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if isinstance(tolerations, list) and not any(
                isinstance(t, dict) and t.get("key") == key and t.get("effect") in ("NoExecute", None, "")
                for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    spec.setdefault("priority", 0)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    status: dict[str, Any] = {"phase": "Pending"}
    if spec.get("schedulingGates"):
        status["conditions"] = [dict(GATED_CONDITION)]
    status["qosClass"] = qos_class(spec)
    pod["status"] = status
    return pod


def validate_pod_create(pod: dict[str, Any]) -> list[Cause]:
    """``ValidatePodCreate`` for the fields the lab checks: metadata, containers, gates with nodeName."""
    causes = validate_object_meta(pod.get("metadata") or {}, namespaced=True)
    spec = pod.get("spec") or {}
    containers = spec.get("containers")
    if not containers:
        causes.append(("FieldValueRequired", "spec.containers", "Required value"))
    for i, c in enumerate(containers or []):
        base = f"spec.containers[{i}]"
        if not c.get("name"):
            causes.append(("FieldValueRequired", f"{base}.name", "Required value"))
        elif not _DNS1123_LABEL.match(c["name"]) or len(c["name"]) > 63:
            causes.append(("FieldValueInvalid", f"{base}.name", f'Invalid value: "{c["name"]}": {_LABEL_MSG}'))
        if not c.get("image"):
            causes.append(("FieldValueRequired", f"{base}.image", "Required value"))
    names = [c.get("name") for c in containers or [] if c.get("name")]
    for i, c in enumerate(containers or []):
        if c.get("name") and names.index(c["name"]) != i:
            causes.append(("FieldValueDuplicate", f"spec.containers[{i}].name", f'Duplicate value: "{c["name"]}"'))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        causes.append(
            ("FieldValueForbidden", "spec.nodeName",
             "Forbidden: cannot be set until all schedulingGates have been cleared")
        )
    return causes


def prepare_namespace_create(ns: dict[str, Any]) -> dict[str, Any]:
    """Namespaces get the ``kubernetes`` finalizer, phase Active and the ``kubernetes.io/metadata.name`` label."""
    ns = copy.deepcopy(ns)
    meta = ns["metadata"]
    meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name", "")
    ns.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    ns["status"] = {"phase": "Active"}
    return ns


def prepare_create(resource: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Default a new object of ``resource`` (pods, namespaces; others are stored as given)."""
    if resource == "pods":
        return prepare_pod_create(obj)
    if resource == "namespaces":
        return prepare_namespace_create(obj)
    if resource == "nodes":
        obj = copy.deepcopy(obj)
        obj.setdefault("spec", {})
        obj.setdefault("status", {})
    return obj


def validate_create(resource: str, obj: dict[str, Any]) -> list[Cause]:
    """Validation causes for a new object of ``resource`` (empty when valid)."""
    if resource == "pods":
        return validate_pod_create(obj)
    if resource == "namespaces":
        return validate_object_meta(obj.get("metadata") or {}, namespaced=False, name_is_label=True)
    return validate_object_meta(obj.get("metadata") or {}, namespaced=resource == "events")


_POD_MUTABLE_SPEC = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates")


def validate_pod_update(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """The gist of ``ValidatePodUpdate``: only images, activeDeadlineSeconds, tolerations, the grace period and
    the removal of scheduling gates may change; ``spec.nodeName`` changes only through the binding subresource."""
    ns, os_ = dict(new.get("spec") or {}), dict(old.get("spec") or {})
    for key in _POD_MUTABLE_SPEC:
        ns.pop(key, None)
        os_.pop(key, None)
    for spec in (ns, os_):
        spec["containers"] = [{k: v for k, v in c.items() if k != "image"} for c in spec.get("containers") or []]
        spec["initContainers"] = [{k: v for k, v in c.items() if k != "image"}
                                  for c in spec.get("initContainers") or []]
    if ns != os_:
        return [(
            "FieldValueForbidden",
            "spec",
            "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
            "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
            "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
            "previously negative)",
        )]
    new_gates = (new.get("spec") or {}).get("schedulingGates") or []
    old_gates = (old.get("spec") or {}).get("schedulingGates") or []
    added = next((g for g in new_gates if g not in old_gates), None)
    if added is not None:
        name = added.get("name", "")
        return [("FieldValueForbidden", "spec.schedulingGates",
                 f"Forbidden: only deletion is allowed, but found new scheduling gate '{name}'")]
    return []
