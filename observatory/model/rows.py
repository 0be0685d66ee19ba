"""The rows the panes show, derived from records: pending pods and node placement. Pure functions and values."""

from __future__ import annotations

from dataclasses import dataclass

from observatory.scheduling.pods import DEFAULT_SCHEDULER_NAME

from .diagnosis import NO_SCHEDULER_HAS_LOOKED, Diagnosis
from .records import NodeView, PodView

__all__ = ["NO_SCHEDULER_HAS_LOOKED", "NodePlacement", "PendingRow", "pending_row"]


@dataclass(frozen=True, slots=True)
class PendingRow:
    """One row of the pending-pods pane.

    ``diagnosis`` says why the pod is pending (:mod:`.diagnosis`); ``state`` is its one-line headline.
    ``bound_to`` is set for a pod bound within the highlight window. ``default_scheduler`` is False for any other
    ``schedulerName``.
    """

    pod: PodView
    diagnosis: Diagnosis
    state: str
    bound_to: str | None
    default_scheduler: bool


@dataclass(frozen=True, slots=True)
class NodePlacement:
    """One node with the pods bound to it.

    ``pods`` are all pods whose ``spec.nodeName`` is this node, sorted by (namespace, name), terminal ones included;
    ``cpu_requested_milli`` (millicores), ``memory_requested_bytes`` and ``pods_count`` add up the non-terminal ones
    (phase neither Succeeded nor Failed), to set against the node's allocatable; ``recently_bound`` holds the keys of
    pods bound here within the highlight window.
    """

    node: NodeView
    pods: tuple[PodView, ...]
    cpu_requested_milli: int
    memory_requested_bytes: int
    pods_count: int
    recently_bound: frozenset[str]


def pending_row(pod: PodView, diagnosis: Diagnosis, bound_to: str | None = None) -> PendingRow:
    """A :class:`PendingRow` from the pod and its diagnosis; ``bound_to`` for a pod bound within the highlight
    window."""
    return PendingRow(pod, diagnosis, diagnosis.headline, bound_to or None,
                      pod.scheduler_name == DEFAULT_SCHEDULER_NAME)
