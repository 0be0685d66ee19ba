"""What the filters say about one node: :class:`NodeVerdict` and the numbers behind it.

Mirrors ``pkg/scheduler/framework/interface.go`` ``Status`` (code, reasons, failing plugin) and
``pkg/scheduler/framework/plugins/noderesources/fit.go`` ``InsufficientResource`` (requested, used, capacity,
unresolvable), so a diagnosis can say "requests 6Gi memory, 2Gi of 8Gi free" and not only "Insufficient memory".
All amounts are in scheduler units (see :mod:`.resources`): cpu in millicores, memory and ephemeral-storage in
bytes, pods a count, other resources ``Quantity.Value()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple

from .taints import Taint

if TYPE_CHECKING:
    from .interpodaffinity import AffinityTerm

__all__ = [
    "SUCCESS",
    "UNSCHEDULABLE",
    "UNSCHEDULABLE_AND_UNRESOLVABLE",
    "AffinityMismatch",
    "Code",
    "Detail",
    "InsufficientResource",
    "NodeNameMismatch",
    "NodeVerdict",
    "Pair",
    "PodAffinityConflict",
    "PortConflict",
    "ResourceUse",
    "SpreadViolation",
    "VolumeConflict",
]

Code = Literal["Success", "Unschedulable", "UnschedulableAndUnresolvable"]
SUCCESS: Code = "Success"
UNSCHEDULABLE: Code = "Unschedulable"
"""Rejected, but removing pods from the node might help: preemption will look at it."""
UNSCHEDULABLE_AND_UNRESOLVABLE: Code = "UnschedulableAndUnresolvable"
"""Rejected for a reason no eviction can change: preemption says "Preemption is not helpful for scheduling"."""


class ResourceUse(NamedTuple):
    """One row of a node's resource table for the incoming pod: what it ``requested``, what the node's pods
    already ``used`` (sum of their requests) and the node's ``allocatable``. For ``pods``, requested is 1.
    (A named tuple: one is built per node and resource, so it must be cheap.)"""

    resource: str
    requested: int
    used: int
    allocatable: int

    @property
    def free(self) -> int:
        return self.allocatable - self.used

    @property
    def fits(self) -> bool:
        return self.requested <= self.free


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """A NodeResourcesFit shortfall (upstream ``InsufficientResource``). ``unresolvable`` when the request exceeds
    the node's allocatable itself (kubernetes PR #131345): no eviction can make room then."""

    resource: str
    reason: str
    requested: int
    used: int
    allocatable: int
    unresolvable: bool

    @property
    def free(self) -> int:
        return self.allocatable - self.used


@dataclass(frozen=True, slots=True)
class PortConflict:
    """A wanted host port already in use on the node: ``(host_ip, protocol, port)`` as the pod asked, with the
    defaults applied (``0.0.0.0``, ``TCP``)."""

    host_ip: str
    protocol: str
    port: int


@dataclass(frozen=True, slots=True)
class AffinityMismatch:
    """Why NodeAffinity rejected the node: ``selector_misses`` are ``(key, wanted, actual or None)`` for
    ``spec.nodeSelector``; ``required_unmatched`` is True when no required term matched; ``errors`` are malformed
    requirements (their term matches nothing)."""

    selector_misses: tuple[tuple[str, str, str | None], ...] = ()
    required_unmatched: bool = False
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeNameMismatch:
    """``spec.nodeName`` asks for another node."""

    requested: str


Pair = tuple[str, str]
"""A topology pair: ``(topologyKey, a node's value of that label)``."""


@dataclass(frozen=True, slots=True)
class PodAffinityConflict:
    """Why InterPodAffinity rejected a node: ``kind`` is ``affinity`` (no pod matching ``term`` in the node's
    domain; ``pair`` None when the node lacks the topology label), ``anti-affinity`` (``count`` pods matching the
    incoming pod's ``term`` in the domain ``pair``) or ``existing-anti-affinity`` (``count`` existing pods whose
    anti-affinity matches the incoming pod are in the domain ``pair``; ``term`` is None)."""

    kind: str
    pair: Pair | None
    count: int = 0
    term: AffinityTerm | None = None


@dataclass(frozen=True, slots=True)
class SpreadViolation:
    """Why PodTopologySpread rejected a node: its value ``topology_value`` of ``topology_key`` (None: the node lacks
    the label) already has ``matching`` pods, ``self_match`` is 1 when the incoming pod matches the selector too,
    ``minimum`` is the global minimum; the skew ``matching + self_match - minimum`` exceeds ``max_skew``.
    ``domains``: matching pods per topology value, every eligible domain."""

    topology_key: str
    topology_value: str | None
    matching: int
    self_match: int
    minimum: int
    max_skew: int
    domains: dict[str, int]


@dataclass(frozen=True, slots=True)
class VolumeConflict:
    """Why a volume plugin rejected a node (:mod:`.volumebinding`, :mod:`.volumezone`, :mod:`.volumerestrictions`).

    ``kind``: ``node-affinity`` (``claim`` is bound to ``volume``, whose node affinity the node fails),
    ``pv-missing`` (``claim`` is bound to ``volume``, which does not exist), ``selected-node`` (``claim`` waits to
    be provisioned on the node ``key``), ``no-volume`` (no available PV of the claim's class ``key`` fits ``claim``
    on this node, and the class cannot provision here), ``zone`` (``volume`` carries the topology label ``key`` with
    ``values``, which the node's label does not match), ``read-write-once-pod`` (``claim`` is in use by ``holder``),
    ``disk`` (the in-tree disk ``volume`` is in use by ``holder`` on the node)."""

    kind: str
    claim: str = ""
    volume: str = ""
    key: str = ""
    values: tuple[str, ...] = ()
    holder: str = ""


Detail = (InsufficientResource | Taint | PortConflict | AffinityMismatch | NodeNameMismatch | PodAffinityConflict
          | SpreadViolation | VolumeConflict)


class NodeVerdict(NamedTuple):
    """The filter result for one node (a named tuple: one is built per node per pod, so it must be cheap).

    ``plugin``: the first plugin that rejected the node (None on success); ``code``: its status code; ``reasons``:
    the status reasons exactly as they enter the FitError message (several only for NodeResourcesFit);
    ``details``: the numbers and objects behind the reasons (``Taint`` for TaintToleration); ``resources``: the
    node's resource table for this pod, computed for every node even when an earlier plugin rejected it (rows:
    pods, cpu, memory, then ephemeral-storage and other resources the pod requests); ``errors``: invalid
    quantities met on this node."""

    node: str
    plugin: str | None
    code: Code
    reasons: tuple[str, ...] = ()
    details: tuple[Detail, ...] = ()
    resources: tuple[ResourceUse, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def feasible(self) -> bool:
        return self.code == SUCCESS

    def resource(self, name: str) -> ResourceUse | None:
        """The ``resources`` row for ``name``, or None."""
        return next((r for r in self.resources if r.resource == name), None)
