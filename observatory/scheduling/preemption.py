"""DefaultPreemption: what it concludes for each node, and the node and victims the scheduler acts on. Pure.

Reproduces kube-scheduler v1.34.1, ``pkg/scheduler/framework/preemption/preemption.go``
(``Evaluator.Preempt``, ``findCandidates``, ``DryRunPreemption``) and
``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`` (``PodEligibleToPreemptOthers``,
``SelectVictimsOnNode``):

* a pod with ``preemptionPolicy: Never`` is not eligible: ``not eligible due to preemptionPolicy=Never.``;
* a node whose filter status is UnschedulableAndUnresolvable is not a candidate: ``Preemption is not helpful for
  scheduling``;
* on a node rejected only as Unschedulable, the potential victims are the pods with a *lower* priority than the
  incoming pod; with none: ``No preemption victims found for incoming pod``;
* otherwise they are all removed and the filters run again: if the pod still does not fit, the node's verdict is
  that filter status (for example ``Insufficient memory``); if it fits, victims are reprieved one by one, most
  important first (higher priority, then earlier ``status.startTime``), and those that must go are the victims.

:func:`preemption_verdicts` is that dry run over every node, for the explanations. What the scheduler acts on is
:func:`preempt`, ``Evaluator.Preempt``:

1. eligibility (``PodEligibleToPreemptOthers``): ``preemptionPolicy: Never``, or, for a pod already nominated to a
   node that its filters did not call UnschedulableAndUnresolvable, a lower-priority pod on that node that is
   terminating because the scheduler preempted it (deletionTimestamp set and ``DisruptionTarget=True`` with reason
   ``PreemptionByScheduler``): ``not eligible due to a terminating pod on the nominated node.``; the nomination
   is then kept;
2. ``findCandidates``: the nodes whose filter status is Unschedulable, tried from ``offset`` (upstream: a random
   offset, ``rand.Int31n``; here the caller's, so runs can be seeded) until :func:`calculate_num_candidates` of them
   are candidates (``DryRunPreemption``; upstream runs the nodes in parallel and stops on the first
   ``numCandidates`` to finish, here they run in order);
3. no candidate: the preemption FitError over the tried nodes (absent nodes: ``Preemption is not helpful for
   scheduling``) and the nomination is cleared;
4. otherwise ``SelectCandidate``/``pickOneNodeForPreemption`` (:func:`pick_one_node_for_preemption`) names the
   node to nominate and its victims.

PodDisruptionBudgets are not served, so every candidate has 0 PDB violations (``filterPodsWithPDBViolation`` puts
every victim in the non-violating group).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .cycle import CycleState
from .filters import run_filters
from .nodeinfo import NodeInfo, PodInfo
from .verdicts import SUCCESS, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, Code, NodeVerdict

__all__ = [
    "MIN_CANDIDATE_NODES_ABSOLUTE", "MIN_CANDIDATE_NODES_PERCENTAGE", "NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER",
    "NOT_ELIGIBLE_TERMINATING_POD", "NO_PREEMPTION_VICTIMS", "PREEMPTION_NOT_HELPFUL", "Candidate", "Preemption",
    "PreemptionVerdict", "calculate_num_candidates", "dry_run_preemption", "eligible_to_preempt",
    "pick_one_node_for_preemption", "preempt", "preemption_verdicts", "select_victims_on_node",
]

PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_PREEMPTION_VICTIMS = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING_POD = "not eligible due to a terminating pod on the nominated node."
"""``PodEligibleToPreemptOthers`` in ``default_preemption.go``."""
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
"""``DefaultPreemptionArgs`` defaults (``pkg/scheduler/apis/config/v1/defaults.go``)."""
INT32_SPAN = 2 ** 31
"""``math.MaxInt32 + 1``, added to each victim's priority in the priority-sum criterion."""


@dataclass(frozen=True, slots=True)
class PreemptionVerdict:
    """DefaultPreemption's view of one node. ``code`` Success means a candidate: evicting ``victims``
    (``namespace/name``, most important first) would let the pod fit. Otherwise ``reasons`` are what the
    preemption FitError counts for this node."""

    node: str
    code: Code
    reasons: tuple[str, ...] = ()
    victims: tuple[str, ...] = ()

    @property
    def candidate(self) -> bool:
        return self.code == SUCCESS


def _importance(pod: PodInfo) -> tuple[int, str]:
    """Sort key, most important first: higher priority, then earlier start (a pod not started sorts last)."""
    return (-pod.priority, pod.start_time or "\uffff")


def select_victims_on_node(pod: PodInfo, node: NodeInfo,
                           cycle: CycleState | None) -> tuple[tuple[PodInfo, ...], PreemptionVerdict]:
    """``SelectVictimsOnNode``: remove every lower-priority pod (``RemovePod`` on the PreFilter state too), and if
    the pod then fits, reprieve them one by one, most important first (``AddPod``). Returns the victims, most
    important first, and the node's verdict (Success when there are victims)."""
    potential = sorted((p for p in node.pods.values() if p.priority < pod.priority), key=_importance)
    if not potential:
        return (), PreemptionVerdict(node.name, UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_PREEMPTION_VICTIMS,))
    trial = node.copy()
    state = cycle.copy() if cycle is not None else None
    for victim in potential:
        trial.remove(victim.identity)
        if state is not None:
            state.update_with_pod(victim, trial, -1)
    status = run_filters(pod, trial, state)
    if not status.feasible:
        return (), PreemptionVerdict(node.name, status.code, status.reasons)
    victims = []
    for p in potential:
        trial.add(p)
        if state is not None:
            state.update_with_pod(p, trial, 1)
        if not run_filters(pod, trial, state).feasible:
            trial.remove(p.identity)
            if state is not None:
                state.update_with_pod(p, trial, -1)
            victims.append(p)
    return tuple(victims), PreemptionVerdict(node.name, SUCCESS, (), tuple(p.key for p in victims))


def _select_victims(pod: PodInfo, node: NodeInfo, cycle: CycleState | None) -> PreemptionVerdict:
    return select_victims_on_node(pod, node, cycle)[1]


def preemption_verdicts(pod: PodInfo, nodes: Mapping[str, NodeInfo], verdicts: Mapping[str, NodeVerdict],
                        cycle: CycleState | None = None) -> dict[str, PreemptionVerdict] | None:
    """Per node, what preemption would find; None when the pod may not preempt (``preemptionPolicy: Never``).
    Nodes absent from ``verdicts`` (excluded before filtering) are "not helpful", as upstream's absent nodes."""
    if pod.preemption_never:
        return None
    out: dict[str, PreemptionVerdict] = {}
    for name, info in nodes.items():
        verdict = verdicts.get(name)
        if verdict is None or verdict.code != UNSCHEDULABLE:
            out[name] = PreemptionVerdict(name, UNSCHEDULABLE_AND_UNRESOLVABLE, (PREEMPTION_NOT_HELPFUL,))
        else:
            out[name] = _select_victims(pod, info, cycle)
    return out


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where evicting ``victims`` (most important first) lets the pod fit (``preemption.Candidate``)."""

    node: str
    victims: tuple[PodInfo, ...]
    num_pdb_violations: int = 0


@dataclass(frozen=True, slots=True)
class Preemption:
    """What ``Evaluator.Preempt`` concluded. ``message``: why the pod may not preempt (then there is nothing else),
    else None. ``nominated_node``: None keeps the pod's nomination as it is (not eligible), ``""``
    clears it (no candidate), a name nominates that node. ``candidate``: the chosen node and its victims.
    ``verdicts``: when there was no candidate, the tried nodes' verdicts (the preemption FitError counts every
    other node as ``Preemption is not helpful for scheduling``)."""

    message: str | None
    nominated_node: str | None
    candidate: Candidate | None = None
    verdicts: Mapping[str, PreemptionVerdict] | None = None


def calculate_num_candidates(num_nodes: int, percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE,
                             absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE) -> int:
    """``calculateNumCandidates``: ``num_nodes * percentage / 100`` (integer division), at least ``absolute``, at
    most ``num_nodes``."""
    return min(max(num_nodes * percentage // 100, absolute), num_nodes)


def eligible_to_preempt(pod: PodInfo, nominated_node: str, nominated_code: Code | None,
                        nodes: Mapping[str, NodeInfo]) -> str | None:
    """``PodEligibleToPreemptOthers``: None when ``pod`` may preempt, else the reason. ``nominated_node`` is the
    pod's ``status.nominatedNodeName`` (``""``: none) and ``nominated_code`` its filter status this cycle."""
    if pod.preemption_never:
        return NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER
    if not nominated_node or nominated_code == UNSCHEDULABLE_AND_UNRESOLVABLE:
        return None
    node = nodes.get(nominated_node)
    if node is not None and any(p.priority < pod.priority and p.deleting and p.preempted_by_scheduler
                                for p in node.pods.values()):
        return NOT_ELIGIBLE_TERMINATING_POD
    return None


def dry_run_preemption(pod: PodInfo, potential: Sequence[NodeInfo], cycle: CycleState | None, offset: int,
                       num_candidates: int) -> tuple[list[Candidate], dict[str, PreemptionVerdict]]:
    """``DryRunPreemption`` over ``potential`` from ``offset`` (wrapping), stopping once ``num_candidates``
    candidates are found. Returns the candidates in the order found and the verdicts of the nodes that were not."""
    candidates: list[Candidate] = []
    statuses: dict[str, PreemptionVerdict] = {}
    for i in range(len(potential)):
        node = potential[(offset + i) % len(potential)]
        victims, verdict = select_victims_on_node(pod, node, cycle)
        if verdict.candidate and victims:
            candidates.append(Candidate(node.name, victims))
            if len(candidates) >= num_candidates:
                break
        else:
            statuses[node.name] = verdict
    return candidates, statuses


def _earliest_start_of_highest(victims: Sequence[PodInfo]) -> str:
    """``GetEarliestPodStartTime``: the earliest start among the highest-priority victims (a pod not started
    counts as starting now, later than any recorded time)."""
    highest = max(v.priority for v in victims)
    return min(v.start_time or "\uffff" for v in victims if v.priority == highest)


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> Candidate | None:
    """``pickOneNodeForPreemption`` with the default criteria, each applied only to the nodes tied on the ones
    before: fewest PDB violations; the lowest highest-priority victim; the smallest sum of victim priorities (each
    plus 2^31); the fewest victims; the latest earliest start time among the highest-priority victims; then the
    first (upstream's first of a map, in no set order; here the first in ``candidates``)."""
    if not candidates:
        return None

    def newest(c: Candidate) -> tuple[int, str]:
        start = _earliest_start_of_highest(c.victims)
        return (1, "") if start == "\uffff" else (0, start)

    scores: tuple[Callable[[Candidate], Any], ...] = (
        lambda c: -c.num_pdb_violations,
        lambda c: -max(v.priority for v in c.victims),
        lambda c: -sum(v.priority + INT32_SPAN for v in c.victims),
        lambda c: -len(c.victims),
        newest,
    )
    tied = list(candidates)
    for score in scores:
        best = max(score(c) for c in tied)
        tied = [c for c in tied if score(c) == best]
        if len(tied) == 1:
            break
    return tied[0]


def preempt(pod: PodInfo, nodes: Mapping[str, NodeInfo], verdicts: Mapping[str, NodeVerdict],
            cycle: CycleState | None = None, *, nominated_node: str = "", offset: int = 0,
            min_percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE,
            min_absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE) -> Preemption:
    """``Evaluator.Preempt`` for ``pod`` that fits nowhere (see the module). ``nodes``: every node, in snapshot
    order; ``verdicts``: this cycle's filter verdicts; ``offset``: where the dry run starts among the Unschedulable
    nodes (taken modulo their number)."""
    nominated = verdicts.get(nominated_node) if nominated_node else None
    reason = eligible_to_preempt(pod, nominated_node, nominated.code if nominated else None, nodes)
    if reason is not None:
        return Preemption(reason, None)
    potential = [info for name, info in nodes.items()
                 if (v := verdicts.get(name)) is not None and v.code == UNSCHEDULABLE]
    if not potential:
        return Preemption(None, "", verdicts={})
    count = calculate_num_candidates(len(potential), min_percentage, min_absolute)
    candidates, statuses = dry_run_preemption(pod, potential, cycle, offset % len(potential), count)
    best = pick_one_node_for_preemption(candidates)
    if best is None:
        return Preemption(None, "", verdicts=statuses)
    return Preemption(None, best.node, best)
