"""Small frozen records built once per object change from API JSON (pods, nodes, core/v1 events).

Each ``from_api`` takes the JSON dict exactly as served (a list item or a watch event's object); any key may be
missing, null or malformed and none of that raises. Only what a pane shows is kept: no managedFields, no specs.
Times are aware UTC datetimes; cpu is in millicores and memory in bytes (the scheduler's units).

:class:`BindingExchange` (one raw HTTP exchange of a Binding POST) lives in :mod:`.exchange` and is re-exported
here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from observatory.scheduling.pods import DEFAULT_SCHEDULER_NAME
from observatory.scheduling.resources import node_allocatable, pod_requests

from ._json import integer, items, mapping, text
from .exchange import BindingExchange
from .podstatus import pod_status
from .timefmt import timestamp

__all__ = ["BindingExchange", "EventView", "LeaseView", "NodeView", "PodView", "Taint", "TimelineFrame"]

ROLE_LABEL_PREFIX = "node-role.kubernetes.io/"
ROLE_LABEL = "kubernetes.io/role"
SIMULATOR_PREFIXES = ("kube-scheduler-simulator.sigs.k8s.io/", "scheduler-simulator/")
"""Annotation prefixes of kube-scheduler-simulator's debuggable scheduler (current, then the older one)."""


def _simulator_annotation(annotations: Mapping[str, Any], name: str) -> str:
    for prefix in SIMULATOR_PREFIXES:
        value = annotations.get(prefix + name)
        if isinstance(value, str) and value:
            return value
    return ""


@dataclass(frozen=True, slots=True)
class Taint:
    """One node taint. ``str(taint)`` is kubectl's ``key=value:effect``, or ``key:effect`` when value is empty."""

    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        if not self.value:
            return f"{self.key}:{self.effect}"
        return f"{self.key}={self.value}:{self.effect}"

    @classmethod
    def from_api(cls, obj: Any) -> Taint:
        """From one ``spec.taints[]`` entry (``timeAdded`` is dropped)."""
        obj = mapping(obj)
        return cls(text(obj.get("key")), text(obj.get("value")), text(obj.get("effect")))


def _with_limit_defaults(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The API server's defaulting of requests from limits (``SetDefaults_Pod``): a resource with a limit and no
    request requests its limit. Served objects are already defaulted, so this only copies for hand-made JSON."""

    def defaulted(resources: Any) -> Any:
        resources = mapping(resources)
        limits, requests = mapping(resources.get("limits")), mapping(resources.get("requests"))
        if not limits or all(name in requests for name in limits):
            return None
        return {**resources, "requests": {**limits, **requests}}

    patched: dict[str, Any] | None = None
    for key in ("containers", "initContainers"):
        containers = items(spec.get(key))
        fixed = [defaulted(mapping(c).get("resources")) for c in containers]
        if any(f is not None for f in fixed):
            patched = patched or dict(spec)
            patched[key] = [c if f is None else {**mapping(c), "resources": f}
                            for c, f in zip(containers, fixed, strict=True)]
    pod_level = defaulted(spec.get("resources"))
    if pod_level is not None:
        patched = patched or dict(spec)
        patched["resources"] = pod_level
    return spec if patched is None else patched


def _resources_key(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """A hashable summary of everything pod requests depend on (``repr`` of the raw JSON fragments)."""
    key = [repr(mapping(c).get("resources")) + repr(mapping(c).get("restartPolicy"))
           for c in items(spec.get("initContainers"))]
    key.append("|")
    key.extend(repr(mapping(c).get("resources")) for c in items(spec.get("containers")))
    key.append(repr(spec.get("resources")) + repr(spec.get("overhead")))
    return tuple(key)


_REQUESTS_CACHE: dict[tuple[str, ...], tuple[int, int]] = {}
_REQUESTS_CACHE_SIZE = 4096


def _requests(spec: Mapping[str, Any]) -> tuple[int, int]:
    """``(cpu millicores, memory bytes)`` the pod requests; pods of one shape (a Deployment's) share one
    computation through a small cache keyed by the raw resource fragments."""
    key = _resources_key(spec)
    found = _REQUESTS_CACHE.get(key)
    if found is None:
        requests = pod_requests({"spec": _with_limit_defaults(spec)})
        found = (requests.get("cpu", 0), requests.get("memory", 0))
        if len(_REQUESTS_CACHE) >= _REQUESTS_CACHE_SIZE:
            _REQUESTS_CACHE.clear()  # bounded; a cluster has far fewer pod shapes than this
        _REQUESTS_CACHE[key] = found
    return found


@dataclass(frozen=True, slots=True)
class PodView:
    """What the panes show of one Pod.

    ``status`` and ``ready`` are kubectl's STATUS and READY columns (:func:`~.podstatus.pod_status`);
    ``scheduled`` is the PodScheduled condition as ``(status, reason, message)``, None when absent;
    ``simulator_filter`` / ``simulator_selected`` are kube-scheduler-simulator's ``filter-result`` (JSON text: node
    -> plugin -> ``"passed"`` or the reason) and ``selected-node`` annotations, "" when absent;
    ``cpu_request_milli`` / ``memory_request_bytes`` are the pod's effective requests as the scheduler counts them
    (containers summed, raised to the largest init step, pod-level requests and overhead applied, limits standing
    in for missing requests).
    """

    namespace: str
    name: str
    uid: str
    resource_version: str
    node_name: str
    scheduler_name: str
    phase: str
    status: str
    ready: str
    created: datetime | None
    deleting: bool
    gates: tuple[str, ...]
    scheduled: tuple[str, str, str] | None
    nominated_node: str
    cpu_request_milli: int
    memory_request_bytes: int
    priority: int
    simulator_filter: str = ""
    simulator_selected: str = ""
    key: str = field(init=False, repr=False, compare=False)
    """``"namespace/name"``, made once: every repaint looks up each listed pod by it."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", f"{self.namespace}/{self.name}")

    @property
    def terminal(self) -> bool:
        """Phase Succeeded or Failed: the pod no longer holds its node's resources."""
        return self.phase in ("Succeeded", "Failed")

    @classmethod
    def from_api(cls, obj: Mapping[str, Any]) -> PodView:
        """From Pod JSON as served."""
        obj = mapping(obj)
        meta, spec, status = mapping(obj.get("metadata")), mapping(obj.get("spec")), mapping(obj.get("status"))
        scheduled = None
        for cond in items(status.get("conditions")):
            cond = mapping(cond)
            if cond.get("type") == "PodScheduled":
                scheduled = (text(cond.get("status")), text(cond.get("reason")), text(cond.get("message")))
                break
        shown, ready = pod_status(obj)
        cpu, memory = _requests(spec)
        annotations = mapping(meta.get("annotations"))
        return cls(
            namespace=text(meta.get("namespace")),
            name=text(meta.get("name")),
            uid=text(meta.get("uid")),
            resource_version=text(meta.get("resourceVersion")),
            node_name=text(spec.get("nodeName")),
            scheduler_name=text(spec.get("schedulerName")) or DEFAULT_SCHEDULER_NAME,
            phase=text(status.get("phase")),
            status=shown,
            ready=ready,
            created=timestamp(meta.get("creationTimestamp")),
            deleting=bool(meta.get("deletionTimestamp")),
            gates=tuple(text(mapping(g).get("name")) for g in items(spec.get("schedulingGates"))),
            scheduled=scheduled,
            nominated_node=text(status.get("nominatedNodeName")),
            cpu_request_milli=cpu,
            memory_request_bytes=memory,
            priority=integer(spec.get("priority")),
            simulator_filter=_simulator_annotation(annotations, "filter-result") if annotations else "",
            simulator_selected=_simulator_annotation(annotations, "selected-node") if annotations else "",
        )


@dataclass(frozen=True, slots=True)
class NodeView:
    """What the panes show of one Node.

    ``ready`` is the Ready condition's status (``"True"``, ``"False"``, ``"Unknown"``; ``"Unknown"`` also when the
    condition is missing, which ``has_ready_condition`` tells apart). Allocatable cpu is in millicores, memory in
    bytes, pods a count. ``roles`` come from ``node-role.kubernetes.io/<role>`` labels (and ``kubernetes.io/role``),
    sorted.
    """

    name: str
    uid: str
    resource_version: str
    ready: str
    unschedulable: bool
    taints: tuple[Taint, ...]
    allocatable_cpu_milli: int
    allocatable_memory_bytes: int
    allocatable_pods: int
    roles: tuple[str, ...]
    has_ready_condition: bool = True

    @property
    def state(self) -> str:
        """kubectl's node STATUS: ``Ready``, ``NotReady`` (Ready False or Unknown) or ``Unknown`` (no Ready
        condition), plus ``,SchedulingDisabled`` when cordoned."""
        if not self.has_ready_condition:
            state = "Unknown"
        else:
            state = "Ready" if self.ready == "True" else "NotReady"
        return state + ",SchedulingDisabled" if self.unschedulable else state

    @classmethod
    def from_api(cls, obj: Mapping[str, Any]) -> NodeView:
        """From Node JSON as served."""
        obj = mapping(obj)
        meta, spec, status = mapping(obj.get("metadata")), mapping(obj.get("spec")), mapping(obj.get("status"))
        ready_cond = None
        for cond in items(status.get("conditions")):  # kubectl's conditionMap: the last Ready condition wins
            if mapping(cond).get("type") == "Ready":
                ready_cond = mapping(cond)
        roles: set[str] = set()
        for label, value in mapping(meta.get("labels")).items():
            if isinstance(label, str) and label.startswith(ROLE_LABEL_PREFIX) and label != ROLE_LABEL_PREFIX:
                roles.add(label[len(ROLE_LABEL_PREFIX):])
            elif label == ROLE_LABEL and text(value):
                roles.add(text(value))
        allocatable, _errors = node_allocatable(obj)
        return cls(
            name=text(meta.get("name")),
            uid=text(meta.get("uid")),
            resource_version=text(meta.get("resourceVersion")),
            ready=(text(ready_cond.get("status")) or "Unknown") if ready_cond is not None else "Unknown",
            unschedulable=spec.get("unschedulable") is True,
            taints=tuple(Taint.from_api(t) for t in items(spec.get("taints"))),
            allocatable_cpu_milli=allocatable.get("cpu", 0),
            allocatable_memory_bytes=allocatable.get("memory", 0),
            allocatable_pods=allocatable.get("pods", 0),
            roles=tuple(sorted(roles)),
            has_ready_condition=ready_cond is not None,
        )


@dataclass(frozen=True, slots=True)
class EventView:
    """One core/v1 Event, from either recorder (reference §4.1-§4.2).

    ``source`` is ``reportingComponent``, else ``source.component``. ``time`` is the latest moment the event
    stands for: ``series.lastObservedTime``, else ``lastTimestamp``, else ``eventTime``, else
    ``metadata.creationTimestamp`` (None if none is readable). ``count`` is ``series.count``, else ``count``,
    else 1. ``involved_namespace`` defaults to the event's own namespace.
    """

    namespace: str
    name: str
    uid: str
    resource_version: str
    involved_kind: str
    involved_namespace: str
    involved_name: str
    involved_uid: str
    field_path: str
    type: str
    reason: str
    source: str
    message: str
    time: datetime | None
    count: int

    @property
    def key(self) -> str:
        """``"namespace/name"`` of the Event itself (a repeat of the event keeps it)."""
        return f"{self.namespace}/{self.name}"

    @property
    def involved_key(self) -> str:
        """``"namespace/name"`` of the object the event is about."""
        return f"{self.involved_namespace}/{self.involved_name}"

    @classmethod
    def from_api(cls, obj: Mapping[str, Any]) -> EventView:
        """From core/v1 Event JSON as served."""
        obj = mapping(obj)
        meta, ref, series = mapping(obj.get("metadata")), mapping(obj.get("involvedObject")), mapping(obj.get("series"))
        namespace = text(meta.get("namespace"))
        time = None
        for raw in (series.get("lastObservedTime"), obj.get("lastTimestamp"), obj.get("eventTime"),
                    meta.get("creationTimestamp")):
            time = timestamp(raw)
            if time is not None:
                break
        count = integer(series.get("count")) or integer(obj.get("count")) or 1
        return cls(
            namespace=namespace,
            name=text(meta.get("name")),
            uid=text(meta.get("uid")),
            resource_version=text(meta.get("resourceVersion")),
            involved_kind=text(ref.get("kind")),
            involved_namespace=text(ref.get("namespace")) or namespace,
            involved_name=text(ref.get("name")),
            involved_uid=text(ref.get("uid")),
            field_path=text(ref.get("fieldPath")),
            type=text(obj.get("type")),
            reason=text(obj.get("reason")),
            source=text(obj.get("reportingComponent")) or text(mapping(obj.get("source")).get("component")),
            message=text(obj.get("message")),
            time=time,
            count=count,
        )


@dataclass(frozen=True, slots=True)
class TimelineFrame:
    """One watch frame that changed a pod's ``spec.nodeName``, phase or STATUS text.

    ``at`` is the local receipt time (the ClusterState clock), ``change`` the delta that carried it: ``ADDED``,
    ``MODIFIED``, ``DELETED`` or ``RELISTED`` (seen in a list after a (re)connect; a pod missing from a relist
    gets a ``DELETED`` frame). ``node_name`` is "" while unbound; ``resource_version`` is the pod's own.
    """

    resource_version: str
    at: datetime
    change: str
    node_name: str
    phase: str
    status: str


@dataclass(frozen=True, slots=True)
class LeaseView:
    """A ``coordination.k8s.io/v1`` Lease as the diagnosis reads it (``GET
    /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler``), or why it could not be read.

    ``holder`` is ``spec.holderIdentity`` ("" when nobody holds it); ``renewed`` is ``spec.renewTime`` (aware UTC,
    None when unset); ``duration_seconds`` is ``spec.leaseDurationSeconds`` (0 when unset). ``problem`` is set, and
    the rest empty, when the Lease could not be read: e.g. ``not found`` or ``forbidden: <the server's message>``.
    """

    namespace: str
    name: str
    holder: str = ""
    renewed: datetime | None = None
    duration_seconds: int = 0
    problem: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_json(self) -> dict[str, Any]:
        """``{"name": "ns/name", "holder", "renewTime": RFC 3339 or null, "leaseDurationSeconds", "problem"}``."""
        renewed = self.renewed.isoformat().replace("+00:00", "Z") if self.renewed else None
        return {"name": self.key, "holder": self.holder, "renewTime": renewed,
                "leaseDurationSeconds": self.duration_seconds, "problem": self.problem}

    def live(self, now: datetime) -> bool:
        """Held and renewed within its duration (what a leader-election candidate checks before taking over)."""
        if self.problem or not self.holder or self.renewed is None:
            return False
        return (now - self.renewed).total_seconds() <= max(self.duration_seconds, 0)

    @classmethod
    def from_api(cls, obj: Mapping[str, Any]) -> LeaseView:
        """From Lease JSON as served."""
        obj = mapping(obj)
        meta, spec = mapping(obj.get("metadata")), mapping(obj.get("spec"))
        return cls(namespace=text(meta.get("namespace")), name=text(meta.get("name")),
                   holder=text(spec.get("holderIdentity")), renewed=timestamp(spec.get("renewTime")),
                   duration_seconds=integer(spec.get("leaseDurationSeconds")))

    @classmethod
    def unreadable(cls, namespace: str, name: str, problem: str) -> LeaseView:
        """A Lease that could not be read, with the reason in plain words."""
        return cls(namespace=namespace, name=name, problem=problem or "unreadable")
