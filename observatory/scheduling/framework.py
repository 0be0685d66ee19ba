"""One scheduling cycle: PreFilter, Filter, PostFilter (dry run), Score and host selection.

Reproduces the shape of ``pkg/scheduler/schedule_one.go`` in kube-scheduler v1.34.1 (``schedulePod``,
``findNodesThatFitPod``, ``prioritizeNodes``, ``selectHost``) and ``pkg/scheduler/framework/runtime/framework.go``
(``RunPreFilterPlugins``, ``RunFilterPlugins``, ``RunPostFilterPlugins``):

* no nodes at all: ``no nodes available to schedule pods``;
* NodeAffinity's PreFilter: required terms that all name nodes with ``matchFields metadata.name In`` restrict the
  cycle to those nodes; the others get ``node(s) didn't satisfy plugin(s) [NodeAffinity]``; terms naming disjoint
  node sets reject the pod outright with ``pod affinity terms conflict``;
* the nodes are filtered in order; with a :class:`~.sampling.NodeSampler` (the scheduler's cycles), from its
  round-robin start and only until ``percentageOfNodesToScore`` worth of nodes are feasible, as upstream
  (:mod:`.sampling`); without one (:func:`filter_nodes`, the explanations) every node is filtered;
* no feasible node: the FitError message, with the preemption dry run as PostFilter;
* feasible nodes are scored (see :mod:`.scoring`: PreScore, Score, NormalizeScore, weights) and the highest total
  wins. Upstream breaks ties at random
  (reservoir sampling in ``selectHost``); here a ``tie_breaker`` picks among the tied names, given in node order.
  The default, :func:`lowest_name`, takes the smallest name, so results are reproducible; use
  :func:`seeded_tie_breaker` for upstream-like random choice with a seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .cycle import CycleState
from .filters import NODE_AFFINITY, resource_table, run_filters
from .interpodaffinity import INTER_POD_AFFINITY
from .interpodaffinity import prefilter as inter_pod_affinity_prefilter
from .messages import NO_NODES_AVAILABLE, fit_error_message, postfilter_message
from .nodeinfo import NodeInfo, PodInfo, Snapshot
from .podtopologyspread import POD_TOPOLOGY_SPREAD
from .podtopologyspread import prefilter as pod_topology_spread_prefilter
from .preemption import PreemptionVerdict, preemption_verdicts
from .sampling import NodeSampler
from .scoring import NodeScore, score_nodes
from .verdicts import SUCCESS, UNSCHEDULABLE_AND_UNRESOLVABLE, NodeVerdict
from .volumeplugins import DRA_POSTFILTER_STATE_NOT_FOUND, VOLUME_BINDING, VOLUME_PLUGINS
from .volumeplugins import prefilter as volume_prefilter

__all__ = ["Decision", "TieBreaker", "filter_nodes", "lowest_name", "schedule_one", "seeded_tie_breaker"]

TieBreaker = Callable[[Sequence[str]], str]
"""Picks one node name among the names tied for the highest score (at least two, in node order)."""

ERR_AFFINITY_CONFLICT = "pod affinity terms conflict"


def lowest_name(tied: Sequence[str]) -> str:
    """The default tie-breaker: the lexicographically smallest node name."""
    return min(tied)


def seeded_tie_breaker(seed: int | str | None = None) -> TieBreaker:
    """A tie-breaker choosing at random like upstream, from its own ``random.Random(seed)``: the same seed and
    the same sequence of ties give the same choices."""
    rng = random.Random(seed)
    return lambda tied: rng.choice(list(tied))


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of :func:`schedule_one`.

    ``pod``: ``namespace/name``. ``node``: the chosen node, or None. ``verdicts``: node name -> NodeVerdict for
    every node filtered, in the order filtered (every node, in node order, unless a sampler stopped early).
    ``scores``: node name -> NodeScore for the feasible nodes (empty when none).
    ``message``: when ``node`` is None, the text upstream puts in the FailedScheduling event and the PodScheduled
    condition (a FitError, ``no nodes available to schedule pods``, or the error). ``preemption``: the dry run's
    verdict per node when no node fitted (None when it did not run, or the pod may not preempt). ``error``: set
    when the pod itself is broken (invalid quantities); upstream's condition reason is then ``SchedulerError``."""

    pod: str
    node: str | None
    verdicts: Mapping[str, NodeVerdict]
    scores: Mapping[str, NodeScore]
    message: str | None
    preemption: Mapping[str, PreemptionVerdict] | None = None
    error: str | None = None
    cycle: CycleState | None = None
    """The PreFilter state of the cycle when no node fitted (None when no plugin keeps one): what a real
    preemption (:func:`~.preemption.preempt`) filters with."""

    @property
    def feasible(self) -> tuple[str, ...]:
        """Names of the nodes that passed every filter, in node order."""
        return tuple(name for name, v in self.verdicts.items() if v.feasible)

    @property
    def condition_reason(self) -> str | None:
        """``PodScheduled=False`` reason for a failure: ``Unschedulable`` or ``SchedulerError``; None on success."""
        if self.node is not None:
            return None
        return "SchedulerError" if self.error else "Unschedulable"

    @property
    def preemption_candidates(self) -> tuple[str, ...]:
        """Nodes where evicting lower-priority pods would let the pod fit (the scheduler picks one of them with
        :func:`~.preemption.preempt`)."""
        return tuple(n for n, v in (self.preemption or {}).items() if v.candidate)


def _snapshot(nodes: Snapshot | Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]) -> Snapshot:
    if isinstance(nodes, Snapshot):
        if pods:
            raise ValueError("pass pods either inside the Snapshot or with node JSON, not both")
        return nodes
    return Snapshot(nodes, pods)


def _rejected_by_prefilter(pod: PodInfo, snapshot: Snapshot, plugin: str,
                           message: str) -> tuple[dict[str, NodeVerdict], str]:
    """A PreFilter rejection: every node carries it, and the FitError says ``0/N nodes are available: <message>.``"""
    return {n.name: NodeVerdict(n.name, plugin, UNSCHEDULABLE_AND_UNRESOLVABLE, (message,), (),
                                resource_table(pod, n), n.errors) for n in snapshot}, message


def _prefilter(pod: PodInfo, snapshot: Snapshot) -> tuple[CycleState | None, tuple[dict[str, NodeVerdict], str]
                                                         | None]:
    """The PreFilter plugins in upstream's order (NodeAffinity's conflict check, the volume plugins,
    PodTopologySpread, InterPodAffinity), stopping at the first rejection. Returns the cycle's state (None when no
    plugin keeps one) and, when a PreFilter rejects the pod, the verdicts and message."""
    names = pod.affinity.node_names
    if names is not None and not names:
        return None, _rejected_by_prefilter(pod, snapshot, NODE_AFFINITY, ERR_AFFINITY_CONFLICT)
    volumes = volume_prefilter(pod, snapshot) if pod.volumes else None
    if isinstance(volumes, tuple):
        return None, _rejected_by_prefilter(pod, snapshot, volumes[0], volumes[1])
    if volumes is not None and volumes.binding is not None and volumes.binding.eligible is not None:
        names, plugins = _narrowed(pod, volumes.binding.eligible)
        if not names:
            message = (f"node(s) didn't satisfy plugin {plugins[0]}" if len(plugins) == 1
                       else f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}] simultaneously")
            return None, _rejected_by_prefilter(pod, snapshot, VOLUME_BINDING, message)
    spread = pod_topology_spread_prefilter(pod, snapshot)
    if isinstance(spread, str):
        return None, _rejected_by_prefilter(pod, snapshot, POD_TOPOLOGY_SPREAD, spread)
    affinity = inter_pod_affinity_prefilter(pod, snapshot)
    if isinstance(affinity, str):
        return None, _rejected_by_prefilter(pod, snapshot, INTER_POD_AFFINITY, affinity)
    if spread is None and affinity is None and volumes is None:
        return None, None
    return CycleState(spread, affinity, volumes), None


def _filter(pod: PodInfo, snapshot: Snapshot, sampler: NodeSampler | None = None, profile: str | None = None,
            tables: bool = True) -> tuple[dict[str, NodeVerdict], str | None, CycleState | None]:
    """PreFilter, then Filter node by node (``findNodesThatFitPod``). With ``sampler``, from its start index and
    until enough nodes are feasible (``findNodesThatPassFilters``); the verdicts are then those of the nodes
    filtered, in the order filtered."""
    cycle, rejected = _prefilter(pod, snapshot)
    if rejected is not None:
        return rejected[0], rejected[1], None
    binding = cycle.volumes.binding if cycle is not None and cycle.volumes is not None else None
    names, plugins = _narrowed(pod, binding.eligible if binding is not None else None)
    excluded = f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}]"
    excluded_by = NODE_AFFINITY if NODE_AFFINITY in plugins else VOLUME_BINDING
    verdicts = {}
    nodes: list[NodeInfo] | Snapshot = snapshot
    limit = len(snapshot)
    if sampler is not None and limit:
        limit = sampler.num_to_find(len(snapshot), profile)
        order = list(snapshot)
        start = sampler.next_start % len(order)
        nodes = order[start:] + order[:start] if start else order
    found = processed = 0
    for info in nodes:
        if names is not None and info.name not in names:
            verdicts[info.name] = NodeVerdict(
                info.name, excluded_by, UNSCHEDULABLE_AND_UNRESOLVABLE, (excluded,), (),
                resource_table(pod, info) if tables else (), info.errors)
            continue
        verdict = verdicts[info.name] = run_filters(pod, info, cycle, tables=tables)
        processed += 1
        if verdict.code == SUCCESS:
            found += 1
            if found >= limit:
                break
    if sampler is not None:
        sampler.advance(processed, len(snapshot))
    return verdicts, None, cycle


def _narrowed(pod: PodInfo, eligible: frozenset[str] | None) -> tuple[frozenset[str] | None, list[str]]:
    """The merged PreFilterResult of ``RunPreFilterPlugins``: the node names NodeAffinity (``matchFields
    metadata.name``) and VolumeBinding (local PVs, ``eligible``) allow, intersected (None: every node), and the
    plugins that narrowed it, sorted (``sets.List(pluginsWithNodes)``). Nodes left out get ``node(s) didn't satisfy
    plugin(s) [<plugins>]``; an empty intersection rejects the pod at PreFilter."""
    names, plugins = pod.affinity.node_names, []
    if names is not None:
        plugins.append(NODE_AFFINITY)
    if eligible is not None:
        plugins.append(VOLUME_BINDING)
        names = eligible if names is None else names & eligible
    return names, sorted(plugins)


def _volume_prefilter_rejection(verdicts: Mapping[str, NodeVerdict]) -> bool:
    """Whether a volume plugin's PreFilter rejected the pod (then DRA's PostFilter ends the PostFilter with an
    Error: see :mod:`.volumeplugins`)."""
    first = next(iter(verdicts.values()), None)
    return first is not None and first.plugin in VOLUME_PLUGINS


def filter_nodes(pod: Mapping[str, Any] | PodInfo, nodes: Snapshot | Iterable[Mapping[str, Any]],
                 pods: Iterable[Mapping[str, Any]] = ()) -> dict[str, NodeVerdict]:
    """Which nodes can take ``pod`` and why not: node name -> :class:`NodeVerdict`, in node order.

    ``nodes`` is Node JSON (then ``pods`` are all pods, assigned or not) or a prepared :class:`Snapshot`."""
    info = pod if isinstance(pod, PodInfo) else PodInfo.from_pod(pod)
    return _filter(info, _snapshot(nodes, pods))[0]


def schedule_one(pod: Mapping[str, Any] | PodInfo, nodes: Snapshot | Iterable[Mapping[str, Any]],
                 pods: Iterable[Mapping[str, Any]] = (), *, tie_breaker: TieBreaker | None = None,
                 dra_fragment: bool = True, sampler: NodeSampler | None = None, profile: str | None = None,
                 resource_tables: bool = True) -> Decision:
    """Run one scheduling cycle for ``pod`` and return the :class:`Decision`; nothing is bound or evicted.

    ``nodes``/``pods`` as for :func:`filter_nodes`. To place many pods, keep one :class:`Snapshot` and call
    ``snapshot.assume(pod, decision.node)`` after each success. ``dra_fragment=False`` leaves
    ``no new claims to deallocate, `` out of FitError messages (clusters without DRA). ``sampler``: filter only
    ``percentageOfNodesToScore`` worth of feasible nodes from its round-robin start (``profile``: the
    schedulerName whose percentage applies), and move the start on; None filters every node.
    ``resource_tables=False`` leaves the verdicts' resource tables empty (the scheduler loop needs only reasons)."""
    info = pod if isinstance(pod, PodInfo) else PodInfo.from_pod(pod)
    snapshot = _snapshot(nodes, pods)
    if len(snapshot) == 0:
        return Decision(info.key, None, {}, {}, NO_NODES_AVAILABLE)
    verdicts, prefilter_message, cycle = _filter(info, snapshot, sampler, profile, resource_tables)
    if info.resources.errors:
        error = "; ".join(info.resources.errors)
        return Decision(info.key, None, verdicts, {}, error, error=error)
    feasible = [node for name, v in verdicts.items() if v.feasible and (node := snapshot.get(name)) is not None]
    if not feasible and prefilter_message is not None and dra_fragment and _volume_prefilter_rejection(verdicts):
        message = fit_error_message(len(snapshot), verdicts, prefilter_message=prefilter_message,
                                    postfilter_message=DRA_POSTFILTER_STATE_NOT_FOUND)
        return Decision(info.key, None, verdicts, {}, message)
    if not feasible:
        by_name = {n.name: n for n in snapshot}
        preemption = preemption_verdicts(info, by_name, verdicts, cycle)
        post = postfilter_message(len(snapshot), preemption, dra_fragment=dra_fragment)
        message = fit_error_message(len(snapshot), verdicts, prefilter_message=prefilter_message,
                                    postfilter_message=post)
        return Decision(info.key, None, verdicts, {}, message, preemption, cycle=cycle)
    scores = score_nodes(info, feasible, snapshot)
    best = max(scores.totals)
    tied = [name for name, total in zip(scores.names, scores.totals, strict=True) if total == best]
    chosen = tied[0] if len(tied) == 1 else (tie_breaker or lowest_name)(tied)
    return Decision(info.key, chosen, verdicts, scores, None)
