"""The rows the panes show, derived from records: pending pods and node placement. Pure functions and values."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from observatory.scheduling.pods import DEFAULT_SCHEDULER_NAME

from .records import EventView, NodeView, PodView

__all__ = ["NO_SCHEDULER_HAS_LOOKED", "NodePlacement", "PendingRow", "pending_state"]

NO_SCHEDULER_HAS_LOOKED = "no scheduler has looked"
BEING_DELETED = "being deleted"
SCHEDULING_GATED = "SchedulingGated"


@dataclass(frozen=True, slots=True)
class PendingRow:
    """One row of the pending-pods pane.

    ``state`` is one of: ``"no scheduler has looked"`` (no PodScheduled condition from a scheduler and no
    FailedScheduling/Scheduled event), ``"FailedScheduling: <message>"`` (PodScheduled False/Unschedulable with
    its message, else the latest FailedScheduling event's), ``"SchedulerError: <message>"``, ``"SchedulingGated"``
    (the pod has scheduling gates), ``"being deleted"``, ``"Scheduled: <message>"`` (a scheduler says it bound the
    pod but the bound pod has not been seen yet), ``"bound to <node>"`` (a recently bound row, ``bound_to`` set).
    ``default_scheduler`` is False for any other ``schedulerName``.
    """

    pod: PodView
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


def _latest(events: Iterable[EventView], reason: str) -> EventView | None:
    best: EventView | None = None
    for ev in events:
        if ev.reason == reason and (best is None or _order(ev) >= _order(best)):
            best = ev
    return best


def _order(ev: EventView) -> tuple:
    return (ev.time is not None, ev.time, ev.resource_version.zfill(20), ev.name)


def pending_state(pod: PodView, events: Iterable[EventView], bound_to: str | None = None) -> str:
    """The short state of a pending pod given its events (any order), or of a recently bound one (``bound_to``)."""
    if bound_to:
        return f"bound to {bound_to}"
    if pod.deleting:
        return BEING_DELETED
    if pod.gates:
        return SCHEDULING_GATED
    events = list(events)
    status, reason, message = pod.scheduled or ("", "", "")
    if status == "False" and reason == "SchedulerError":
        return f"SchedulerError: {message}" if message else "SchedulerError"
    if status == "False" and reason == "Unschedulable":
        if not message:
            failed = _latest(events, "FailedScheduling")
            message = failed.message if failed is not None else ""
        return f"FailedScheduling: {message}" if message else "FailedScheduling"
    failed, scheduled = _latest(events, "FailedScheduling"), _latest(events, "Scheduled")
    latest = max((e for e in (failed, scheduled) if e is not None), key=_order, default=None)
    if latest is not None:
        return f"{latest.reason}: {latest.message}"
    if pod.scheduled is None or reason == SCHEDULING_GATED:
        # SchedulingGated is the API server's condition, left behind when the gates go: no scheduler yet.
        return NO_SCHEDULER_HAS_LOOKED
    detail = f"PodScheduled={status}" + (f" {reason}" if reason else "")
    return f"{detail}: {message}" if message else detail


def pending_row(pod: PodView, events: Iterable[EventView], bound_to: str | None = None) -> PendingRow:
    """A :class:`PendingRow` for ``pod``."""
    return PendingRow(pod, pending_state(pod, events, bound_to), bound_to or None,
                      pod.scheduler_name == DEFAULT_SCHEDULER_NAME)
