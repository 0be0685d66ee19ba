"""Score plugins of the default profile, their normalisation and weights.

Reproduces, from kube-scheduler v1.34.1, in the default profile's Score order (``RunScorePlugins``: each plugin's
``Score`` over the feasible nodes, then its ``NormalizeScore``, then times its weight; the total is the sum):

* ``TaintToleration`` (weight 3, ``plugins/tainttoleration/taint_toleration.go``): the number of PreferNoSchedule
  taints not tolerated by the pod's tolerations with effect PreferNoSchedule or empty, normalised *reversed*;
* ``NodeAffinity`` (2, ``plugins/nodeaffinity/node_affinity.go``): the sum of the weights of matching preferred
  terms, normalised; skipped when the pod has no preferred terms;
* ``NodeResourcesFit`` (1) with its default ``LeastAllocated`` strategy, cpu and memory weight 1
  (``plugins/noderesources/least_allocated.go``, ``resource_allocation.go``): per resource
  ``(allocatable - requested) * 100 // allocatable`` (0 when requested exceeds allocatable), where requested is the
  node's *non-zero* requests plus the pod's (a container without a cpu/memory request counts 100m / 200Mi), then the
  weighted mean (integer division); resources with allocatable 0 are left out;
* ``PodTopologySpread`` (2, :mod:`.podtopologyspread_scoring`): ScheduleAnyway constraints and the system
  default constraints, fewer matching pods per domain scoring higher;
* ``InterPodAffinity`` (2, :mod:`.interpodaffinity_scoring`): preferred affinity/anti-affinity of the pod and of
  the existing pods, existing pods' required affinity at ``hardPodAffinityWeight`` 1, min-max normalised;
* ``NodeResourcesBalancedAllocation`` (1, ``plugins/noderesources/balanced_allocation.go``), cpu and memory:
  fractions ``requested / allocatable`` (actual requests, capped at 1) and ``int((1 - std) * 100)``, where std is
  ``|f1 - f2| / 2`` for two resources; skipped (PreScore ``Skip``) for a pod that requests neither cpu nor memory;
* ``ImageLocality`` (1, :mod:`.imagelocality`): the sizes of the pod's images already on the node, scaled by their
  spread over the cluster's nodes; no normalisation.

``DefaultNormalizeScore`` (``plugins/helper/normalize_score.go``) is :func:`default_normalize_score`. A plugin whose
PreScore returns ``Skip`` is left out of :attr:`NodeScore.plugins`. ``VolumeBinding``'s score (weight 1) runs only
with the storage-capacity scoring path, so it is skipped for every pod here as in a default cluster.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

from .imagelocality import IMAGE_LOCALITY, image_locality_scores
from .interpodaffinity import INTER_POD_AFFINITY
from .interpodaffinity_scoring import (
    inter_pod_affinity_normalize,
    inter_pod_affinity_prescore,
    inter_pod_affinity_score,
)
from .nodeinfo import NodeInfo, PodInfo, Snapshot
from .podtopologyspread import POD_TOPOLOGY_SPREAD
from .podtopologyspread_scoring import (
    pod_topology_spread_normalize,
    pod_topology_spread_prescore,
    pod_topology_spread_score,
)
from .resources import CPU, MEMORY
from .scoring_helpers import MAX_NODE_SCORE, default_normalize_score
from .taints import PREFER_NO_SCHEDULE

__all__ = [
    "BALANCED_ALLOCATION",
    "MAX_NODE_SCORE",
    "SCORE_WEIGHTS",
    "NodeScore",
    "NodeScores",
    "default_normalize_score",
    "score_nodes",
]

BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
SCORE_WEIGHTS: Mapping[str, int] = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1,
                                    POD_TOPOLOGY_SPREAD: 2, INTER_POD_AFFINITY: 2, BALANCED_ALLOCATION: 1,
                                    IMAGE_LOCALITY: 1}
"""Score plugin -> weight, in the default profile's order (``default_plugins.go``)."""


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


class NodeScores(Mapping[str, NodeScore]):
    """node name -> :class:`NodeScore` for one cycle's feasible nodes, in scoring order, kept as per-plugin columns:
    a :class:`NodeScore` is built when a node is looked up (a cycle scores hundreds of nodes, and the scheduler reads
    the totals and a few nodes). ``plugins``, ``raw`` and ``normalized`` (one column per plugin), ``totals`` (one
    per node)."""

    __slots__ = ("_index", "_lookups", "names", "normalized", "plugins", "raw", "totals")

    def __init__(self, names: Sequence[str], plugins: tuple[str, ...], raw: Sequence[Sequence[int]],
                 normalized: Sequence[Sequence[int]], totals: Sequence[int]) -> None:
        self.names, self.plugins, self.raw, self.normalized, self.totals = names, plugins, raw, normalized, totals
        self._index: dict[str, int] | None = None
        self._lookups = 0

    def __getitem__(self, name: str) -> NodeScore:
        if self._index is None:  # a few lookups scan the names; from the ninth on, an index
            self._lookups += 1
            if self._lookups > 8:
                self._index = {n: k for k, n in enumerate(self.names)}
        if self._index is not None:
            i = self._index[name]
        else:
            try:
                i = self.names.index(name)
            except ValueError:
                raise KeyError(name) from None
        return NodeScore(name, self.plugins, tuple(c[i] for c in self.raw), tuple(c[i] for c in self.normalized),
                         self.totals[i])

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def total_by_node(self) -> dict[str, int]:
        """Node name -> weighted total, without building the per-node scores."""
        return dict(zip(self.names, self.totals, strict=True))


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


def _balanced_allocation(pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
    """BalancedAllocation over cpu and memory: ``int((1 - std) * 100)`` of the requested/allocatable fractions
    (each ``min(requested / allocatable, 1)`` in float)."""
    pod_cpu, pod_memory = pod.resources.requests.get(CPU, 0), pod.resources.requests.get(MEMORY, 0)
    out: list[int] = []
    append = out.append
    for node in nodes:
        allocatable = node.allocatable
        cpu_capacity, memory_capacity = allocatable.get(CPU, 0), allocatable.get(MEMORY, 0)
        if cpu_capacity and memory_capacity:  # one fraction alone has no deviation
            requested = node.requested
            cpu = min(float(requested.get(CPU, 0) + pod_cpu) / float(cpu_capacity), 1.0)
            memory = min(float(requested.get(MEMORY, 0) + pod_memory) / float(memory_capacity), 1.0)
            append(int((1 - abs((cpu - memory) / 2)) * MAX_NODE_SCORE))
        else:
            append(MAX_NODE_SCORE)
    return out


def _intolerable_prefer_no_schedule(pod: PodInfo, node: NodeInfo) -> int:
    tolerations = [t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
    return sum(1 for taint in node.taints
               if taint.effect == PREFER_NO_SCHEDULE and not any(t.tolerates(taint) for t in tolerations))


def score_nodes(pod: PodInfo, nodes: Sequence[NodeInfo], snapshot: Snapshot) -> NodeScores:
    """Score the feasible ``nodes`` of ``snapshot`` for ``pod``; returns node name -> :class:`NodeScore`, in
    ``nodes`` order. PreScore runs once per cycle for the plugins that have one (PodTopologySpread and
    InterPodAffinity precompute their counts over the whole snapshot there)."""
    raw: dict[str, list[int]] = {
        "TaintToleration": [_intolerable_prefer_no_schedule(pod, n) if n.taints else 0 for n in nodes],
    }
    normalized: dict[str, list[int]] = {"TaintToleration": default_normalize_score(raw["TaintToleration"], True)}
    if pod.affinity.preferred:
        raw["NodeAffinity"] = [pod.affinity.preferred_score(n.labels, n.name) for n in nodes]
        normalized["NodeAffinity"] = default_normalize_score(raw["NodeAffinity"], False)
    raw["NodeResourcesFit"] = normalized["NodeResourcesFit"] = _least_allocated(pod, nodes)
    spread = pod_topology_spread_prescore(pod, nodes, snapshot)
    if spread is not None:
        raw[POD_TOPOLOGY_SPREAD] = pod_topology_spread_score(spread, nodes)
        normalized[POD_TOPOLOGY_SPREAD] = pod_topology_spread_normalize(spread, nodes, raw[POD_TOPOLOGY_SPREAD])
    affinity = inter_pod_affinity_prescore(pod, snapshot)
    if affinity is not None:
        raw[INTER_POD_AFFINITY] = inter_pod_affinity_score(affinity, nodes)
        normalized[INTER_POD_AFFINITY] = inter_pod_affinity_normalize(raw[INTER_POD_AFFINITY])
    if pod.resources.requests.get(CPU, 0) or pod.resources.requests.get(MEMORY, 0):
        raw[BALANCED_ALLOCATION] = normalized[BALANCED_ALLOCATION] = _balanced_allocation(pod, nodes)
    raw[IMAGE_LOCALITY] = normalized[IMAGE_LOCALITY] = image_locality_scores(pod, nodes, snapshot)
    plugins = tuple(raw)
    totals = [0] * len(nodes)
    for plugin in plugins:
        weight = SCORE_WEIGHTS[plugin]
        totals = [total + value * weight for total, value in zip(totals, normalized[plugin], strict=True)]
    return NodeScores([n.name for n in nodes], plugins, [raw[p] for p in plugins], [normalized[p] for p in plugins],
                      totals)
