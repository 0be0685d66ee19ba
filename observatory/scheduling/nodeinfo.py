"""The scheduler's view of the cluster: one :class:`NodeInfo` per node, gathered in a :class:`Snapshot`.

Reproduces ``pkg/scheduler/framework/types.go`` ``NodeInfo`` (``Requested``, ``NonZeroRequested``, ``Allocatable``,
``UsedPorts``, ``Pods``) and ``HostPortInfo`` (``pkg/scheduler/framework/types.go``; ``CheckConflict``: an empty
hostIP means ``0.0.0.0``, which conflicts with the same protocol/port on every IP; an empty protocol means TCP),
and the scheduler cache's rule that every pod with ``spec.nodeName`` set and a non-terminal phase counts on its
node (``pkg/scheduler/internal/cache``).

A :class:`Snapshot` is built once from Node and Pod JSON and can then be updated in place (``add_pod`` after a
binding, ``remove_pod`` on a deletion), so scheduling N pods over M nodes parses each object once, not N times.
Pods on a node the snapshot does not know yet are kept aside and counted when that node arrives.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ._json import listed
from .imagelocality import node_images
from .interpodaffinity import AffinityTerm, WeightedAffinityTerm, parse_terms, parse_weighted_terms
from .nodeaffinity import PodNodeAffinity, compile_pod_affinity
from .pods import is_terminal, pod_key, pod_priority
from .podtopologyspread import SpreadConstraint, parse_constraints
from .resources import CPU, MEMORY, PODS, PodResources, compute_pod_resources, node_allocatable
from .spreadselectors import SpreadSelectors, controller_ref
from .taints import Taint, Toleration, parse_taints, parse_tolerations
from .volumes import PodVolume, VolumeCatalog, parse_pod_volumes

__all__ = ["HostPort", "NodeInfo", "PodInfo", "Snapshot"]

HostPort = tuple[str, str, int]
"""``(hostIP, protocol, hostPort)`` with the defaults applied: ``("0.0.0.0", "TCP", 8080)``."""
BIND_ALL = "0.0.0.0"


def _str(value: Any) -> str:
    """A string field as given; anything else (null, a number, an object) as unset."""
    return value if isinstance(value, str) else ""


def _host_ports(spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    """Host ports of the regular containers (``getContainerPorts``: init containers are not looked at)."""
    out = []
    for c in listed(spec.get("containers")):
        for p in listed(c.get("ports")) if isinstance(c, Mapping) else ():
            port = p.get("hostPort") if isinstance(p, Mapping) else None
            if isinstance(port, int) and not isinstance(port, bool) and port > 0:
                out.append((_str(p.get("hostIP")) or BIND_ALL, _str(p.get("protocol")) or "TCP", port))
    return tuple(out)


def _preempted_by_scheduler(status: Any) -> bool:
    """The first DisruptionTarget condition is True with reason PreemptionByScheduler."""
    for cond in listed(status.get("conditions")) if isinstance(status, Mapping) else ():
        if isinstance(cond, Mapping) and cond.get("type") == "DisruptionTarget":
            return cond.get("status") == "True" and cond.get("reason") == "PreemptionByScheduler"
    return False


@dataclass(frozen=True, slots=True)
class PodInfo:
    """One Pod, parsed once: identity, priority, resources, tolerations, node affinity, host ports, labels and
    required pod (anti-)affinity terms.

    ``start_time`` is ``status.startTime`` (RFC 3339, ``""`` when unset), used to order preemption victims.
    ``affinity_errors`` are malformed selectors of the pod (anti-)affinity terms."""

    key: str
    uid: str
    node_name: str
    priority: int
    preemption_never: bool
    start_time: str
    resources: PodResources
    tolerations: tuple[Toleration, ...]
    affinity: PodNodeAffinity
    host_ports: tuple[HostPort, ...]
    table_rows: tuple[tuple[str, int], ...] = ()
    """``(resource, requested)`` rows of the resource table: cpu, memory, then the other positive requests."""
    namespace: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    affinity_errors: tuple[str, ...] = ()
    spread_constraints: tuple[SpreadConstraint, ...] = ()
    spread_errors: tuple[str, ...] = ()
    deleting: bool = False
    """``metadata.deletionTimestamp`` is set (PodTopologySpread does not count such a pod)."""
    volumes: tuple[PodVolume, ...] = ()
    """The claims and in-tree disks of ``spec.volumes`` the volume plugins read (:mod:`.volumes`)."""
    preempted_by_scheduler: bool = False
    """``status.conditions`` holds ``DisruptionTarget=True`` with reason ``PreemptionByScheduler``: with
    :attr:`deleting`, a preemption victim still terminating (``podTerminatingByPreemption``)."""
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()
    with_affinity: bool = False
    """``spec.affinity.podAffinity`` or ``podAntiAffinity`` is set (``PodsWithAffinity``)."""
    images: tuple[str, ...] = ()
    """``image`` of each init container, then of each container, as written in the spec (ImageLocality)."""
    controller: tuple[str, str, str] | None = None
    """``(apiVersion, kind, name)`` of the ownerReference with ``controller: true`` (system default spreading)."""

    @classmethod
    def from_pod(cls, pod: Mapping[str, Any]) -> PodInfo:
        spec = pod.get("spec") if isinstance(pod, Mapping) else None
        spec = spec if isinstance(spec, Mapping) else {}
        meta = pod.get("metadata") if isinstance(pod, Mapping) else None
        status = pod.get("status") if isinstance(pod, Mapping) else None
        resources = compute_pod_resources(pod)
        namespace = str((meta or {}).get("namespace") or "") if isinstance(meta, Mapping) else ""
        raw_labels = meta.get("labels") if isinstance(meta, Mapping) else None
        labels = {str(k): str(v) for k, v in raw_labels.items()} if isinstance(raw_labels, Mapping) else {}
        affinity = spec.get("affinity")
        preferred: tuple[WeightedAffinityTerm, ...] = ()
        preferred_anti: tuple[WeightedAffinityTerm, ...] = ()
        with_affinity = isinstance(affinity, Mapping) and (affinity.get("podAffinity") is not None
                                                            or affinity.get("podAntiAffinity") is not None)
        if with_affinity:
            required, errors = parse_terms(namespace, affinity, "podAffinity")
            anti, anti_errors = parse_terms(namespace, affinity, "podAntiAffinity")
            preferred, preferred_errors = parse_weighted_terms(namespace, affinity, "podAffinity")
            preferred_anti, preferred_anti_errors = parse_weighted_terms(namespace, affinity, "podAntiAffinity")
            errors += anti_errors + preferred_errors + preferred_anti_errors
        else:
            required, anti, errors = (), (), ()
        spread, spread_errors = parse_constraints(spec) if spec.get("topologySpreadConstraints") else ((), ())
        return cls(
            key=pod_key(pod), uid=str((meta or {}).get("uid") or ""), node_name=str(spec.get("nodeName") or ""),
            priority=pod_priority(pod), preemption_never=spec.get("preemptionPolicy") == "Never",
            start_time=str((status or {}).get("startTime") or "") if isinstance(status, Mapping) else "",
            resources=resources, tolerations=parse_tolerations(pod),
            affinity=compile_pod_affinity(pod), host_ports=_host_ports(spec),
            table_rows=tuple((n, a) for n, a in resources.requests.items() if n in (CPU, MEMORY) or a > 0),
            namespace=namespace, labels=labels, required_affinity=required, required_anti_affinity=anti,
            affinity_errors=errors, spread_constraints=spread, spread_errors=spread_errors,
            deleting=bool(isinstance(meta, Mapping) and meta.get("deletionTimestamp")),
            volumes=parse_pod_volumes(spec) if spec.get("volumes") else (),
            preempted_by_scheduler=_preempted_by_scheduler(status),
            preferred_affinity=preferred, preferred_anti_affinity=preferred_anti, with_affinity=with_affinity,
            images=tuple(_str(c.get("image")) for f in ("initContainers", "containers") for c in listed(spec.get(f))
                         if isinstance(c, Mapping)),
            controller=controller_ref(meta))

    @property
    def identity(self) -> str:
        """What the snapshot keys a pod by: its uid, or ``namespace/name`` when it has none."""
        return self.uid or self.key


@dataclass(slots=True)
class NodeInfo:
    """A node and the pods assigned to it, in scheduler units (see :mod:`.resources`).

    ``allocatable`` and ``requested`` map resource names to ints (cpu in millicores); ``allowed_pods`` is
    ``allocatable["pods"]``; ``nonzero_cpu`` / ``nonzero_memory`` are the scoring totals; ``pods`` maps
    :attr:`PodInfo.identity` to the pod; ``errors`` lists invalid quantities found on the node or its pods."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    allocatable: Mapping[str, int]
    node_errors: tuple[str, ...] = ()
    requested: dict[str, int] = field(default_factory=dict)
    nonzero_cpu: int = 0
    nonzero_memory: int = 0
    pods: dict[str, PodInfo] = field(default_factory=dict)
    used_ports: dict[tuple[str, int], Counter] = field(default_factory=dict)
    bad_pods: int = 0
    anti_affinity_pods: int = 0
    """Pods with required anti-affinity terms (``PodsWithRequiredAntiAffinity``)."""
    affinity_pods: int = 0
    """Pods with any pod affinity or anti-affinity (``PodsWithAffinity``)."""
    images: Mapping[str, int] = field(default_factory=dict)
    """``status.images``: every name of every image -> its ``sizeBytes`` (``ImageStates``)."""
    pod_namespaces: Counter[str] = field(default_factory=Counter)
    """Namespace -> pods of it on this node (lets InterPodAffinity's PreScore pass over a node at once)."""

    @classmethod
    def from_node(cls, node: Mapping[str, Any]) -> NodeInfo:
        meta = node.get("metadata") if isinstance(node, Mapping) else None
        meta = meta if isinstance(meta, Mapping) else {}
        spec = node.get("spec") if isinstance(node, Mapping) else None
        labels = meta.get("labels")
        allocatable, errors = node_allocatable(node)
        return cls(name=str(meta.get("name") or ""),
                   labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {},
                   taints=parse_taints(node),
                   unschedulable=bool(isinstance(spec, Mapping) and spec.get("unschedulable") is True),
                   allocatable=allocatable, node_errors=errors, images=node_images(node))

    @property
    def allowed_pods(self) -> int:
        return self.allocatable.get(PODS, 0)

    @property
    def errors(self) -> tuple[str, ...]:
        if not self.bad_pods:
            return self.node_errors
        pod_errors = tuple(f"{p.key}: {e}" for p in self.pods.values() for e in p.resources.errors)
        return self.node_errors + pod_errors

    def add(self, pod: PodInfo) -> None:
        """Count ``pod`` on this node (``NodeInfo.AddPod``)."""
        self.pods[pod.identity] = pod
        requested = self.requested
        for name, amount in pod.resources.usage.items():
            requested[name] = requested.get(name, 0) + amount
        self.nonzero_cpu += pod.resources.nonzero_cpu
        self.nonzero_memory += pod.resources.nonzero_memory
        self.bad_pods += bool(pod.resources.errors)
        self.anti_affinity_pods += bool(pod.required_anti_affinity)
        self.affinity_pods += pod.with_affinity
        self.pod_namespaces[pod.namespace] += 1
        for ip, protocol, port in pod.host_ports:
            self.used_ports.setdefault((protocol, port), Counter())[ip] += 1

    def remove(self, identity: str) -> PodInfo | None:
        """Stop counting the pod with this identity; returns it, or None when it was not here."""
        pod = self.pods.pop(identity, None)
        if pod is None:
            return None
        for name, amount in pod.resources.usage.items():
            self.requested[name] = self.requested.get(name, 0) - amount
        self.nonzero_cpu -= pod.resources.nonzero_cpu
        self.nonzero_memory -= pod.resources.nonzero_memory
        self.bad_pods -= bool(pod.resources.errors)
        self.anti_affinity_pods -= bool(pod.required_anti_affinity)
        self.affinity_pods -= pod.with_affinity
        namespaces = self.pod_namespaces
        namespaces[pod.namespace] -= 1
        if namespaces[pod.namespace] <= 0:
            del namespaces[pod.namespace]
        for ip, protocol, port in pod.host_ports:
            ips = self.used_ports.get((protocol, port))
            if ips is not None:
                ips[ip] -= 1
                if ips[ip] <= 0:
                    del ips[ip]
        return pod

    def port_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """``HostPortInfo.CheckConflict`` for a wanted ``(hostIP, protocol, hostPort)``."""
        ips = self.used_ports.get((protocol, port))
        if not ips:
            return False
        return True if ip == BIND_ALL else bool(ips.get(BIND_ALL) or ips.get(ip))

    def copy(self) -> NodeInfo:
        """An independent copy, for "what if these pods were gone" (preemption's dry run)."""
        return NodeInfo(self.name, self.labels, self.taints, self.unschedulable, self.allocatable, self.node_errors,
                        dict(self.requested), self.nonzero_cpu, self.nonzero_memory, dict(self.pods),
                        {k: Counter(v) for k, v in self.used_ports.items()}, self.bad_pods,
                        self.anti_affinity_pods, self.affinity_pods, self.images, Counter(self.pod_namespaces))

    def usage(self) -> dict[str, int]:
        """``requested`` with cpu, memory and the pod count always present, for display."""
        return {CPU: self.requested.get(CPU, 0), MEMORY: self.requested.get(MEMORY, 0), PODS: len(self.pods),
                **{k: v for k, v in self.requested.items() if k not in (CPU, MEMORY, PODS)}}


class Snapshot:
    """The nodes (in the order given) and the pods counted on them. Mutable: keep one and update it.

    ``Snapshot(nodes, pods)`` takes Node and Pod JSON; pods that are unassigned or terminal are ignored.
    ``namespaces`` (name -> labels) is filled by :meth:`set_namespace` when the caller watches Namespaces; None
    means their labels are unknown (pod affinity terms with a namespace selector then see no labels).
    ``volumes`` is the :class:`~.volumes.VolumeCatalog` of PVCs, PVs and StorageClasses when the caller has one;
    None means they are unknown (the volume plugins then do not run).
    ``image_nodes`` counts, per image name, the nodes reporting it in ``status.images`` (ImageLocality's spread).
    ``spread_selectors`` holds the Services, ReplicationControllers, ReplicaSets and StatefulSets whose selectors
    PodTopologySpread's system default constraints use (empty unless the caller feeds them)."""

    def __init__(self, nodes: Iterable[Mapping[str, Any]] = (), pods: Iterable[Mapping[str, Any]] = ()) -> None:
        self.namespaces: dict[str, dict[str, str]] | None = None
        self.volumes: VolumeCatalog | None = None
        self.image_nodes: Counter[str] = Counter()
        self.spread_selectors = SpreadSelectors()
        self._nodes: dict[str, NodeInfo] = {}
        self._where: dict[str, str] = {}  # pod identity -> node name
        self._orphans: dict[str, dict[str, PodInfo]] = {}  # node name -> pods waiting for that node
        for node in nodes:
            self.set_node(node)
        for pod in pods:
            self.add_pod(pod)

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self._nodes.values())

    def __contains__(self, name: object) -> bool:
        return name in self._nodes

    def get(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._nodes)

    def set_node(self, node: Mapping[str, Any]) -> NodeInfo:
        """Add a Node, or replace one with the same name keeping its pods."""
        info = NodeInfo.from_node(node)
        old = self._nodes.get(info.name)
        waiting = list(old.pods.values()) if old else list(self._orphans.pop(info.name, {}).values())
        if old is not None and old.images:
            self.image_nodes.subtract(old.images.keys())
        if info.images:
            self.image_nodes.update(info.images.keys())
        self._nodes[info.name] = info
        for pod in waiting:
            info.add(pod)
        return info

    def set_namespace(self, namespace: Mapping[str, Any]) -> None:
        """Add or replace a Namespace's labels (for pod affinity terms' namespace selectors)."""
        meta = namespace.get("metadata") if isinstance(namespace, Mapping) else None
        meta = meta if isinstance(meta, Mapping) else {}
        labels = meta.get("labels")
        if self.namespaces is None:
            self.namespaces = {}
        self.namespaces[str(meta.get("name") or "")] = (
            {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {})

    def remove_namespace(self, name: str) -> None:
        if self.namespaces is not None:
            self.namespaces.pop(name, None)

    def remove_node(self, name: str) -> None:
        """Forget a node; its pods wait, in case the node comes back."""
        info = self._nodes.pop(name, None)
        if info is not None and info.images:
            self.image_nodes.subtract(info.images.keys())
        if info is not None and info.pods:
            self._orphans[name] = dict(info.pods)

    def add_pod(self, pod: Mapping[str, Any] | PodInfo) -> bool:
        """Count a pod on its ``spec.nodeName``, replacing an earlier version of it. A terminal pod is removed
        instead; an unassigned pod is ignored (so a pod :meth:`assume`-d here stays counted until its Binding
        shows up or it is removed, as in the scheduler cache). Returns whether the pod is now counted."""
        if not isinstance(pod, PodInfo):
            if is_terminal(pod):
                self.remove_pod(pod)
                return False
            pod = PodInfo.from_pod(pod)
        if not pod.node_name:
            return False
        self._remove_identity(pod.identity)
        self._where[pod.identity] = pod.node_name
        info = self._nodes.get(pod.node_name)
        if info is None:
            self._orphans.setdefault(pod.node_name, {})[pod.identity] = pod
        else:
            info.add(pod)
        return True

    def assume(self, pod: Mapping[str, Any] | PodInfo, node_name: str) -> None:
        """Count ``pod`` on ``node_name`` as if it were bound there (what the scheduler cache does before the
        Binding is written)."""
        info = pod if isinstance(pod, PodInfo) else PodInfo.from_pod(pod)
        self.add_pod(replace(info, node_name=node_name))

    def remove_pod(self, pod: Mapping[str, Any] | PodInfo) -> None:
        """Stop counting a pod (deleted, or now terminal)."""
        if isinstance(pod, PodInfo):
            self._remove_identity(pod.identity)
            return
        meta = pod.get("metadata") if isinstance(pod, Mapping) else None
        uid = (meta or {}).get("uid") if isinstance(meta, Mapping) else None
        self._remove_identity(str(uid) if uid else pod_key(pod))

    def _remove_identity(self, identity: str) -> None:
        node = self._where.pop(identity, None)
        if node is None:
            return
        info = self._nodes.get(node)
        if info is not None:
            info.remove(identity)
        else:
            self._orphans.get(node, {}).pop(identity, None)
