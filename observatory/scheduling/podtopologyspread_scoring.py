"""The PodTopologySpread plugin's PreScore, Score and NormalizeScore: ``ScheduleAnyway`` constraints.

Reproduces ``pkg/scheduler/framework/plugins/podtopologyspread/scoring.go`` (and ``common.go``, ``plugin.go``) of
kube-scheduler v1.34.1, ``defaultingType: System``:

* **Constraints.** The pod's ``ScheduleAnyway`` constraints (``matchLabelKeys`` merged, ``minDomains`` and the
  inclusion policies as for Filter). A pod without any ``topologySpreadConstraints`` gets the system defaults
  (``systemDefaultConstraints``: ``kubernetes.io/hostname`` maxSkew 3 and ``topology.kubernetes.io/zone`` maxSkew
  5, both ScheduleAnyway) with the selector of its Services and controller (:mod:`.spreadselectors`); no such
  selector, no constraints. No constraint: ``Skip``.
* **PreScore.** With the pod's own constraints, a feasible node lacking any constraint's topology key is *ignored*
  (scores 0); the system defaults require no label (a node without a zone label still spreads by hostname, its
  zone value counting as ``""``). The domains are the values the non-ignored feasible nodes carry; for each
  constraint the weight is ``log(domains + 2)`` (hostname: the number of non-ignored feasible nodes). Matching
  pods (``countPodsMatchSelector``) are counted per domain over *every* node that carries the keys (when required)
  and passes the constraint's inclusion policies; hostname counts are taken at Score, node by node.
* **Score**: ``round(sum(count * weight + (maxSkew - 1)))`` over the constraints whose key the node carries.
* **NormalizeScore**: ignored nodes 0; if the highest score is 0, every other node 100; otherwise
  ``100 * (max + min - score) // max``, so fewer matching pods scores higher.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .labelselector import EVERYTHING
from .podtopologyspread import (
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    count_pods_match_selector,
    match_node_inclusion_policies,
)
from .scoring_helpers import MAX_NODE_SCORE

if TYPE_CHECKING:
    from .nodeinfo import NodeInfo, PodInfo, Snapshot

__all__ = ["HOSTNAME", "SYSTEM_DEFAULT_CONSTRAINTS", "ZONE", "SpreadScoreState", "pod_topology_spread_normalize",
           "pod_topology_spread_prescore", "pod_topology_spread_score"]

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
SYSTEM_DEFAULT_CONSTRAINTS = ((HOSTNAME, 3), (ZONE, 5))
"""``systemDefaultConstraints`` (``podtopologyspread/plugin.go``): (topologyKey, maxSkew), ScheduleAnyway."""


@dataclass(slots=True)
class SpreadScoreState:
    """PreScore's state (``preScoreState``): the constraints, the ignored nodes, per constraint the matching pods
    per domain (hostname constraints keep none) and the normalising weights."""

    pod: PodInfo
    constraints: tuple[SpreadConstraint, ...]
    ignored: set[str]
    counts: list[dict[str, int]]
    weights: list[float]


def _constraints(pod: PodInfo, snapshot: Snapshot) -> tuple[tuple[SpreadConstraint, ...], bool]:
    """The soft constraints and whether nodes must carry every topology key (``requireAllTopologies``)."""
    if pod.spread_constraints:
        return tuple(c.for_pod(pod.labels) for c in pod.spread_constraints
                     if c.when_unsatisfiable == SCHEDULE_ANYWAY), True
    selector = snapshot.spread_selectors.default_selector(pod) if snapshot.spread_selectors else EVERYTHING
    if selector.everything:
        return (), False
    return tuple(SpreadConstraint(skew, key, SCHEDULE_ANYWAY, selector) for key, skew in SYSTEM_DEFAULT_CONSTRAINTS), \
        False


def pod_topology_spread_prescore(pod: PodInfo, feasible: Sequence[NodeInfo],
                                 snapshot: Snapshot) -> SpreadScoreState | None:
    """PodTopologySpread's PreScore: the state, or None for ``Skip``."""
    if len(snapshot) == 0:
        return None
    constraints, require_all = _constraints(pod, snapshot)
    if not constraints:
        return None
    keys = [c.topology_key for c in constraints]
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for node in feasible:
        labels = node.labels
        if require_all and not all(k in labels for k in keys):
            ignored.add(node.name)
            continue
        for i, key in enumerate(keys):
            if key != HOSTNAME:
                counts[i].setdefault(labels.get(key, ""), 0)
    weights = [math.log((len(feasible) - len(ignored) if key == HOSTNAME else len(counts[i])) + 2)
               for i, key in enumerate(keys)]
    if any(key != HOSTNAME for key in keys):
        for node in snapshot:
            labels = node.labels
            if require_all and not all(k in labels for k in keys):
                continue
            for i, constraint in enumerate(constraints):
                if constraint.topology_key == HOSTNAME:
                    continue
                domain = counts[i]
                value = labels.get(constraint.topology_key, "")
                if value not in domain or not match_node_inclusion_policies(pod, constraint, node):
                    continue
                domain[value] += count_pods_match_selector(node.pods.values(), constraint.selector, pod.namespace)
    return SpreadScoreState(pod, constraints, ignored, counts, weights)


def pod_topology_spread_score(state: SpreadScoreState, nodes: Sequence[NodeInfo]) -> list[int]:
    """Score per node (``math.Round`` of the float sum: half away from zero)."""
    out = []
    namespace = state.pod.namespace
    for node in nodes:
        if node.name in state.ignored:
            out.append(0)
            continue
        labels = node.labels
        score = 0.0
        for i, constraint in enumerate(state.constraints):
            value = labels.get(constraint.topology_key)
            if value is None:
                continue
            if constraint.topology_key == HOSTNAME:
                count = count_pods_match_selector(node.pods.values(), constraint.selector, namespace)
            else:
                count = state.counts[i].get(value, 0)
            score += count * state.weights[i] + (constraint.max_skew - 1)
        out.append(math.floor(score + 0.5))
    return out


def pod_topology_spread_normalize(state: SpreadScoreState, nodes: Sequence[NodeInfo],
                                  scores: Sequence[int]) -> list[int]:
    """NormalizeScore over ``scores`` (in ``nodes`` order)."""
    valid = [s for node, s in zip(nodes, scores, strict=True) if node.name not in state.ignored]
    low, high = min(valid, default=0), max(valid, default=0)
    out = []
    for node, score in zip(nodes, scores, strict=True):
        if node.name in state.ignored:
            out.append(0)
        elif high == 0:
            out.append(MAX_NODE_SCORE)
        else:
            out.append(MAX_NODE_SCORE * (high + low - score) // high)
    return out
