"""Defaulting, validation and create-time status for the kinds the lab serves.

This is the part of kube-apiserver that runs between decoding and storage: the scheme's defaulters
(``pkg/apis/core/v1/defaults.go``), the admission plugins a default cluster runs on pods (ServiceAccount's
``serviceAccountName``, DefaultTolerationSeconds, Priority), the pod strategy's ``PrepareForCreate`` (phase Pending,
qosClass, the SchedulingGated condition of reference §1.6), and the calls into :mod:`observatory.lab.validation`
(``pkg/apis/core/validation/validation.go`` and apimachinery's ObjectMeta rules) on the defaulted object, as
``rest.BeforeCreate``/``BeforeUpdate`` run them. Errors are returned as ``(type, field, detail)`` causes for
:func:`observatory.lab.validation.field.invalid_error`.
"""

from __future__ import annotations

import copy
import re
import secrets
from typing import Any

from observatory.lab.validation import field, names, node, pod, podupdate
from observatory.lab.validation import meta as meta_validation

Cause = tuple[str, str, str]

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
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
    """``ValidateObjectMeta`` with names as DNS subdomains, or DNS labels when ``name_is_label`` (namespaces)."""
    name_fn = names.name_is_dns_label if name_is_label else names.name_is_dns_subdomain
    return meta_validation.validate_object_meta(meta, namespaced, name_fn)


def _image_pull_policy(image: str) -> str:
    """``SetDefaults_Container``: Always for ``:latest`` or an untagged image without digest, else IfNotPresent."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _default_container(c: dict[str, Any]) -> None:
    """``SetDefaults_Container`` and friends: requests from limits, termination message path and policy, the image
    pull policy; an empty string counts as unset, as Go's zero value does."""
    res = c.get("resources")
    if not isinstance(res, dict):
        res = c["resources"] = {}
    if res.get("limits") and not res.get("requests"):
        res["requests"] = dict(res["limits"])
    elif res.get("limits") and isinstance(res.get("requests"), dict):
        for k, v in res["limits"].items():
            res["requests"].setdefault(k, v)
    for key, value in (("terminationMessagePath", "/dev/termination-log"), ("terminationMessagePolicy", "File")):
        if not c.get(key):
            c[key] = value
    if not c.get("imagePullPolicy"):  # an image that does not parse (or none) has no tag: IfNotPresent
        image = c.get("image")
        c["imagePullPolicy"] = _image_pull_policy(image) if image and isinstance(image, str) else "IfNotPresent"


def default_pod(pod_obj: dict[str, Any]) -> dict[str, Any]:
    """The scheme's pod defaulting (``SetDefaults_PodSpec``, containers), which the decoder applies to create and
    update bodies alike. Returns a new dict; idempotent."""
    pod_obj = copy.deepcopy(pod_obj)
    spec = pod_obj.get("spec")
    if not isinstance(spec, dict):
        spec = pod_obj["spec"] = {}
    for kind in ("containers", "initContainers"):
        entries = spec.get(kind)
        if isinstance(entries, list):  # a JSON null entry decodes as Go's zero Container, which is then defaulted
            entries[:] = [{} if c is None else c for c in entries]
        for c in entries or []:
            if isinstance(c, dict):
                _default_container(c)
    for key, value in (("restartPolicy", "Always"), ("dnsPolicy", "ClusterFirst"),
                       ("schedulerName", "default-scheduler")):
        if not spec.get(key):
            spec[key] = value
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    return pod_obj


def qos_class(spec: dict[str, Any]) -> str:
    """The pod's QoS class (``pkg/apis/core/helper/qos``): Guaranteed, Burstable or BestEffort."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    any_set = False
    guaranteed = True
    for c in containers:
        if not isinstance(c, dict):  # left to validation (a null entry decodes as an empty Container)
            continue
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
    """Default a new pod (:func:`default_pod`, the ServiceAccount and DefaultTolerationSeconds admission plugins) and
    set its create-time status. Returns a new dict."""
    pod = default_pod(pod)
    spec = pod["spec"]
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    if spec.get("tolerations") is None:  # JSON null decodes to a nil slice in Go: as if left out
        spec["tolerations"] = []
    tolerations = spec["tolerations"]
    if isinstance(tolerations, list):
        for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
            if not any(isinstance(t, dict) and t.get("key") == key and t.get("effect") in ("NoExecute", None, "")
                       for t in tolerations):
                tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                    "tolerationSeconds": 300})
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    status: dict[str, Any] = {"phase": "Pending"}
    if spec.get("schedulingGates"):
        status["conditions"] = [dict(GATED_CONDITION)]
    status["qosClass"] = qos_class(spec)
    pod["status"] = status
    return pod


def validate_pod_create(pod_obj: dict[str, Any]) -> list[Cause]:
    """``ValidatePodCreate`` on the defaulted pod (:mod:`observatory.lab.validation.pod`)."""
    return pod.validate_pod_create(default_pod(pod_obj))


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


def validate_create(resource: str, obj: dict[str, Any], namespaced: bool | None = None) -> list[Cause]:
    """Validation causes for a new, defaulted object of ``resource`` (empty when valid); ``namespaced`` says whether
    the kind is namespaced (default: only events, of the kinds without their own rules)."""
    if resource == "pods":
        return pod.validate_pod_create(obj)
    if resource == "nodes":
        return node.validate_node(obj)
    if resource == "namespaces":
        causes = validate_object_meta(obj.get("metadata") or {}, namespaced=False, name_is_label=True)
        return causes + _namespace_finalizers(obj)
    return validate_object_meta(obj.get("metadata") or {},
                                namespaced=resource == "events" if namespaced is None else namespaced)


def _namespace_finalizers(ns: dict[str, Any]) -> list[Cause]:
    """``validateFinalizerName`` of ``spec.finalizers``: qualified names; one without ``/`` must be a standard one
    (``name is neither a standard finalizer name nor is it fully qualified``)."""
    causes: list[Cause] = []
    spec = ns.get("spec")
    for name in (spec.get("finalizers") or []) if isinstance(spec, dict) else []:
        if not isinstance(name, str):
            continue
        causes += meta_validation.validate_finalizers([name], "spec.finalizers")
        if "/" not in name and name not in ("kubernetes", "orphan", "foregroundDeletion"):
            causes.append(field.invalid("spec.finalizers", name,
                                        "name is neither a standard finalizer name nor is it fully qualified"))
    return causes


def validate_update(resource: str, new: dict[str, Any], old: dict[str, Any], namespaced: bool) -> list[Cause]:
    """What ``rest.BeforeUpdate`` finds wrong with an update of ``resource``: the common ObjectMeta checks of every
    kind, then the kind's own (``ValidatePodUpdate``, ``ValidateNodeUpdate``, ``ValidateNamespaceUpdate``).
    ``new`` has been through :func:`observatory.lab.validation.meta.before_update` and the kind's
    ``PrepareForUpdate``."""
    causes = meta_validation.common_update(new.get("metadata"), old.get("metadata"), namespaced)
    if resource == "pods":
        causes += podupdate.validate_pod_update(new, old)
    elif resource == "nodes":
        causes += node.validate_node_update(new, old)
    elif resource == "namespaces":
        causes += meta_validation.validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    return causes


def validate_status_update(resource: str, new: dict[str, Any], old: dict[str, Any], namespaced: bool) -> list[Cause]:
    """The status strategies' ``ValidateUpdate``: common ObjectMeta checks, then ``ValidatePodStatusUpdate`` for pods
    and ``ValidateNodeUpdate`` for nodes."""
    causes = meta_validation.common_update(new.get("metadata"), old.get("metadata"), namespaced)
    if resource == "pods":
        causes += podupdate.validate_pod_status_update(new, old)
    elif resource == "nodes":
        causes += node.validate_node_update(new, old)
    else:
        causes += meta_validation.validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    return causes
