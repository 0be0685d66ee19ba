"""Pure scheduling framework: "which nodes can take this pod, and why not", as kube-scheduler v1.34.1 decides.

The one implementation used by the lab's simulated default-scheduler, the why-pending diagnosis and any scheduler
mode. No I/O: objects are Pod and Node JSON dicts as the API serves them (missing keys allowed).

Typical use::

    snapshot = Snapshot(nodes, pods)               # parse once; keep it and update it
    decision = schedule_one(pod, snapshot)          # Decision(node=..., verdicts=..., scores=..., message=...)
    if decision.node:
        snapshot.assume(pod, decision.node)         # count it before the next pod
        scheduled_message(namespace, name, decision.node)
    else:
        decision.message                             # the FailedScheduling text, byte for byte

Modules (each names the upstream file it reproduces): :mod:`.quantity` (quantities), :mod:`.resources` (requests,
units), :mod:`.pods` (priority, responsibility), :mod:`.taints`, :mod:`.nodeaffinity`, :mod:`.labelselector`,
:mod:`.nodeinfo` (NodeInfo, Snapshot), :mod:`.volumes` (the PVC/PV/StorageClass catalog), :mod:`.volumeplugins`
(VolumeRestrictions, VolumeBinding, VolumeZone: :mod:`.volumerestrictions`, :mod:`.volumebinding`,
:mod:`.volumezone`), :mod:`.podtopologyspread` and :mod:`.interpodaffinity` (their PreFilter state, :mod:`.cycle`),
:mod:`.filters` (the Filter plugins), :mod:`.scoring`, :mod:`.preemption` (dry run), :mod:`.queue` (the scheduling
queue), :mod:`.messages` (FitError text), :mod:`.sampling`
(percentageOfNodesToScore), :mod:`.framework` (one cycle).

Units everywhere: cpu in millicores, memory and ephemeral-storage in bytes, pods a count, other resources
``Quantity.Value()``.
"""

from .filters import FILTER_PLUGINS, resource_table, run_filters
from .framework import Decision, TieBreaker, filter_nodes, lowest_name, schedule_one, seeded_tie_breaker
from .messages import NO_NODES_AVAILABLE, fit_error_message, postfilter_message, scheduled_message
from .nodeinfo import NodeInfo, PodInfo, Snapshot
from .pods import DEFAULT_SCHEDULER_NAME, not_responsible_reason, pod_key, pod_priority, responsible_for_pod
from .preemption import PreemptionVerdict, preemption_verdicts
from .quantity import InvalidQuantity
from .resources import compute_pod_resources, pod_requests
from .sampling import NodeSampler, num_feasible_nodes_to_find
from .scoring import MAX_NODE_SCORE, SCORE_WEIGHTS, NodeScore
from .verdicts import (
    SUCCESS,
    UNSCHEDULABLE,
    UNSCHEDULABLE_AND_UNRESOLVABLE,
    AffinityMismatch,
    InsufficientResource,
    NodeNameMismatch,
    NodeVerdict,
    PortConflict,
    ResourceUse,
)

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "FILTER_PLUGINS",
    "MAX_NODE_SCORE",
    "NO_NODES_AVAILABLE",
    "SCORE_WEIGHTS",
    "SUCCESS",
    "UNSCHEDULABLE",
    "UNSCHEDULABLE_AND_UNRESOLVABLE",
    "AffinityMismatch",
    "Decision",
    "InsufficientResource",
    "InvalidQuantity",
    "NodeInfo",
    "NodeNameMismatch",
    "NodeSampler",
    "NodeScore",
    "NodeVerdict",
    "PodInfo",
    "PortConflict",
    "PreemptionVerdict",
    "ResourceUse",
    "Snapshot",
    "TieBreaker",
    "compute_pod_resources",
    "filter_nodes",
    "fit_error_message",
    "lowest_name",
    "not_responsible_reason",
    "num_feasible_nodes_to_find",
    "pod_key",
    "pod_priority",
    "pod_requests",
    "postfilter_message",
    "preemption_verdicts",
    "resource_table",
    "responsible_for_pod",
    "run_filters",
    "schedule_one",
    "scheduled_message",
    "seeded_tie_breaker",
]
