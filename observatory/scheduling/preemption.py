"""What DefaultPreemption would conclude for each node, without ever evicting anything.

Reproduces the dry run of kube-scheduler v1.34.1, ``pkg/scheduler/framework/preemption/preemption.go``
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

The lab never evicts (PodDisruptionBudgets, nominated pods and the terminating-victims check on a nominated node
are not modelled). A node with victims is reported as a candidate (code Success): upstream would preempt there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .cycle import CycleState
from .filters import run_filters
from .nodeinfo import NodeInfo, PodInfo
from .verdicts import SUCCESS, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, Code, NodeVerdict

__all__ = [
    "NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER", "NO_PREEMPTION_VICTIMS", "PREEMPTION_NOT_HELPFUL", "PreemptionVerdict",
    "preemption_verdicts",
]

PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_PREEMPTION_VICTIMS = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."


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


def _select_victims(pod: PodInfo, node: NodeInfo, cycle: CycleState | None) -> PreemptionVerdict:
    """``SelectVictimsOnNode``: remove every lower-priority pod (``RemovePod`` on the PreFilter state too), and if
    the pod then fits, reprieve them one by one, most important first (``AddPod``)."""
    potential = sorted((p for p in node.pods.values() if p.priority < pod.priority), key=_importance)
    if not potential:
        return PreemptionVerdict(node.name, UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_PREEMPTION_VICTIMS,))
    trial = node.copy()
    state = cycle.copy() if cycle is not None else None
    for victim in potential:
        trial.remove(victim.identity)
        if state is not None:
            state.update_with_pod(victim, trial, -1)
    status = run_filters(pod, trial, state)
    if not status.feasible:
        return PreemptionVerdict(node.name, status.code, status.reasons)
    victims = []
    for p in potential:
        trial.add(p)
        if state is not None:
            state.update_with_pod(p, trial, 1)
        if not run_filters(pod, trial, state).feasible:
            trial.remove(p.identity)
            if state is not None:
                state.update_with_pod(p, trial, -1)
            victims.append(p.key)
    return PreemptionVerdict(node.name, SUCCESS, (), tuple(victims))


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
