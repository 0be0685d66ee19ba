"""percentageOfNodesToScore: how many feasible nodes a scheduling cycle looks for, and where it starts.

Reproduces ``pkg/scheduler/schedule_one.go`` of kube-scheduler v1.34.1:

* ``numFeasibleNodesToFind``: all nodes below ``minFeasibleNodesToFind`` (100); otherwise the profile's
  ``percentageOfNodesToScore`` if set, else the global one (``DefaultPercentageOfNodesToScore`` 0); 0 means
  adaptive, ``50 - numAllNodes / 125`` percent but at least ``minFeasibleNodesPercentageToFind`` (5); the result is
  ``numAllNodes * percentage / 100``, at least 100;
* ``findNodesThatPassFilters`` filters the nodes in order from ``nextStartNodeIndex`` (round robin across cycles),
  stopping once that many are feasible; the index then moves on by the number of nodes processed (feasible plus
  rejected), modulo the node count. A pod that fits nowhere is filtered on every node, so ``0/N`` counts them all.

Upstream filters in parallel and may look at a few more nodes before the cancellation lands; this filters one node
at a time, so it stops exactly at the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND", "MIN_FEASIBLE_NODES_TO_FIND", "NodeSampler",
           "check_percentage", "num_feasible_nodes_to_find"]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def check_percentage(value: int | None, what: str = "percentageOfNodesToScore") -> None:
    """ValueError unless ``value`` is None or an int in [0, 100] (``ValidateKubeSchedulerConfiguration``)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        raise ValueError(f"{what} {value!r} is not in valid range [0-100]")


def num_feasible_nodes_to_find(num_all_nodes: int, profile_percentage: int | None = None,
                               global_percentage: int = 0) -> int:
    """``numFeasibleNodesToFind``: how many feasible nodes a cycle over ``num_all_nodes`` nodes looks for."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = profile_percentage if profile_percentage is not None else global_percentage
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(slots=True)
class NodeSampler:
    """One scheduler's sampling state: the global ``percentage`` (0: adaptive), the per-profile percentages
    (schedulerName -> percent) and ``next_start`` (``sched.nextStartNodeIndex``, shared by every profile)."""

    percentage: int = 0
    profiles: dict[str, int] | None = None
    next_start: int = 0

    def num_to_find(self, num_all_nodes: int, profile: str | None = None) -> int:
        own = (self.profiles or {}).get(profile) if profile is not None else None
        return num_feasible_nodes_to_find(num_all_nodes, own, self.percentage)

    def advance(self, processed: int, num_all_nodes: int) -> None:
        """``nextStartNodeIndex = (nextStartNodeIndex + processed) % len(allNodes)``."""
        if num_all_nodes:
            self.next_start = (self.next_start + processed) % num_all_nodes
