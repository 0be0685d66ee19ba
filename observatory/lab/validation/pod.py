"""``ValidatePodCreate`` and ``ValidatePodSpec`` of k/k ``pkg/apis/core/validation/validation.go`` for the fields
the lab stores and its scheduler and kubelet read, on plain JSON dicts (after defaulting).

Order and texts are upstream's: ObjectMeta (pod names are DNS subdomains), then the spec — volume names, containers and
init containers (name ``Required value`` / DNS label, ``Duplicate value``; image ``Required value``;
terminationMessagePolicy and imagePullPolicy; ports: ``must be between 1 and 65535, inclusive``, protocol
SCTP/TCP/UDP, host-port conflicts ``Duplicate value: "TCP//80"``; env names; volume mounts ``Not found``; resources:
names (``must be a standard resource for containers``, ``doesn't follow extended resource name standard``), quantities
``must be greater than or equal to 0`` and ``must be an integer``, ``must be less than or equal to cpu limit of 1``,
``must be equal to example.com/gpu limit of 2``, ``Limit must be set for non overcommitable resources``, hugepages),
restartPolicy and dnsPolicy (``Required value`` / ``Unsupported value``), ``spec.nodeSelector`` as labels, the pod
security context ids (``must be between 0 and 4294967295, inclusive``), affinity, readiness gates, scheduling gates,
topology spread, serviceAccountName, nodeName and priorityClassName (DNS subdomains), activeDeadlineSeconds
(``must be between 1 and 2147483647, inclusive``), hostname and subdomain, tolerations, preemptionPolicy and os; then
create-only checks: ``spec.ephemeralContainers: Forbidden: cannot be set on create`` and ``spec.nodeName: Forbidden:
cannot be set until all schedulingGates have been cleared``.

Not reproduced (the lab does not act on them): volume sources, probes and lifecycle handlers, env sources, security
context capabilities and profiles, DNS config, resource claims, pod-level resources and Windows options. Maps (labels,
resources) are walked in sorted key order where Go's order is random.
"""

from __future__ import annotations

from typing import Any

from observatory.lab.validation import field, names, quantity, scheduling
from observatory.lab.validation.field import Cause
from observatory.lab.validation.meta import NEGATIVE, validate_labels, validate_object_meta

_STANDARD_CONTAINER = ("cpu", "memory", "ephemeral-storage")
_INTEGER = ("pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
            "persistentvolumeclaims", "services.nodeports", "services.loadbalancers")
_STANDARD = _STANDARD_CONTAINER + _INTEGER + (
    "requests.cpu", "requests.memory", "requests.ephemeral-storage", "limits.cpu", "limits.memory",
    "limits.ephemeral-storage", "storage", "requests.storage")
"""``IsStandardResourceName`` (``pkg/apis/core/helper``)."""
_PROTOCOLS = ("SCTP", "TCP", "UDP")
MAX_INT32 = 2 ** 31 - 1


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def range_error(low: int, high: int) -> str:
    """``InclusiveRangeError``."""
    return f"must be between {low} and {high}, inclusive"


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    """``IsExtendedResourceName``: not native, and ``requests.<name>`` is a qualified name."""
    return not is_native(name) and not name.startswith("requests.") and not names.is_qualified_name(
        "requests." + name)


def overcommit_allowed(name: str) -> bool:
    return is_native(name) and not is_hugepages(name)


def _resource_name(name: str, path: str) -> list[Cause]:
    """``validateContainerResourceName`` (a ``ResourceName`` prints unquoted: it is a ``fmt.Stringer``)."""
    shown = field.GoValue(name)
    causes = [field.invalid(path, shown, msg) for msg in names.is_qualified_name(name)]
    if not causes and "/" not in name and name not in _STANDARD and not is_hugepages(name):
        causes.append(field.invalid(path, shown, "must be a standard resource type or fully qualified"))
    if "/" not in name:
        if name not in _STANDARD_CONTAINER and not is_hugepages(name):
            causes.append(field.invalid(path, shown, "must be a standard resource for containers"))
    elif not is_native(name) and not is_extended(name):
        causes.append(field.invalid(path, shown, "doesn't follow extended resource name standard"))
    return causes


def _quantity_value(name: str, raw: Any, path: str) -> list[Cause]:
    """``ValidateResourceQuantityValue``."""
    causes: list[Cause] = []
    amount = quantity.value(raw)
    if amount < 0:
        causes.append(field.invalid(path, quantity.string(raw), NEGATIVE))
    if (name in _INTEGER or is_extended(name)) and (amount * 1000) % 1000 != 0:
        causes.append(field.invalid(path, field.GoValue(quantity.string(raw)), "must be an integer"))
    return causes


def _check_hugepages(name: str, raw: Any, at: str, causes: list[Cause]) -> bool:
    """Whether ``name`` is a hugepages resource; if so, append the Invalid cause of a size it may not have."""
    if not is_hugepages(name):
        return False
    problem = _hugepage_error(name, raw)
    if problem:
        causes.append(field.invalid(at, quantity.string(raw), problem))
    return True


def _hugepage_error(name: str, raw: Any) -> str | None:
    page = name.removeprefix("hugepages-")
    amount = quantity.value(raw)
    size = quantity.value(page)
    if size <= 0 or amount <= 0 or int(amount) % int(size) != 0:
        return f"{quantity.string(raw)} is not positive integer multiple of {name}"
    return None


def validate_resources(resources: Any, path: str) -> list[Cause]:
    """``ValidateContainerResourceRequirements``: limits, then requests against them."""
    resources = _map(resources)
    limits, requests = _map(resources.get("limits")), _map(resources.get("requests"))
    causes: list[Cause] = []
    cpu_or_memory = hugepages = False
    for name, raw in sorted(limits.items()):
        at = f"{path}.limits[{name}]"
        causes += _resource_name(name, at) + _quantity_value(name, raw, at)
        hugepages = _check_hugepages(name, raw, at, causes) or hugepages
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    for name, raw in sorted(requests.items()):
        at = f"{path}.requests[{name}]"
        causes += _resource_name(name, at) + _quantity_value(name, raw, at)
        if name in limits:
            request, limit = quantity.value(raw), quantity.value(limits[name])
            if request != limit and not overcommit_allowed(name):
                causes.append(field.invalid(f"{path}.requests", quantity.string(raw),
                                            f"must be equal to {name} limit of {quantity.string(limits[name])}"))
            elif request > limit:
                causes.append(field.invalid(f"{path}.requests", quantity.string(raw),
                                            f"must be less than or equal to {name} limit of "
                                            f"{quantity.string(limits[name])}"))
        elif not overcommit_allowed(name):
            causes.append(field.required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
        hugepages = _check_hugepages(name, raw, at, causes) or hugepages
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    if hugepages and not cpu_or_memory:
        causes.append(field.forbidden(path, "HugePages require cpu or memory"))
    return causes


def _port_name_errors(name: str) -> list[str]:
    """``IsValidPortName``."""
    errs = ["must be no more than 15 characters"] if names.blen(name) > 15 else []
    if not name or any(c not in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any("a" <= c <= "z" for c in name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _ports(ports: Any, path: str) -> list[Cause]:
    """``validateContainerPorts`` (a missing protocol is TCP, as ``SetDefaults_ContainerPort`` makes it)."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, port in enumerate(_list(ports)):
        port, at = _map(port), f"{path}[{i}]"
        name = port.get("name") or ""
        if name:
            errs = _port_name_errors(name)
            if errs:
                causes += [field.invalid(f"{at}.name", name, msg) for msg in errs]
            elif name in seen:
                causes.append(field.duplicate(f"{at}.name", name))
            seen.add(name)
        container_port = port.get("containerPort") or 0
        if not container_port:
            causes.append(field.required(f"{at}.containerPort"))
        elif not 1 <= container_port <= 65535:
            causes.append(field.invalid(f"{at}.containerPort", container_port, range_error(1, 65535)))
        host_port = port.get("hostPort") or 0
        if host_port and not 1 <= host_port <= 65535:
            causes.append(field.invalid(f"{at}.hostPort", host_port, range_error(1, 65535)))
        protocol = port.get("protocol") or "TCP"
        if protocol not in _PROTOCOLS:
            causes.append(field.not_supported(f"{at}.protocol", protocol, _PROTOCOLS))
    return causes


def _host_port_conflicts(containers: list[dict[str, Any]], path: str) -> list[Cause]:
    """``AccumulateUniqueHostPorts``: ``<protocol>/<hostIP>/<hostPort>`` once across the containers."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for ci, ctr in enumerate(containers):
        for pi, port in enumerate(_list(ctr.get("ports"))):
            port = _map(port)
            if not port.get("hostPort"):
                continue
            key = f"{port.get('protocol') or 'TCP'}/{port.get('hostIP') or ''}/{port['hostPort']}"
            if key in seen:
                causes.append(field.duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key))
            seen.add(key)
    return causes


def _container_common(ctr: dict[str, Any], volumes: set[str], path: str) -> list[Cause]:
    """``validateContainerCommon``."""
    causes: list[Cause] = []
    name = ctr.get("name") or ""
    if not name:
        causes.append(field.required(f"{path}.name"))
    else:
        causes += [field.invalid(f"{path}.name", name, msg) for msg in names.is_dns1123_label(name)]
    if not ctr.get("image"):
        causes.append(field.required(f"{path}.image"))
    policy = ctr.get("terminationMessagePolicy") or ""
    if not policy:
        causes.append(field.required(f"{path}.terminationMessagePolicy"))
    elif policy not in ("File", "FallbackToLogsOnError"):
        causes.append(field.not_supported(f"{path}.terminationMessagePolicy", policy,
                                          ("File", "FallbackToLogsOnError")))
    causes += _ports(ctr.get("ports"), f"{path}.ports")
    for i, env in enumerate(_list(ctr.get("env"))):
        env_name = _map(env).get("name") or ""
        if not env_name:
            causes.append(field.required(f"{path}.env[{i}].name"))
        elif any(ord(c) > 126 or ord(c) < 32 or c == "=" for c in env_name):
            causes.append(field.invalid(f"{path}.env[{i}].name", env_name, "a valid environment variable name must "
                                        "consist only of printable ASCII characters other than '='"))
    mount_paths: set[str] = set()
    for i, mount in enumerate(_list(ctr.get("volumeMounts"))):
        mount, at = _map(mount), f"{path}.volumeMounts[{i}]"
        if not mount.get("name"):
            causes.append(field.required(f"{at}.name"))
        if (mount.get("name") or "") not in volumes:
            causes.append(field.not_found(f"{at}.name", mount.get("name") or ""))
        mount_path = mount.get("mountPath") or ""
        if not mount_path:
            causes.append(field.required(f"{at}.mountPath"))
        if mount_path in mount_paths:
            causes.append(field.invalid(f"{at}.mountPath", mount_path, "must be unique"))
        mount_paths.add(mount_path)
    pull = ctr.get("imagePullPolicy") or ""
    if not pull:
        causes.append(field.required(f"{path}.imagePullPolicy"))
    elif pull not in ("Always", "IfNotPresent", "Never"):
        causes.append(field.not_supported(f"{path}.imagePullPolicy", pull, ("Always", "IfNotPresent", "Never")))
    return causes + validate_resources(ctr.get("resources"), f"{path}.resources")


def _containers(spec: dict[str, Any], volumes: set[str]) -> list[Cause]:
    """``validateContainers`` then ``validateInitContainers``."""
    causes: list[Cause] = []
    containers = [_map(c) for c in _list(spec.get("containers"))]
    if not containers:
        causes.append(field.required("spec.containers"))
    seen: set[str] = set()
    for i, ctr in enumerate(containers):
        at = f"spec.containers[{i}]"
        causes += _container_common(ctr, volumes, at)
        if (ctr.get("name") or "") in seen:
            causes.append(field.duplicate(f"{at}.name", ctr.get("name") or ""))
        seen.add(ctr.get("name") or "")
        if ctr.get("restartPolicy") is not None:
            causes.append(field.forbidden(f"{at}.restartPolicy", "may not be set for non-init containers"))
    causes += _host_port_conflicts(containers, "spec.containers")
    for i, ctr in enumerate(_map(c) for c in _list(spec.get("initContainers"))):
        at = f"spec.initContainers[{i}]"
        causes += _container_common(ctr, volumes, at)
        restart = ctr.get("restartPolicy")
        if restart is not None and restart != "Always":
            causes.append(field.not_supported(f"{at}.restartPolicy", restart, ("Always",)))
        name = ctr.get("name") or ""
        if name in seen:
            causes.append(field.duplicate(f"{at}.name", name))
        elif name:
            seen.add(name)
        causes += _host_port_conflicts([ctr], "spec.initContainers")
        if restart != "Always":
            for probe in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if ctr.get(probe) is not None:
                    causes.append(field.forbidden(f"{at}.{probe}",
                                                  "may not be set for init containers without restartPolicy=Always"))
    return causes


def _volume_names(volumes: Any) -> tuple[set[str], list[Cause]]:
    """The names of ``ValidateVolumes``: ``Required value``, a DNS label, ``Duplicate value``."""
    seen: set[str] = set()
    causes: list[Cause] = []
    for i, vol in enumerate(_list(volumes)):
        name = _map(vol).get("name") or ""
        if not name:
            causes.append(field.required(f"spec.volumes[{i}].name"))
        else:
            causes += [field.invalid(f"spec.volumes[{i}].name", name, msg) for msg in names.is_dns1123_label(name)]
        if name and name in seen:
            causes.append(field.duplicate(f"spec.volumes[{i}].name", name))
        seen.add(name)
    return seen, causes


def _enum(spec: dict[str, Any], key: str, allowed: tuple[str, ...]) -> list[Cause]:
    value = spec.get(key) or ""
    if not value:
        return [field.required(f"spec.{key}")]
    return [] if value in allowed else [field.not_supported(f"spec.{key}", value, allowed)]


def _subdomain_field(spec: dict[str, Any], key: str, path: str) -> list[Cause]:
    value = spec.get(key) or ""
    return [field.invalid(path, value, msg) for msg in names.name_is_dns_subdomain(value)] if value else []


def validate_pod_spec(spec: Any) -> list[Cause]:
    """``ValidatePodSpec``, in upstream's order."""
    spec = _map(spec)
    causes: list[Cause] = []
    if spec.get("terminationGracePeriodSeconds") is None:
        causes.append(field.required("spec.terminationGracePeriodSeconds"))
    volumes, volume_causes = _volume_names(spec.get("volumes"))
    causes += volume_causes + _containers(spec, volumes)
    causes += _enum(spec, "restartPolicy", ("Always", "OnFailure", "Never"))
    causes += _enum(spec, "dnsPolicy", ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"))
    causes += validate_labels(spec.get("nodeSelector"), "spec.nodeSelector")
    security = _map(spec.get("securityContext"))
    for key in ("runAsUser", "runAsGroup", "fsGroup"):
        value = security.get(key)
        if isinstance(value, int) and not 0 <= value <= 4294967295:
            causes.append(field.invalid(f"spec.securityContext.{key}", value, range_error(0, 4294967295)))
    causes += scheduling.validate_affinity(spec.get("affinity"), "spec.affinity")
    for i, gate in enumerate(_list(spec.get("readinessGates"))):
        condition = _map(gate).get("conditionType") or ""
        causes += [field.invalid(f"spec.readinessGates[{i}].conditionType", condition, msg)
                   for msg in names.is_qualified_name(condition)]
    causes += scheduling.validate_scheduling_gates(spec.get("schedulingGates"), "spec.schedulingGates")
    causes += scheduling.validate_topology_spread(spec.get("topologySpreadConstraints"),
                                                  "spec.topologySpreadConstraints")
    causes += _subdomain_field(spec, "serviceAccountName", "spec.serviceAccountName")
    causes += _subdomain_field(spec, "nodeName", "spec.nodeName")
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= MAX_INT32:
        causes.append(field.invalid("spec.activeDeadlineSeconds", deadline, range_error(1, MAX_INT32)))
    for key in ("hostname", "subdomain"):
        if spec.get(key):
            causes += [field.invalid(f"spec.{key}", spec[key], msg) for msg in names.is_dns1123_label(spec[key])]
    causes += scheduling.validate_tolerations(spec.get("tolerations"), "spec.tolerations")
    causes += _subdomain_field(spec, "priorityClassName", "spec.priorityClassName")
    if spec.get("runtimeClassName") is not None:
        value = spec["runtimeClassName"] or ""
        causes += [field.invalid("spec.runtimeClassName", value, msg) for msg in names.name_is_dns_subdomain(value)]
    if spec.get("preemptionPolicy") is not None:
        causes += _enum(spec, "preemptionPolicy", ("PreemptLowerPriority", "Never"))
    if spec.get("os") is not None:
        os_name = _map(spec["os"]).get("name") or ""
        if not os_name:
            causes.append(field.required("spec.os.name", "cannot be empty"))
        elif os_name not in ("linux", "windows"):
            causes.append(field.not_supported("spec.os", os_name, ("linux", "windows")))
    return causes


def validate_pod_metadata_and_spec(pod: dict[str, Any]) -> list[Cause]:
    """``validatePodMetadataAndSpec``: ObjectMeta, the spec, then the pod-only image check."""
    causes = validate_object_meta(pod.get("metadata"), True, names.name_is_dns_subdomain)
    spec = _map(pod.get("spec"))
    causes += validate_pod_spec(spec)
    for kind in ("containers", "initContainers"):
        for i, ctr in enumerate(_map(c) for c in _list(spec.get(kind))):
            image = ctr.get("image") or ""
            if isinstance(image, str) and image != image.strip():
                causes.append(field.invalid(f"spec.{kind}[{i}].image", image,
                                            "must not have leading or trailing whitespace"))
    return causes


def validate_pod_create(pod: dict[str, Any]) -> list[Cause]:
    """``ValidatePodCreate``."""
    causes = validate_pod_metadata_and_spec(pod)
    spec = _map(pod.get("spec"))
    if spec.get("ephemeralContainers"):
        causes.append(field.forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        causes.append(field.forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    return causes
