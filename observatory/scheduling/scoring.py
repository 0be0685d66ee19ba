"""Score plugins of the default profile, their normalisation and weights.

Reproduces, from kube-scheduler v1.34.1:

* ``NodeResourcesFit`` with its default ``LeastAllocated`` strategy, cpu and memory weight 1
  (``plugins/noderesources/least_allocated.go``, ``resource_allocation.go``): per resource
  ``(allocatable - requested) * 100 // allocatable`` (0 when requested exceeds allocatable), where requested is the
  node's *non-zero* requests plus the pod's (a container without a cpu/memory request counts 100m / 200Mi), then the
  weighted mean (integer division); resources with allocatable 0 are left out;
* ``NodeResourcesBalancedAllocation``, cpu and memory (``plugins/noderesources/balanced_allocation.go``): fractions
  ``requested / allocatable`` (actual requests, capped at 1) and ``int((1 - std) * 100)``, where std is
  ``|f1 - f2| / 2`` for two resources; skipped (PreScore ``Skip``) for a pod that requests neither cpu nor memory;
* ``TaintToleration`` (``plugins/tainttoleration/taint_toleration.go``): the number of PreferNoSchedule taints not
  tolerated by the pod's tolerations with effect PreferNoSchedule or empty, normalised *reversed*;
* ``NodeAffinity`` (``plugins/nodeaffinity/node_affinity.go``): the sum of the weights of matching preferred terms,
  normalised; skipped when the pod has no preferred terms;
* ``DefaultNormalizeScore`` (``plugins/helper/normalize_score.go``): ``score * 100 // max``, reversed as
  ``100 - that``; when every score is 0, reversed scores all become 100;
* plugin weights from ``pkg/scheduler/apis/config/v1/default_plugins.go``: TaintToleration 3, NodeAffinity 2,
  NodeResourcesFit 1, NodeResourcesBalancedAllocation 1 (the total is ``sum(normalised * weight)``).

Not reproduced: PodTopologySpread (its system-default spreading applies only to pods owned by a Service,
ReplicaSet or StatefulSet), InterPodAffinity and ImageLocality; so totals can differ from a real cluster's for such
pods and for nodes that report ``status.images``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import mul
from typing import NamedTuple

from .nodeinfo import NodeInfo, PodInfo
from .resources import CPU, MEMORY
from .taints import PREFER_NO_SCHEDULE

__all__ = [
    "BALANCED_ALLOCATION",
    "MAX_NODE_SCORE",
    "SCORE_WEIGHTS",
    "NodeScore",
    "default_normalize_score",
    "score_nodes",
]

MAX_NODE_SCORE = 100
BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
SCORE_WEIGHTS: Mapping[str, int] = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1,
                                    BALANCED_ALLOCATION: 1}
"""Score plugin -> weight, in the default profile's order."""


class NodeScore(NamedTuple):
    """One feasible node's scores (a named tuple: one per node per pod). ``plugins``: the score plugins that ran
    for this pod, in profile order (a plugin whose PreScore returned ``Skip`` is left out); ``raw``: their
    ``Score`` before normalisation; ``normalized``: after ``NormalizeScore`` (0-100); ``total``:
    ``sum(normalized * weight)``. The ``by_plugin`` and ``weighted`` properties give plugin -> value dicts."""

    node: str
    plugins: tuple[str, ...]
    raw: tuple[int, ...]
    normalized: tuple[int, ...]
    total: int

    @property
    def by_plugin(self) -> dict[str, int]:
        """Plugin -> normalised score (0-100)."""
        return dict(zip(self.plugins, self.normalized, strict=True))

    @property
    def weighted(self) -> dict[str, int]:
        """Plugin -> normalised score times the plugin's weight."""
        return {p: v * SCORE_WEIGHTS[p] for p, v in zip(self.plugins, self.normalized, strict=True)}


def default_normalize_score(scores: Sequence[int], reverse: bool) -> list[int]:
    """``helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)``."""
    highest = max(scores, default=0)
    if highest == 0:
        return [MAX_NODE_SCORE if reverse else 0 for _ in scores]
    out = [MAX_NODE_SCORE * s // highest for s in scores]
    return [MAX_NODE_SCORE - s for s in out] if reverse else out


def _least_requested(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def _least_allocated(pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
    """LeastAllocated over cpu and memory (weights 1 and 1), using non-zero requests."""
    pod_cpu, pod_memory = pod.resources.nonzero_cpu, pod.resources.nonzero_memory
    out = []
    for node in nodes:
        total = weights = 0
        capacity = node.allocatable.get(CPU, 0)
        if capacity:
            total, weights = _least_requested(node.nonzero_cpu + pod_cpu, capacity), 1
        capacity = node.allocatable.get(MEMORY, 0)
        if capacity:
            total, weights = total + _least_requested(node.nonzero_memory + pod_memory, capacity), weights + 1
        out.append(total // weights if weights else 0)
    return out


def _fraction(requested: int, capacity: int) -> float:
    return min(float(requested) / float(capacity), 1.0)


def _balanced_allocation(pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
    """BalancedAllocation over cpu and memory: ``int((1 - std) * 100)`` of the requested/allocatable fractions."""
    pod_cpu, pod_memory = pod.resources.requests.get(CPU, 0), pod.resources.requests.get(MEMORY, 0)
    out = []
    for node in nodes:
        cpu_capacity, memory_capacity = node.allocatable.get(CPU, 0), node.allocatable.get(MEMORY, 0)
        std = 0.0
        if cpu_capacity and memory_capacity:  # one fraction alone has no deviation
            std = abs((_fraction(node.requested.get(CPU, 0) + pod_cpu, cpu_capacity)
                       - _fraction(node.requested.get(MEMORY, 0) + pod_memory, memory_capacity)) / 2)
        out.append(int((1 - std) * MAX_NODE_SCORE))
    return out


def _intolerable_prefer_no_schedule(pod: PodInfo, node: NodeInfo) -> int:
    tolerations = [t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
    return sum(1 for taint in node.taints
               if taint.effect == PREFER_NO_SCHEDULE and not any(t.tolerates(taint) for t in tolerations))


def score_nodes(pod: PodInfo, nodes: Sequence[NodeInfo]) -> dict[str, NodeScore]:
    """Score the feasible ``nodes`` for ``pod``; returns node name -> :class:`NodeScore`, in ``nodes`` order."""
    raw: dict[str, list[int]] = {
        "TaintToleration": [_intolerable_prefer_no_schedule(pod, n) if n.taints else 0 for n in nodes],
    }
    if pod.affinity.preferred:
        raw["NodeAffinity"] = [pod.affinity.preferred_score(n.labels, n.name) for n in nodes]
    raw["NodeResourcesFit"] = _least_allocated(pod, nodes)
    if pod.resources.requests.get(CPU, 0) or pod.resources.requests.get(MEMORY, 0):
        raw[BALANCED_ALLOCATION] = _balanced_allocation(pod, nodes)
    plugins = tuple(raw)
    normalized = [default_normalize_score(values, reverse=True) if plugin == "TaintToleration"
                  else default_normalize_score(values, reverse=False) if plugin == "NodeAffinity" else values
                  for plugin, values in raw.items()]
    weights = [SCORE_WEIGHTS[p] for p in plugins]
    raw_rows = list(zip(*raw.values(), strict=True))
    out: dict[str, NodeScore] = {}
    for node, raw_row, norm_row in zip(nodes, raw_rows, zip(*normalized, strict=True), strict=True):
        out[node.name] = NodeScore(node.name, plugins, raw_row, norm_row, sum(map(mul, norm_row, weights)))
    return out
