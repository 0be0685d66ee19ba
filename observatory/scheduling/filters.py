"""The Filter plugins of kube-scheduler's default profile that decide "can this node take this pod".

Reproduces, from kube-scheduler v1.34.1, in ``pkg/scheduler/apis/config/v1/default_plugins.go`` order:

1. ``NodeUnschedulable`` (``plugins/nodeunschedulable/node_unschedulable.go``): ``spec.unschedulable`` rejects,
   unless the pod tolerates ``node.kubernetes.io/unschedulable:NoSchedule``. UnschedulableAndUnresolvable.
2. ``NodeName`` (``plugins/nodename/node_name.go``): ``spec.nodeName`` set and different. UnschedulableAndUnresolvable.
3. ``TaintToleration`` (``plugins/tainttoleration/taint_toleration.go``): the first untolerated NoSchedule or
   NoExecute taint, reported as ``node(s) had untolerated taint {key: value}`` (the v1.34.0/v1.34.1 wording; v1.34.2
   and later say ``node(s) had untolerated taint(s)``). UnschedulableAndUnresolvable.
4. ``NodeAffinity`` (``plugins/nodeaffinity/node_affinity.go``): nodeSelector and required node affinity.
   UnschedulableAndUnresolvable.
5. ``NodePorts`` (``plugins/nodeports/node_ports.go``): a wanted host port in use. Unschedulable.
6. ``NodeResourcesFit`` (``plugins/noderesources/fit.go`` ``fitsRequest``): every shortfall at once; Unschedulable,
   or UnschedulableAndUnresolvable when one request exceeds the node's allocatable (PR #131345).
7. ``VolumeRestrictions``, ``VolumeBinding``, ``VolumeZone`` (:mod:`.volumeplugins`; NodeVolumeLimits, between
   the first two upstream, is not reproduced), over their PreFilter states.
8. ``PodTopologySpread`` (``plugins/podtopologyspread/filtering.go``, :mod:`.podtopologyspread`): the skew of each
   DoNotSchedule constraint, over the PreFilter's counts.
9. ``InterPodAffinity`` (``plugins/interpodaffinity/filtering.go``, :mod:`.interpodaffinity`): the pod's required
   affinity and anti-affinity, and existing pods' anti-affinity, over the PreFilter's counts.

As ``RunFilterPlugins`` does, a node's verdict is the status of the first plugin that rejects it. NodeVolumeLimits,
and DRA's filter after InterPodAffinity, are not reproduced.
"""

from __future__ import annotations

from .cycle import CycleState
from .interpodaffinity import INTER_POD_AFFINITY
from .nodeinfo import NodeInfo, PodInfo
from .podtopologyspread import POD_TOPOLOGY_SPREAD
from .resources import PODS
from .taints import Taint, find_untolerated_taint, tolerates
from .verdicts import (
    SUCCESS,
    UNSCHEDULABLE,
    UNSCHEDULABLE_AND_UNRESOLVABLE,
    AffinityMismatch,
    InsufficientResource,
    NodeNameMismatch,
    NodeVerdict,
    PortConflict,
    ResourceUse,
)
from .volumeplugins import VOLUME_PLUGINS

__all__ = [
    "ERR_NODE_AFFINITY", "ERR_NODE_NAME", "ERR_NODE_PORTS", "ERR_TOO_MANY_PODS", "ERR_UNSCHEDULABLE",
    "FILTER_PLUGINS", "NODE_AFFINITY", "NODE_NAME", "NODE_PORTS", "NODE_RESOURCES_FIT", "NODE_UNSCHEDULABLE",
    "TAINT_TOLERATION", "fits_request", "resource_table", "run_filters", "untolerated_taint_reason",
]

NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION = "NodeUnschedulable", "NodeName", "TaintToleration"
NODE_AFFINITY, NODE_PORTS, NODE_RESOURCES_FIT = "NodeAffinity", "NodePorts", "NodeResourcesFit"
FILTER_PLUGINS = (NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION, NODE_AFFINITY, NODE_PORTS, NODE_RESOURCES_FIT,
                  *VOLUME_PLUGINS, POD_TOPOLOGY_SPREAD, INTER_POD_AFFINITY)
"""The filters reproduced here, in the default profile's order."""

ERR_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_NODE_NAME = "node(s) didn't match the requested node name"
ERR_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
ERR_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
ERR_TOO_MANY_PODS = "Too many pods"
_UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def untolerated_taint_reason(taint: Taint) -> str:
    """``node(s) had untolerated taint {%s: %s}`` with the taint's key and value (v1.34.1)."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def resource_table(pod: PodInfo, node: NodeInfo) -> tuple[ResourceUse, ...]:
    """The node's resource rows for this pod: pods, cpu, memory, then every other resource the pod requests."""
    used, alloc = node.requested, node.allocatable
    return (ResourceUse(PODS, 1, len(node.pods), alloc.get(PODS, 0)),
            *[ResourceUse(name, amount, used.get(name, 0), alloc.get(name, 0)) for name, amount in pod.table_rows])


def fits_request(pod: PodInfo, node: NodeInfo) -> list[InsufficientResource]:
    """``fitsRequest``: the shortfalls, pods first, then cpu, memory, ephemeral-storage, scalar resources."""
    out: list[InsufficientResource] = []
    allowed, count = node.allowed_pods, len(node.pods)
    if count + 1 > allowed:
        out.append(InsufficientResource(PODS, ERR_TOO_MANY_PODS, 1, count, allowed, False))
    req, used, alloc = pod.resources.requests, node.requested, node.allocatable
    for name, amount in req.items():
        if amount <= 0:
            continue
        capacity = alloc.get(name, 0)
        in_use = used.get(name, 0)
        if amount > capacity - in_use:
            out.append(InsufficientResource(name, f"Insufficient {name}", amount, in_use, capacity, amount > capacity))
    return out


def _affinity_mismatch(pod: PodInfo, node: NodeInfo) -> AffinityMismatch | None:
    affinity = pod.affinity
    misses = affinity.selector_misses(node.labels)
    unmatched = not affinity.required_matches(node.labels, node.name)
    if not misses and not unmatched:
        return None
    errors = tuple(e for t in affinity.required or () for e in t.errors)
    return AffinityMismatch(misses, unmatched, errors)


def run_filters(pod: PodInfo, node: NodeInfo, cycle: CycleState | None = None, *, tables: bool = True) -> NodeVerdict:
    """Run the filters on one node, stopping at the first that rejects it (``RunFilterPlugins``). ``cycle`` holds
    the PreFilter states of the volume plugins, PodTopologySpread and InterPodAffinity for this cycle (None: all
    skip). ``tables=False`` leaves the verdict's resource table empty (a scheduling cycle needs only the reasons)."""
    table = resource_table(pod, node) if tables else ()
    errors = node.errors
    if node.unschedulable and not tolerates(pod.tolerations, _UNSCHEDULABLE_TAINT):
        return NodeVerdict(node.name, NODE_UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_UNSCHEDULABLE,),
                           (), table, errors)
    if pod.node_name and pod.node_name != node.name:
        return NodeVerdict(node.name, NODE_NAME, UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NODE_NAME,),
                           (NodeNameMismatch(pod.node_name),), table, errors)
    taint = find_untolerated_taint(node.taints, pod.tolerations) if node.taints else None
    if taint is not None:
        return NodeVerdict(node.name, TAINT_TOLERATION, UNSCHEDULABLE_AND_UNRESOLVABLE,
                           (untolerated_taint_reason(taint),), (taint,), table, errors)
    if pod.affinity.filters:
        mismatch = _affinity_mismatch(pod, node)
        if mismatch is not None:
            return NodeVerdict(node.name, NODE_AFFINITY, UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NODE_AFFINITY,),
                               (mismatch,), table, errors)
    if pod.host_ports:
        conflicts = tuple(PortConflict(*p) for p in pod.host_ports if node.port_conflict(*p))
        if conflicts:
            return NodeVerdict(node.name, NODE_PORTS, UNSCHEDULABLE, (ERR_NODE_PORTS,), conflicts, table, errors)
    short = fits_request(pod, node)
    if short:
        code = UNSCHEDULABLE_AND_UNRESOLVABLE if any(s.unresolvable for s in short) else UNSCHEDULABLE
        return NodeVerdict(node.name, NODE_RESOURCES_FIT, code, tuple(s.reason for s in short), tuple(short),
                           table, errors)
    if cycle is not None:
        if cycle.volumes is not None:
            volume = cycle.volumes.filter(node)
            if volume is not None:
                return NodeVerdict(node.name, volume[0], volume[1], volume[2], volume[3], table, errors)
        if cycle.spread is not None:
            spread = cycle.spread.filter(node)
            if spread is not None:
                return NodeVerdict(node.name, POD_TOPOLOGY_SPREAD, spread[0], (spread[1],), (spread[2],), table,
                                   errors)
        if cycle.affinity is not None:
            rejected = cycle.affinity.filter(node)
            if rejected is not None:
                return NodeVerdict(node.name, INTER_POD_AFFINITY, rejected[0], (rejected[1],), (rejected[2],),
                                   table, errors)
    return NodeVerdict(node.name, None, SUCCESS, (), (), table, errors)
