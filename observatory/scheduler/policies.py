"""How ``observatory schedule`` picks one node among the feasible ones: the ``--policy`` choices. Pure, no I/O.

Filtering is always the one framework's (:func:`observatory.scheduling.schedule_one`, kube-scheduler v1.34.1's
default profile); the policy only decides among the nodes that pass every filter:

* ``least-allocated`` (the default): kube-scheduler's default profile as is, whose ``NodeResourcesFit`` scores
  with the ``LeastAllocated`` strategy (``plugins/noderesources/least_allocated.go``), plus TaintToleration,
  NodeAffinity and BalancedAllocation with their default weights (:mod:`observatory.scheduling.scoring`). The
  highest weighted total wins; ties go to the smallest node name.
* ``most-allocated``: the same profile with ``NodeResourcesFit``'s ``MostAllocated`` strategy
  (``plugins/noderesources/most_allocated.go``): per resource ``min(requested, allocatable) * 100 //
  allocatable`` over the node's non-zero requests plus the pod's (cpu and memory, weight 1 each, integer mean),
  so the fullest node wins: bin packing.
* ``spread``: the node with the fewest pods on it (counting pods this scheduler has just placed); ties by name.
* ``first-fit``: the first feasible node in name order.
* ``random``: uniformly among the feasible nodes, from ``random.Random(seed)`` (the same seed and the same sequence
  of decisions give the same choices).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from observatory.scheduling import Decision, NodeInfo, NodeScore, PodInfo, Snapshot
from observatory.scheduling.resources import CPU, MEMORY
from observatory.scheduling.scoring import MAX_NODE_SCORE, SCORE_WEIGHTS, NodeScores

__all__ = ["DEFAULT_POLICY", "POLICIES", "Choice", "choose", "most_allocated_score"]

POLICIES = ("least-allocated", "most-allocated", "spread", "first-fit", "random")
DEFAULT_POLICY = "least-allocated"
FIT = "NodeResourcesFit"
PLUGIN_SCORES_KEPT = 5
"""Nodes whose per-plugin scores a Choice keeps: the best ones (at 1,000 nodes, all of them cost more than the
choice itself)."""


@dataclass(frozen=True, slots=True)
class Choice:
    """The chosen node (None when nothing is feasible), the policy's score per feasible node (higher wins) and, for
    the plugin-scoring policies, node -> plugin -> normalised score for the :data:`PLUGIN_SCORES_KEPT` best nodes."""

    node: str | None
    scores: Mapping[str, int] = field(default_factory=dict)
    plugin_scores: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


def _most_requested(requested: int, capacity: int) -> int:
    """``mostRequestedScore``: requested may exceed capacity (pods without requests count minimums); cap it."""
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def most_allocated_score(pod: PodInfo, node: NodeInfo) -> int:
    """``NodeResourcesFit`` with the ``MostAllocated`` strategy for ``pod`` on ``node`` (0-100): the integer mean of
    the cpu and memory scores over the non-zero requests (a container without requests counts 100m / 200Mi), as
    ``resource_allocation.go`` computes them for the Fit plugin; resources the node does not offer are left out."""
    total = weights = 0
    capacity = node.allocatable.get(CPU, 0)
    if capacity:
        total, weights = _most_requested(node.nonzero_cpu + pod.resources.nonzero_cpu, capacity), 1
    capacity = node.allocatable.get(MEMORY, 0)
    if capacity:
        total += _most_requested(node.nonzero_memory + pod.resources.nonzero_memory, capacity)
        weights += 1
    return total // weights if weights else 0


def _with_most_allocated(pod: PodInfo, snapshot: Snapshot, scores: Mapping[str, NodeScore]) -> dict[str, NodeScore]:
    """``scores`` with NodeResourcesFit's LeastAllocated value swapped for MostAllocated and totals recomputed."""
    out = {}
    for name, score in scores.items():
        info = snapshot.get(name)
        if info is None or FIT not in score.plugins:
            out[name] = score
            continue
        i = score.plugins.index(FIT)
        value = most_allocated_score(pod, info)
        raw = (*score.raw[:i], value, *score.raw[i + 1:])
        normalized = (*score.normalized[:i], value, *score.normalized[i + 1:])
        total = sum(v * SCORE_WEIGHTS[p] for p, v in zip(score.plugins, normalized, strict=True))
        out[name] = NodeScore(name, score.plugins, raw, normalized, total)
    return out


def _best(scores: Mapping[str, int]) -> str:
    """The highest score; ties to the smallest name."""
    return min(scores, key=lambda name: (-scores[name], name))


def choose(policy: str, pod: PodInfo, decision: Decision, snapshot: Snapshot,
           rng: random.Random | None = None) -> Choice:
    """Pick a node for ``pod`` from ``decision`` (``schedule_one`` over ``snapshot``) with ``policy`` (one of
    :data:`POLICIES`; ValueError otherwise). ``rng`` is used by ``random`` (a fresh unseeded one when None)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}: choose one of {', '.join(POLICIES)}")
    feasible = decision.feasible if decision.node is not None else ()
    if not feasible:
        return Choice(None)
    if policy in ("least-allocated", "most-allocated"):
        scores = decision.scores
        if policy == "most-allocated":
            scores = _with_most_allocated(pod, snapshot, scores)
        totals = scores.total_by_node() if isinstance(scores, NodeScores) else {n: s.total for n, s in scores.items()}
        top = heapq.nsmallest(PLUGIN_SCORES_KEPT, totals, key=lambda name: (-totals[name], name))
        return Choice(top[0], totals, {name: scores[name].by_plugin for name in top})
    if policy == "spread":
        counts = {name: -len(info.pods) for name in feasible if (info := snapshot.get(name)) is not None}
        return Choice(_best(counts), counts)
    if policy == "first-fit":
        return Choice(min(feasible))
    return Choice((rng or random.Random()).choice(sorted(feasible)))
