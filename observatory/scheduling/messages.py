"""The texts kube-scheduler v1.34.1 writes: the FitError message and the Scheduled event message.

Reproduces ``pkg/scheduler/framework/types.go`` ``FitError.Error`` (reference §4.3 and §4.3a):

``0/<N> nodes are available:`` then either `` <PreFilterMsg>.`` or `` <histogram>.`` where the histogram is one
``"<count> <reason>"`` string per distinct reason (a node adds one to each reason its status carries; nodes without
an explicit status count for the "absent" reasons), sorted as byte strings (``"10 …" < "2 …"`` and
``"1 Insufficient…" < "1 node(s)…"``) and joined with ``", "``; then `` <PostFilterMsg>`` with no period of its own.

The PostFilter message is the reasons of the PostFilter plugins joined with ``", "`` (``RunPostFilterPlugins``):
the DynamicResources plugin's ``no new claims to deallocate`` (DRA is on by default in 1.34, and the lab's pinned
captures show it for ordinary pods), then DefaultPreemption's ``preemption: <message>``, which is itself a FitError
over the preemption verdicts (absent nodes: ``Preemption is not helpful for scheduling``). When preemption finds a
candidate, DefaultPreemption succeeds and upstream adds no PostFilter text at all.

Also ``schedule_one.go``: ``no nodes available to schedule pods`` (``ErrNoNodesAvailable``) and the Scheduled
event's ``Successfully assigned %v/%v to %v``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from .preemption import NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER, PREEMPTION_NOT_HELPFUL, PreemptionVerdict

__all__ = [
    "DRA_NO_CLAIMS_TO_DEALLOCATE",
    "NOTE_LENGTH_LIMIT",
    "NO_NODES_AVAILABLE",
    "fit_error_message",
    "postfilter_message",
    "reasons_histogram",
    "scheduled_message",
    "truncate_message",
]

NOTE_LENGTH_LIMIT = 1024
"""``validation.NoteLengthLimit``: an event's note (message) is at most this many characters."""


def truncate_message(message: str) -> str:
    """``truncateMessage`` in ``schedule_one.go``: a FailedScheduling note longer than :data:`NOTE_LENGTH_LIMIT` is
    cut to fit and ends with `` ...``; the PodScheduled condition keeps the whole text."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    return message[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
DRA_NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


class _HasStatus(Protocol):
    @property
    def code(self) -> str: ...

    @property
    def reasons(self) -> tuple[str, ...]: ...


def reasons_histogram(statuses: Iterable[_HasStatus], num_nodes: int | None = None,
                      absent_reasons: Iterable[str] = ()) -> list[str]:
    """The sorted ``"<count> <reason>"`` strings for the rejected ``statuses`` (Success ones are ignored). When
    ``num_nodes`` exceeds the number of rejected statuses, each of ``absent_reasons`` counts the difference."""
    counts: dict[str, int] = {}
    explicit = 0
    for status in statuses:
        if status.code == "Success":
            continue
        explicit += 1
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    if num_nodes is not None and explicit < num_nodes:
        for reason in absent_reasons:
            counts[reason] = counts.get(reason, 0) + num_nodes - explicit
    return sorted(f"{count} {reason}" for reason, count in counts.items())


def fit_error_message(num_nodes: int, statuses: Iterable[_HasStatus] | Mapping[str, _HasStatus], *,
                      prefilter_message: str | None = None, postfilter_message: str | None = None,
                      absent_reasons: Iterable[str] = ()) -> str:
    """``FitError.Error()``: ``0/<num_nodes> nodes are available: …`` over ``statuses`` (NodeVerdicts,
    PreemptionVerdicts or a mapping of them), then `` <postfilter_message>`` when given."""
    if isinstance(statuses, Mapping):
        statuses = statuses.values()
    message = NO_NODE_AVAILABLE_MSG.format(num_nodes) + ":"
    if prefilter_message:
        message += f" {prefilter_message}."
    else:
        histogram = reasons_histogram(statuses, num_nodes, absent_reasons)
        if histogram:
            message += " " + ", ".join(histogram) + "."
    if postfilter_message:
        message += f" {postfilter_message}"
    return message


def postfilter_message(num_nodes: int, preemption: Mapping[str, PreemptionVerdict] | None, *,
                       dra_fragment: bool = True) -> str | None:
    """The PostFilter text for a pod that fits nowhere: ``no new claims to deallocate, preemption: 0/N nodes are
    available: …``. ``preemption`` is :func:`~.preemption.preemption_verdicts` (None: the pod may not preempt).
    Returns None when some node is a preemption candidate: upstream's preemption then succeeds, and
    ``RunPostFilterPlugins`` returns before joining any reasons, so the FailedScheduling text ends with the filter
    histogram, with no DRA and no preemption tail (``0/1 nodes are available: 1 Insufficient cpu.``)."""
    if preemption is None:
        body = NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER
    elif any(v.candidate for v in preemption.values()):
        return None
    else:
        body = fit_error_message(num_nodes, preemption, absent_reasons=(PREEMPTION_NOT_HELPFUL,))
    parts = ([DRA_NO_CLAIMS_TO_DEALLOCATE] if dra_fragment else []) + ["preemption: " + body]
    return ", ".join(parts)


def scheduled_message(namespace: str, name: str, node: str) -> str:
    """The Scheduled event: ``Successfully assigned default/nginx to node01``."""
    return f"Successfully assigned {namespace}/{name} to {node}"
