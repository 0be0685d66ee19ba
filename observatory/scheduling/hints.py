"""QueueingHints: which cluster events may make a pod that a plugin rejected schedulable. Pure, no I/O.

kube-scheduler v1.34.1 (``SchedulerQueueingHints`` GA, locked on) requeues an unschedulable pod only when a plugin
that rejected it (``QueuedPodInfo.UnschedulablePlugins``, or ``PendingPlugins``) registered the event in its
``EventsToRegister`` and that registration's ``QueueingHintFn`` says ``Queue``. :data:`REGISTRATIONS` holds the
registrations of the plugins observatory runs, as their files register them with QHint on; each hint is a
function ``(pod, old, new) -> bool`` (True: ``Queue``, False: ``QueueSkip``) over Pod/Node JSON, ``old`` None for
an Add and ``new`` None for a Delete. A registration without a hint counts as ``Queue``.

Sources (``pkg/scheduler/framework/plugins/``):

* ``schedulinggates/scheduling_gates.go``: Pod/UpdatePodSchedulingGatesEliminated; Queue for the pod itself.
* ``nodeunschedulable/node_unschedulable.go``: Node/Add|UpdateNodeTaint (Queue when the node is added schedulable
  or turns schedulable); Pod/UpdatePodToleration (the pod itself now tolerates
  ``node.kubernetes.io/unschedulable:NoSchedule``).
* ``nodename/node_name.go``: Node/Add, no hint.
* ``tainttoleration/taint_toleration.go``: Node/Add|UpdateNodeTaint (an untolerated NoSchedule/NoExecute taint
  before, none now; a new node counts as untolerated before); Pod/UpdatePodToleration (the pod itself).
* ``nodeaffinity/node_affinity.go``: Node/Add|UpdateNodeLabel (the node matches the pod's nodeSelector and
  required node affinity now, and did not before, or is new).
* ``nodeports/node_ports.go``: Pod/Delete (an assigned or nominated pod using a host port the pod wants);
  Node/Add, no hint.
* ``noderesources/fit.go``: Pod/Delete|UpdatePodScaleDown (any assigned or nominated pod deleted; a scale-down of
  the pod itself or of an assigned pod in a resource the pod requests); Node/Add|UpdateNodeAllocatable (the pod fits
  the empty node, and for an update a requested allocatable, or the pod count, went up).
* ``podtopologyspread/plugin.go``: Pod/Add|UpdatePodLabel|UpdatePodToleration|Delete and
  Node/Add|Delete|UpdateNodeLabel|UpdateNodeTaint (``isSchedulableAfterPodChange``/``isSchedulableAfterNodeChange``).
* ``interpodaffinity/plugin.go`` (read in a file of v1.33 or older): Pod/Add|UpdatePodLabel|Delete and
  Node/Add|UpdateNodeLabel|UpdateNodeTaint.

:func:`requeue_strategy` is ``PriorityQueue.isPodWorthRequeuing`` (``pkg/scheduler/backend/queue/
scheduling_queue.go``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from .clusterevents import NODE, POD, ActionType, ClusterEvent
from .filters import (
    NODE_AFFINITY,
    NODE_NAME,
    NODE_PORTS,
    NODE_RESOURCES_FIT,
    NODE_UNSCHEDULABLE,
    TAINT_TOLERATION,
    fits_request,
)
from .interpodaffinity import INTER_POD_AFFINITY, AffinityTerm
from .nodeinfo import NodeInfo, PodInfo
from .podtopologyspread import DO_NOT_SCHEDULE, HONOR, POD_TOPOLOGY_SPREAD, SpreadConstraint
from .resources import PODS
from .taints import Taint, find_untolerated_taint, tolerates
from .verdicts import NodeVerdict

__all__ = ["QUEUE_AFTER_BACKOFF", "QUEUE_IMMEDIATELY", "QUEUE_SKIP", "REGISTRATIONS", "SCHEDULING_GATES", "Hint",
           "rejecting_plugins", "requeue_strategy"]

SCHEDULING_GATES = "SchedulingGates"
QUEUE_SKIP, QUEUE_AFTER_BACKOFF, QUEUE_IMMEDIATELY = "skip", "backoff", "immediately"

Obj = Mapping[str, Any]
Hint = Callable[[Obj, Obj | None, Obj | None], bool]
"""``(pod, old, new) -> Queue?`` for the pod waiting in the queue and the changed object's old and new state."""

_UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def _uid(obj: Obj | None) -> str:
    meta = (obj or {}).get("metadata") or {}
    return str(meta.get("uid") or "") or f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def _assigned_or_nominated(pod: Obj) -> bool:
    return bool(((pod.get("spec") or {}).get("nodeName")) or ((pod.get("status") or {}).get("nominatedNodeName")))


def _node(obj: Obj | None) -> NodeInfo | None:
    return NodeInfo.from_node(obj) if obj is not None else None


# -- SchedulingGates, NodeUnschedulable, TaintToleration ------------------------------------------------------------

def _is_target(pod: Obj, _old: Obj | None, new: Obj | None) -> bool:
    """``isSchedulableAfterUpdatePodSchedulingGatesEliminated`` and TaintToleration's
    ``isSchedulableAfterPodTolerationChange``: Queue when the updated pod is the waiting pod itself."""
    return new is not None and _uid(new) == _uid(pod)


def _unschedulable_after_pod_toleration(pod: Obj, _old: Obj | None, new: Obj | None) -> bool:
    """NodeUnschedulable's ``isSchedulableAfterPodTolerationChange``: the pod itself now tolerates the
    unschedulable taint."""
    return _is_target(pod, None, new) and tolerates(PodInfo.from_pod(new or {}).tolerations, _UNSCHEDULABLE_TAINT)


def _unschedulable_after_node(_pod: Obj, old: Obj | None, new: Obj | None) -> bool:
    """NodeUnschedulable's ``isSchedulableAfterNodeChange``: added schedulable, or updated from unschedulable to
    schedulable."""
    before, after = _node(old), _node(new)
    if after is None:
        return False
    return (before is None and not after.unschedulable) or (before is not None and before.unschedulable
                                                              and not after.unschedulable)


def _taints_after_node(pod: Obj, old: Obj | None, new: Obj | None) -> bool:
    """TaintToleration's ``isSchedulableAfterNodeChange``: ``wasUntolerated && !isUntolerated``."""
    after = _node(new)
    if after is None:
        return False
    tolerations = PodInfo.from_pod(pod).tolerations
    before = _node(old)
    was = before is None or find_untolerated_taint(before.taints, tolerations) is not None
    return was and find_untolerated_taint(after.taints, tolerations) is None


# -- NodeAffinity ----------------------------------------------------------------------------------------------------

def _affinity_matches(info: PodInfo, node: NodeInfo) -> bool:
    affinity = info.affinity
    return not affinity.selector_misses(node.labels) and affinity.required_matches(node.labels, node.name)


def _affinity_after_node(pod: Obj, old: Obj | None, new: Obj | None) -> bool:
    """NodeAffinity's ``isSchedulableAfterNodeChange``: the node matches now, and is new or did not match before.
    A malformed requirement counts as Queue (upstream returns Queue with the parse error)."""
    after = _node(new)
    if after is None:
        return False
    info = PodInfo.from_pod(pod)
    if any(t.errors for t in info.affinity.required or ()):
        return True
    if not _affinity_matches(info, after):
        return False
    before = _node(old)
    return before is None or not _affinity_matches(info, before)


# -- NodePorts, NodeResourcesFit -------------------------------------------------------------------------------------

def _ports_after_pod_delete(pod: Obj, old: Obj | None, _new: Obj | None) -> bool:
    """NodePorts' ``isSchedulableAfterPodDeleted``: the deleted pod was assigned or nominated and used a host port
    the waiting pod wants."""
    if old is None or not _assigned_or_nominated(old):
        return False
    deleted = PodInfo.from_pod(old)
    if not deleted.host_ports:
        return False
    in_use = NodeInfo("", {}, (), False, {})
    in_use.add(deleted)
    return any(in_use.port_conflict(*p) for p in PodInfo.from_pod(pod).host_ports)


def _fit_after_pod(pod: Obj, old: Obj | None, new: Obj | None) -> bool:
    """NodeResourcesFit's ``isSchedulableAfterPodEvent``: a delete of an assigned or nominated pod; a scale-down of
    the waiting pod itself, or of an assigned pod in a resource the waiting pod requests."""
    if new is None:
        return old is not None and _assigned_or_nominated(old)
    if _uid(new) == _uid(pod):
        return True
    if old is None or not (new.get("spec") or {}).get("nodeName"):
        return False
    before, after = PodInfo.from_pod(old).resources.requests, PodInfo.from_pod(new).resources.requests
    wanted = PodInfo.from_pod(pod).resources.requests
    return any(amount > 0 and before.get(name, 0) > after.get(name, 0) for name, amount in wanted.items())


def _fit_after_node(pod: Obj, old: Obj | None, new: Obj | None) -> bool:
    """NodeResourcesFit's ``isSchedulableAfterNodeChange``: the pod fits the node with no pods on it (``isFit``),
    and the node is new or ``haveAnyRequestedResourcesIncreased``."""
    after = _node(new)
    if after is None:
        return False
    info = PodInfo.from_pod(pod)
    if fits_request(info, after):
        return False
    before = _node(old)
    if before is None:
        return True
    if after.allocatable.get(PODS, 0) > before.allocatable.get(PODS, 0):
        return True
    return any(amount > 0 and after.allocatable.get(name, 0) > before.allocatable.get(name, 0)
               for name, amount in info.resources.requests.items())


# -- PodTopologySpread -----------------------------------------------------------------------------------------------

def _constraints(info: PodInfo) -> tuple[SpreadConstraint, ...]:
    """``getConstraints``: the pod's DoNotSchedule constraints with ``matchLabelKeys`` merged (the system default
    constraints are ScheduleAnyway, so a pod without its own has none)."""
    return tuple(c.for_pod(info.labels) for c in info.spread_constraints if c.when_unsatisfiable == DO_NOT_SCHEDULE)


def _labels(obj: Obj) -> dict[str, str]:
    raw = (obj.get("metadata") or {}).get("labels") or {}
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}


def _node_matches_spread(labels: Mapping[str, str], constraints: tuple[SpreadConstraint, ...]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``: the node has every constraint's topologyKey."""
    return all(c.topology_key in labels for c in constraints)


def _spread_after_pod(pod: Obj, old: Obj | None, new: Obj | None) -> bool:
    """PodTopologySpread's ``isSchedulableAfterPodChange``."""
    target_uid, target_ns = _uid(pod), (pod.get("metadata") or {}).get("namespace") or ""

    def involved(other: Obj) -> bool:  # involvedInTopologySpreading
        return _uid(other) == target_uid or (bool((other.get("spec") or {}).get("nodeName"))
                                            and ((other.get("metadata") or {}).get("namespace") or "") == target_ns)

    if (new is not None and not involved(new)) or (old is not None and not involved(old)):
        return False
    info = PodInfo.from_pod(pod)
    if info.spread_errors:
        return True
    constraints = _constraints(info)
    if new is not None and old is not None:
        if (_uid(new) == target_uid and (new.get("spec") or {}).get("tolerations") != (old.get("spec") or {}).get(
                "tolerations") and any(c.node_taints_policy == HONOR for c in constraints)):
            return True
        before, after = _labels(old), _labels(new)
        if before == after:
            return False
        return any(c.selector.matches(before) != c.selector.matches(after) for c in constraints)
    changed = new if new is not None else old
    return changed is not None and any(c.selector.matches(_labels(changed)) for c in constraints)


def _spread_after_node(pod: Obj, old: Obj | None, new: Obj | None) -> bool:
    """PodTopologySpread's ``isSchedulableAfterNodeChange``."""
    info = PodInfo.from_pod(pod)
    if info.spread_errors:
        return True
    constraints = _constraints(info)
    before, after = _node(old), _node(new)
    was = before is not None and _node_matches_spread(before.labels, constraints)
    now = after is not None and _node_matches_spread(after.labels, constraints)
    if before is not None and after is not None:
        if was != now:
            return True
        return now and (any(before.labels.get(c.topology_key) != after.labels.get(c.topology_key)
                            for c in constraints) or before.taints != after.taints)
    return now if after is not None else was


# -- InterPodAffinity ------------------------------------------------------------------------------------------------

def _matches_all(terms: tuple[AffinityTerm, ...], other: Obj) -> bool:
    """``podMatchesAllAffinityTerms`` (no terms: False); namespace selectors see no namespace labels."""
    namespace = str((other.get("metadata") or {}).get("namespace") or "")
    labels = _labels(other)
    return bool(terms) and all(t.matches(namespace, labels, None) for t in terms)


def _affinity_after_pod(pod: Obj, old: Obj | None, new: Obj | None) -> bool:
    """InterPodAffinity's ``isSchedulableAfterPodChange``."""
    if any(o is not None and not (o.get("spec") or {}).get("nodeName") for o in (old, new)):
        return False
    info = PodInfo.from_pod(pod)
    if info.affinity_errors:
        return True
    terms, anti = info.required_affinity, info.required_anti_affinity
    if old is not None and new is not None:
        return ((not _matches_all(terms, old) and _matches_all(terms, new))
                or (_matches_all(anti, old) and not _matches_all(anti, new)))
    if new is not None:
        return _matches_all(terms, new)
    return old is not None and _matches_all(anti, old)


def _affinity_after_node_labels(pod: Obj, _old: Obj | None, new: Obj | None) -> bool:
    """InterPodAffinity's ``isSchedulableAfterNodeChange``: the node has the topologyKey of one of the pod's
    affinity or anti-affinity terms."""
    after = _node(new)
    if after is None:
        return False
    info = PodInfo.from_pod(pod)
    if info.affinity_errors:
        return True
    return any(t.topology_key in after.labels for t in (*info.required_affinity, *info.required_anti_affinity))


A = ActionType
REGISTRATIONS: Mapping[str, tuple[tuple[ClusterEvent, Hint | None], ...]] = {
    SCHEDULING_GATES: ((ClusterEvent(POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED), _is_target),),
    NODE_UNSCHEDULABLE: ((ClusterEvent(NODE, A.ADD | A.UPDATE_NODE_TAINT), _unschedulable_after_node),
                         (ClusterEvent(POD, A.UPDATE_POD_TOLERATION), _unschedulable_after_pod_toleration)),
    NODE_NAME: ((ClusterEvent(NODE, A.ADD), None),),
    TAINT_TOLERATION: ((ClusterEvent(NODE, A.ADD | A.UPDATE_NODE_TAINT), _taints_after_node),
                       (ClusterEvent(POD, A.UPDATE_POD_TOLERATION), _is_target)),
    NODE_AFFINITY: ((ClusterEvent(NODE, A.ADD | A.UPDATE_NODE_LABEL), _affinity_after_node),),
    NODE_PORTS: ((ClusterEvent(POD, A.DELETE), _ports_after_pod_delete), (ClusterEvent(NODE, A.ADD), None)),
    NODE_RESOURCES_FIT: ((ClusterEvent(POD, A.DELETE | A.UPDATE_POD_SCALE_DOWN), _fit_after_pod),
                         (ClusterEvent(NODE, A.ADD | A.UPDATE_NODE_ALLOCATABLE), _fit_after_node)),
    POD_TOPOLOGY_SPREAD: (
        (ClusterEvent(POD, A.ADD | A.UPDATE_POD_LABEL | A.UPDATE_POD_TOLERATION | A.DELETE), _spread_after_pod),
        (ClusterEvent(NODE, A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT), _spread_after_node)),
    INTER_POD_AFFINITY: (
        (ClusterEvent(POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE), _affinity_after_pod),
        (ClusterEvent(NODE, A.ADD | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT), _affinity_after_node_labels)),
}
"""Plugin name -> its ``EventsToRegister`` with QHint on: (registered event, hint or None)."""


def _plugin_queues(plugin: str, pod: Obj, event: ClusterEvent, old: Obj | None, new: Obj | None) -> bool:
    """Whether ``plugin`` says Queue for ``event``: any of its matching registrations' hints (none: Queue). A plugin
    observatory does not know registers every event. A hint that raises counts as Queue, as a hint's error does."""
    registrations = REGISTRATIONS.get(plugin)
    if registrations is None:
        return True
    for registered, hint in registrations:
        if not registered.matches(event):
            continue
        if hint is None:
            return True
        try:
            if hint(pod, old, new):
                return True
        except (TypeError, ValueError, AttributeError, KeyError):
            return True
    return False


def requeue_strategy(pod: Obj, unschedulable_plugins: Collection[str], pending_plugins: Collection[str],
                     event: ClusterEvent, old: Obj | None, new: Obj | None) -> str:
    """``isPodWorthRequeuing``: :data:`QUEUE_SKIP` (stay in unschedulablePods), :data:`QUEUE_AFTER_BACKOFF` or
    :data:`QUEUE_IMMEDIATELY`.

    No rejecting plugin at all, or a wildcard event (the unschedulable timeout, a relist): after backoff. Otherwise
    only the rejecting plugins' hints are asked: Queue from a pending plugin means immediately, from an unschedulable
    plugin after backoff; Skip from all of them means Skip."""
    if not unschedulable_plugins and not pending_plugins:
        return QUEUE_AFTER_BACKOFF
    if event.wildcard:
        return QUEUE_AFTER_BACKOFF
    strategy = QUEUE_SKIP
    for plugin in sorted(set(unschedulable_plugins) | set(pending_plugins)):
        if not _plugin_queues(plugin, pod, event, old, new):
            continue
        if plugin in pending_plugins:
            return QUEUE_IMMEDIATELY
        strategy = QUEUE_AFTER_BACKOFF
    return strategy


def rejecting_plugins(verdicts: Mapping[str, NodeVerdict]) -> frozenset[str]:
    """``UnschedulablePlugins`` of a failed cycle: the plugin that rejected each node (a PreFilter rejection puts
    its plugin on every node), from :attr:`~.framework.Decision.verdicts`."""
    return frozenset(v.plugin for v in verdicts.values() if not v.feasible and v.plugin)
