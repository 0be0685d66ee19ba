"""The PodTopologySpread plugin's PreFilter and Filter: ``whenUnsatisfiable: DoNotSchedule`` constraints.

Reproduces ``pkg/scheduler/framework/plugins/podtopologyspread/{common,filtering}.go`` of kube-scheduler v1.34,
with the feature gates that are on there (MinDomainsInPodTopologySpread, NodeInclusionPolicyInPodTopologySpread,
MatchLabelKeysInPodTopologySpread):

* **Constraints.** Only ``DoNotSchedule`` constraints filter (``ScheduleAnyway`` ones, and the system default
  constraints, which are all ``ScheduleAnyway``, only score: :mod:`.podtopologyspread_scoring`). Each has
  ``maxSkew``, ``topologyKey``, its ``labelSelector`` (absent: nothing) with the pod's values of ``matchLabelKeys``
  added as ``key=value`` requirements, ``minDomains`` (default 1), ``nodeAffinityPolicy`` (default Honor) and
  ``nodeTaintsPolicy`` (default Ignore).
* **PreFilter** counts, per constraint and per value of its topology key, the pods matching the selector in the
  incoming pod's namespace that are not being deleted (``countPodsMatchSelector``: an empty ``labelSelector: {}``
  counts none), over the nodes that carry *every* constraint's topology
  key and pass the constraint's inclusion policies (Honor: the pod's nodeSelector and required node affinity
  match the node; for taints, the pod tolerates its NoSchedule and NoExecute taints). A domain with no matching
  pod still counts as a domain (with 0).
* **Filter**, constraint by constraint: a node without the topology key gives ``node(s) didn't match pod topology
  spread constraints (missing required label)`` (UnschedulableAndUnresolvable); otherwise the skew is the
  matching pods in the node's domain, plus one if the incoming pod matches the selector itself, minus the
  global minimum (0 while there are fewer domains than ``minDomains``), and a skew above ``maxSkew`` gives ``node(s)
  didn't match pod topology spread constraints`` (Unschedulable).
* **AddPod / RemovePod** (``updateWithPod``) keep the counts right for preemption's dry run (pods of the incoming
  pod's namespace only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._json import listed
from .labelselector import NOTHING, LabelSelector, compile_label_selector
from .taints import find_untolerated_taint
from .verdicts import UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, Code, SpreadViolation

if TYPE_CHECKING:
    from .nodeinfo import NodeInfo, PodInfo, Snapshot

__all__ = ["DO_NOT_SCHEDULE", "ERR_CONSTRAINTS_NOT_MATCH", "ERR_NODE_LABEL_NOT_MATCH", "POD_TOPOLOGY_SPREAD",
           "SCHEDULE_ANYWAY", "SpreadConstraint", "SpreadState", "count_pods_match_selector",
           "match_node_inclusion_policies", "parse_constraints", "prefilter"]

POD_TOPOLOGY_SPREAD = "PodTopologySpread"
ERR_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_NODE_LABEL_NOT_MATCH = ERR_CONSTRAINTS_NOT_MATCH + " (missing required label)"
HONOR, IGNORE = "Honor", "Ignore"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One ``topologySpreadConstraints`` entry, compiled; ``match_label_keys`` are merged at PreFilter."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: LabelSelector
    match_label_keys: tuple[str, ...] = ()
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE

    def for_pod(self, labels: Mapping[str, str]) -> SpreadConstraint:
        """The constraint with ``matchLabelKeys`` added to the selector as the pod's own values
        (``mergeLabelSetWithSelector``: keys the pod does not carry are left out)."""
        extra = tuple((k, "=", frozenset((labels[k],))) for k in self.match_label_keys if k in labels)
        if not extra or self.selector.nothing or self.selector.error:
            return self
        requirements = () if self.selector.everything else self.selector.requirements
        selector = LabelSelector(tuple(sorted((*extra, *requirements), key=lambda r: r[0])))
        return SpreadConstraint(self.max_skew, self.topology_key, self.when_unsatisfiable, selector, (),
                                self.min_domains, self.node_affinity_policy, self.node_taints_policy)


def count_pods_match_selector(pods: Iterable[PodInfo], selector: LabelSelector, namespace: str) -> int:
    """``countPodsMatchSelector``: the pods of ``namespace`` not being deleted whose labels match ``selector``;
    an empty selector (``labelSelector: {}``, ``selector.Empty()``) counts none."""
    if selector.everything:
        return 0
    return sum(1 for p in pods if p.namespace == namespace and not p.deleting and selector.matches(p.labels))


def match_node_inclusion_policies(pod: PodInfo, constraint: SpreadConstraint, node: NodeInfo) -> bool:
    """``matchNodeInclusionPolicies``: Honor ``nodeAffinityPolicy`` means the pod's nodeSelector and required node
    affinity match the node; Honor ``nodeTaintsPolicy``, that the pod tolerates its NoSchedule/NoExecute taints."""
    if constraint.node_affinity_policy == HONOR and not pod.affinity.matches(node.labels, node.name):
        return False
    return not (constraint.node_taints_policy == HONOR and node.taints
                and find_untolerated_taint(node.taints, pod.tolerations) is not None)


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def parse_constraints(spec: Mapping[str, Any]) -> tuple[tuple[SpreadConstraint, ...], tuple[str, ...]]:
    """``spec.topologySpreadConstraints`` compiled, and the errors of malformed selectors."""
    out, errors = [], []
    for raw in listed(spec.get("topologySpreadConstraints")):
        if not isinstance(raw, Mapping):
            continue
        selector = compile_label_selector(raw.get("labelSelector")) if raw.get("labelSelector") is not None \
            else NOTHING
        if selector.error:
            errors.append(selector.error)
        keys = tuple(str(k) for k in listed(raw.get("matchLabelKeys")))
        out.append(SpreadConstraint(
            max_skew=_int(raw.get("maxSkew"), 1), topology_key=str(raw.get("topologyKey") or ""),
            when_unsatisfiable=str(raw.get("whenUnsatisfiable") or ""), selector=selector, match_label_keys=keys,
            min_domains=_int(raw.get("minDomains"), 1),
            node_affinity_policy=str(raw.get("nodeAffinityPolicy") or HONOR),
            node_taints_policy=str(raw.get("nodeTaintsPolicy") or IGNORE)))
    return tuple(out), tuple(errors)


class SpreadState:
    """The PreFilter state of one cycle: the incoming pod's DoNotSchedule constraints and, per constraint, the
    matching pods per topology value (``TpValueToMatchNum``)."""

    __slots__ = ("_minimum", "constraints", "counts", "pod")

    def __init__(self, pod: PodInfo, constraints: tuple[SpreadConstraint, ...]) -> None:
        self.pod = pod
        self.constraints = constraints
        self.counts: list[dict[str, int]] = [{} for _ in constraints]
        self._minimum: list[int | None] = [None] * len(constraints)

    def copy(self) -> SpreadState:
        out = SpreadState(self.pod, self.constraints)
        out.counts = [dict(c) for c in self.counts]
        return out

    def min_match(self, i: int) -> int:
        """``minMatchNum``: the fewest matching pods of any domain, or 0 while the domains are fewer than
        ``minDomains``."""
        counts = self.counts[i]
        if len(counts) < self.constraints[i].min_domains:
            return 0
        minimum = self._minimum[i]
        if minimum is None:
            minimum = self._minimum[i] = min(counts.values(), default=0)
        return minimum

    def _eligible(self, constraint: SpreadConstraint, node: NodeInfo) -> bool:
        """``matchNodeInclusionPolicies`` for the incoming pod."""
        return match_node_inclusion_policies(self.pod, constraint, node)

    def update_with_pod(self, other: PodInfo, node: NodeInfo, value: int) -> None:
        """``updateWithPod``: count ``other`` on ``node`` (1) or stop counting it (-1)."""
        if other.namespace != self.pod.namespace or not all(c.topology_key in node.labels for c in self.constraints):
            return
        for i, constraint in enumerate(self.constraints):
            if not constraint.selector.matches(other.labels) or not self._eligible(constraint, node):
                continue
            topology = node.labels[constraint.topology_key]
            self.counts[i][topology] = self.counts[i].get(topology, 0) + value
            self._minimum[i] = None

    def filter(self, node: NodeInfo) -> tuple[Code, str, SpreadViolation] | None:
        labels = node.labels
        pod_labels = self.pod.labels
        for i, constraint in enumerate(self.constraints):
            topology = labels.get(constraint.topology_key)
            if topology is None:
                return UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NODE_LABEL_NOT_MATCH, SpreadViolation(
                    constraint.topology_key, None, 0, 0, 0, constraint.max_skew, dict(self.counts[i]))
            minimum = self.min_match(i)
            self_match = 1 if constraint.selector.matches(pod_labels) else 0
            matching = self.counts[i].get(topology, 0)
            if matching + self_match - minimum > constraint.max_skew:
                return UNSCHEDULABLE, ERR_CONSTRAINTS_NOT_MATCH, SpreadViolation(
                    constraint.topology_key, topology, matching, self_match, minimum, constraint.max_skew,
                    dict(self.counts[i]))
        return None


def prefilter(pod: PodInfo, snapshot: Snapshot) -> SpreadState | str | None:
    """PodTopologySpread's PreFilter: the state, None for Skip (no DoNotSchedule constraint), or the rejection text
    of a malformed selector."""
    if not pod.spread_constraints:
        return None
    if pod.spread_errors:
        return "get constraints from pod: " + "; ".join(pod.spread_errors)
    constraints = tuple(c.for_pod(pod.labels) for c in pod.spread_constraints
                        if c.when_unsatisfiable == DO_NOT_SCHEDULE)
    if not constraints:
        return None
    state = SpreadState(pod, constraints)
    keys = [c.topology_key for c in constraints]
    for node in snapshot:
        labels = node.labels
        if not all(k in labels for k in keys):
            continue
        for i, constraint in enumerate(constraints):
            if not state._eligible(constraint, node):
                continue
            count = count_pods_match_selector(node.pods.values(), constraint.selector, pod.namespace)
            topology = labels[constraint.topology_key]
            state.counts[i][topology] = state.counts[i].get(topology, 0) + count
    return state
