"""Why is it Pending? One :class:`Diagnosis` per pod, from its record, its events, the nodes and the schedulers seen.

The states, in the order they are decided (the first that applies wins):

``deleting``
    ``metadata.deletionTimestamp`` is set. kube-scheduler skips deleting pods (``skip schedule deleting pod``,
    ``pkg/scheduler/schedule_one.go``) and the API server refuses their Binding.
``node-missing`` / ``node-not-ready`` / ``waiting-kubelet`` (bound but not running)
    ``spec.nodeName`` is set and the phase is still Pending: the Node does not exist (pod GC deletes the pod,
    ``pkg/controller/podgc`` ``gcOrphaned``), its Ready condition is not True, or its kubelet has not started the
    pod yet. ``running`` and ``finished`` cover bound pods past Pending.
``gated``
    ``spec.schedulingGates`` is not empty: no scheduler looks at the pod until every gate is removed.
``nominated``
    ``status.nominatedNodeName`` is set: preemption is in progress on that node.
``scheduler-error``
    PodScheduled=False with reason ``SchedulerError`` (a failed bind, a plugin error).
``refused``
    PodScheduled=False with reason ``Unschedulable``, or a FailedScheduling event newer than any Scheduled one. The
    message is parsed by :func:`observatory.scheduling.fiterror.parse_fit_error`; the raw text is kept.
``scheduled``
    A scheduler reported ``Scheduled`` but the bound pod has not been seen yet (the watch is a moment behind).
``no-scheduler``
    No PodScheduled condition from a scheduler and no FailedScheduling/Scheduled event. The usual cause is a
    ``spec.schedulerName`` that no running scheduler answers to; the diagnosis names the schedulers seen emitting
    events and, for ``default-scheduler``, the holder of the ``kube-system/kube-scheduler`` Lease.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from observatory.scheduling.fiterror import FitErrorParse, parse_fit_error, summary
from observatory.scheduling.pods import DEFAULT_SCHEDULER_NAME

from .records import EventView, LeaseView, NodeView, PodView
from .timefmt import ago

__all__ = [
    "DELETING",
    "FINISHED",
    "GATED",
    "NODE_MISSING",
    "NODE_NOT_READY",
    "NOMINATED",
    "NO_SCHEDULER",
    "REFUSED",
    "RUNNING",
    "SCHEDULED",
    "SCHEDULER_ERROR",
    "SCHEDULER_LEASE",
    "SCHEDULER_REASONS",
    "STATES",
    "WAITING_KUBELET",
    "Diagnosis",
    "diagnose",
]

NO_SCHEDULER, REFUSED, SCHEDULER_ERROR, GATED = "no-scheduler", "refused", "scheduler-error", "gated"
DELETING, WAITING_KUBELET = "deleting", "waiting-kubelet"
NODE_NOT_READY, NODE_MISSING = "node-not-ready", "node-missing"
NOMINATED, SCHEDULED, RUNNING, FINISHED = "nominated", "scheduled", "running", "finished"

STATES: Mapping[str, str] = {
    NO_SCHEDULER: "No scheduler has looked",
    REFUSED: "Refused by a scheduler",
    SCHEDULER_ERROR: "Scheduler error",
    GATED: "SchedulingGated",
    DELETING: "Being deleted",
    WAITING_KUBELET: "Bound, waiting for the kubelet",
    NODE_NOT_READY: "Bound, node NotReady",
    NODE_MISSING: "Bound to a node that does not exist",
    NOMINATED: "Nominated: preemption in progress",
    SCHEDULED: "Scheduled, binding not seen yet",
    RUNNING: "Running",
    FINISHED: "Finished",
}
"""State -> its title, as the Why pane and ``observatory why`` print it."""

SCHEDULER_REASONS = frozenset({"Scheduled", "FailedScheduling"})
"""Event reasons only schedulers emit: their ``reportingComponent`` / ``source.component`` names a scheduler."""
SCHEDULER_LEASE = ("kube-system", "kube-scheduler")
"""The Lease kube-scheduler's leader election holds (``--leader-elect-resource-name`` default)."""
NO_SCHEDULER_HAS_LOOKED = "no scheduler has looked"


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Why one pod is where it is.

    ``state`` is one of :data:`STATES`; ``title`` its words; ``headline`` one short line for the pending pane;
    ``explanation`` plain sentences; ``likely`` the likely cause when one can be named, else "".
    ``schedulers_seen`` are scheduler names seen emitting Scheduled/FailedScheduling events, sorted; ``lease`` the
    ``kube-system/kube-scheduler`` Lease as read (None when not asked). ``refusal`` is the parse of ``raw_message``
    (the PodScheduled condition's message, else the latest FailedScheduling event's), ``refused_by`` the scheduler
    that sent that event, ``refusals`` how many times it was reported and ``refused_at`` when last (aware UTC)."""

    pod: str
    state: str
    headline: str
    explanation: tuple[str, ...]
    likely: str = ""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    schedulers_seen: tuple[str, ...] = ()
    lease: LeaseView | None = None
    refusal: FitErrorParse | None = None
    refused_by: str = ""
    refusals: int = 0
    refused_at: datetime | None = None
    raw_message: str = ""
    gates: tuple[str, ...] = ()
    node: str = ""
    nominated_node: str = ""

    @property
    def title(self) -> str:
        return STATES.get(self.state, self.state)

    @property
    def unbound(self) -> bool:
        return not self.node

    def to_json(self) -> dict[str, Any]:
        """The ``diagnosis`` object of ``observatory why -o json``::

            {"state": "refused", "title": "Refused by a scheduler", "headline": "...", "explanation": ["..."],
             "likely": "...", "schedulerName": "...", "schedulersSeen": ["default-scheduler"],
             "lease": {"name": "kube-system/kube-scheduler", "holder": "...", "renewTime": "RFC 3339" | null,
                       "leaseDurationSeconds": 15, "problem": ""} | null,
             "gates": [...], "nodeName": "", "nominatedNodeName": "",
             "failedScheduling": {"raw": "...", "recognized": true, "available": 0, "total": 3,
                                  "reasons": [{"count": 2, "text": "Insufficient cpu", "kind": "insufficient",
                                               "detail": {"resource": "cpu"}}],
                                  "preemption": {"raw": "...", "total": 3, "reasons": [...]} | null,
                                  "truncated": false, "countsExceedTotal": false, "special": null,
                                  "reportedBy": "default-scheduler", "count": 4,
                                  "lastSeen": "RFC 3339" | null} | null}
        """
        lease = self.lease.to_json() if self.lease is not None else None
        failed = None
        if self.refusal is not None:
            r = self.refusal
            failed = {"raw": r.raw, "recognized": r.recognized, "available": r.available, "total": r.total,
                      "reasons": [_reason_json(x) for x in r.reasons],
                      "preemption": None if r.preemption is None else {
                          "raw": r.preemption.raw, "total": r.preemption.total,
                          "reasons": [_reason_json(x) for x in r.preemption.reasons]},
                      "truncated": r.truncated, "countsExceedTotal": r.counts_exceed_total, "special": r.special,
                      "reportedBy": self.refused_by, "count": self.refusals,
                      "lastSeen": _rfc3339(self.refused_at)}
        return {"state": self.state, "title": self.title, "headline": self.headline,
                "explanation": list(self.explanation), "likely": self.likely, "schedulerName": self.scheduler_name,
                "schedulersSeen": list(self.schedulers_seen), "lease": lease, "gates": list(self.gates),
                "nodeName": self.node, "nominatedNodeName": self.nominated_node, "failedScheduling": failed}


def _rfc3339(at: datetime | None) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at is not None else None


def _reason_json(r: Any) -> dict[str, Any]:
    return {"count": r.count, "text": r.text, "kind": r.kind, "detail": dict(r.detail)}


def _order(ev: EventView) -> tuple:
    return (ev.time is not None, ev.time, ev.resource_version.zfill(20), ev.name)


def _latest(events: Iterable[EventView], reason: str) -> EventView | None:
    best = None
    for ev in events:
        if ev.reason == reason and (best is None or _order(ev) >= _order(best)):
            best = ev
    return best


def _line(message: str, width: int = 100) -> str:
    """A message for a headline: whitespace runs as one space, cut to ``width`` characters with ``…`` (the pending
    pane shows one short line; the message in full is in ``raw_message``)."""
    flat = " ".join(message[:width * 4].split())
    return flat if len(flat) <= width and len(message) <= width * 4 else flat[:width - 1].rstrip() + "…"


def _refusal_lines(parse: FitErrorParse) -> list[str]:
    if not parse.recognized:
        return ["The message is not in a form observatory knows; it is shown verbatim (m shows it in full)."]
    lines = []
    if parse.total is not None:
        lines.append(f"{parse.available}/{parse.total} nodes are available.")
    for r in parse.reasons:
        lines.append(f"  {r.count if r.count is not None else '-'} × {r.text}")
    if parse.counts_exceed_total:
        lines.append("The counts add up to more than the nodes: one node can fail for several reasons at once.")
    if parse.preemption is not None:
        lines.append(f"preemption: {parse.preemption.raw}")
    if parse.extra_postfilter:
        lines.append("also: " + ", ".join(parse.extra_postfilter))
    if parse.truncated:
        lines.append("The event message was cut at 1024 bytes (it ends in ' ...'); the PodScheduled condition "
                     "holds it in full.")
    return lines


def _lease_line(lease: LeaseView | None, now: datetime) -> tuple[str, bool | None]:
    """A sentence about kube-scheduler's Lease, and whether it shows a live leader (None: unknown)."""
    if lease is None:
        return "", None
    if lease.problem:
        return f"The {lease.key} Lease could not be read: {lease.problem}.", None
    if not lease.holder:
        return f"The {lease.key} Lease has no holder: no kube-scheduler is leading.", False
    renewed = ago(lease.renewed, now)
    if lease.live(now):
        return f"The {lease.key} Lease is held by {lease.holder} (renewed {renewed}).", True
    return (f"The {lease.key} Lease was last renewed by {lease.holder} {renewed}, longer ago than its "
            f"{lease.duration_seconds}s duration: no kube-scheduler is renewing it."), False


def _no_scheduler(pod: PodView, seen: Mapping[str, datetime | None], lease: LeaseView | None, now: datetime,
                  scope: str | None) -> tuple[list[str], str]:
    name = pod.scheduler_name
    where = f" in namespace {scope}" if scope else " in this cluster"
    lines = ["The pod has no PodScheduled condition from a scheduler and no Scheduled or FailedScheduling event.",
             f"spec.schedulerName: {name}"]
    if seen:
        lines.append(f"Schedulers seen emitting events{where}: "
                     + ", ".join(f"{s} (last {ago(t, now)})" for s, t in sorted(seen.items())))
    else:
        lines.append(f"No scheduler has been seen emitting events{where}.")
    likely = ""
    lease_text, leader = _lease_line(lease, now) if name == DEFAULT_SCHEDULER_NAME else ("", None)
    if lease_text:
        lines.append(lease_text)
    if name != DEFAULT_SCHEDULER_NAME and name not in seen:
        likely = (f"no running scheduler answers to schedulerName {name!r}: nothing has emitted events under that "
                  "name. Start a scheduler with that name, or bind the pod by hand.")
    elif name == DEFAULT_SCHEDULER_NAME and leader is False:
        likely = "kube-scheduler is not running: its Lease is not being renewed."
    elif name in seen or leader:
        likely = (f"{name} is running but has not reached this pod yet (it may be queued or backing off), or "
                  "the pod was created moments ago.")
    elif name == DEFAULT_SCHEDULER_NAME:
        likely = "no default-scheduler has been seen at work; kube-scheduler may not be running."
    return lines, likely


def diagnose(pod: PodView, events: Iterable[EventView], nodes: Mapping[str, NodeView], *, now: datetime,
             schedulers_seen: Mapping[str, datetime | None] | None = None, lease: LeaseView | None = None,
             scope: str | None = None) -> Diagnosis:
    """The :class:`Diagnosis` of ``pod`` given its events (any order), the nodes by name and, for a pod no
    scheduler has looked at, the scheduler names seen (name -> last time) and kube-scheduler's Lease. ``scope``
    names the only namespace watched, when it is one (so "seen" means "seen there")."""
    seen = dict(schedulers_seen or {})
    events = list(events)
    base: dict[str, Any] = {"pod": pod.key, "scheduler_name": pod.scheduler_name,
                            "schedulers_seen": tuple(sorted(seen)), "gates": pod.gates, "node": pod.node_name,
                            "nominated_node": pod.nominated_node}
    if pod.deleting:
        where = f" The kubelet on {pod.node_name} is stopping it." if pod.node_name else \
            " No scheduler will place it (kube-scheduler skips deleting pods) and the API server refuses a Binding."
        return Diagnosis(state=DELETING, headline="being deleted",
                         explanation=("metadata.deletionTimestamp is set: the pod is terminating." + where,), **base)
    if pod.node_name:
        return _bound(pod, nodes, base)
    if pod.gates:
        gates = ", ".join(pod.gates)
        return Diagnosis(state=GATED, headline=f"SchedulingGated: {gates}",
                         explanation=(f"spec.schedulingGates: {gates}.",
                                      "No scheduler considers the pod until every gate is removed, and the API "
                                      "server refuses a Binding meanwhile."),
                         likely="a controller (or you) has yet to remove the gates.", **base)

    status, reason, message = pod.scheduled or ("", "", "")
    failed, scheduled = _latest(events, "FailedScheduling"), _latest(events, "Scheduled")
    refusal_message = message if status == "False" and reason == "Unschedulable" and message else ""
    if not refusal_message and failed is not None and (scheduled is None or _order(failed) >= _order(scheduled)):
        refusal_message = failed.message
    refusal = parse_fit_error(refusal_message) if refusal_message else None
    refusal_fields: dict[str, Any] = {}
    if refusal is not None:
        refusal_fields = {"refusal": refusal, "raw_message": refusal_message,
                          "refused_by": failed.source if failed is not None else "",
                          "refusals": failed.count if failed is not None else 0,
                          "refused_at": failed.time if failed is not None else None}

    if pod.nominated_node and (pod.nominated_node in nodes or not nodes):
        lines = [f"status.nominatedNodeName is {pod.nominated_node}: the scheduler is evicting lower-priority pods "
                 "there and will place this pod when they are gone."]
        if refusal is not None:
            lines += _refusal_lines(refusal)
        return Diagnosis(state=NOMINATED, headline=f"nominated to {pod.nominated_node} (preemption)",
                         explanation=tuple(lines), **base, **refusal_fields)
    if status == "False" and reason == "SchedulerError":
        return Diagnosis(state=SCHEDULER_ERROR,
                         headline=f"SchedulerError: {_line(message)}" if message else "SchedulerError",
                         explanation=("PodScheduled=False, reason SchedulerError: the scheduler chose a node but "
                                      "could not finish (a failed bind or a plugin error); it will retry.",
                                      *([message] if message else [])),
                         raw_message=message, **base)
    if refusal is not None:
        who = failed.source if failed is not None and failed.source else "A scheduler"
        times = ""
        if failed is not None:
            times = (f", {failed.count} times" if failed.count > 1 else "") + f", last {ago(failed.time, now)}"
        lines = [f"{who} refused it{times}:", *_refusal_lines(refusal)]
        return Diagnosis(state=REFUSED, headline=summary(refusal), explanation=tuple(lines),
                         likely="no node passes the scheduler's filters; the node fit shows each node's reason.",
                         **base, **refusal_fields)
    if scheduled is not None:
        return Diagnosis(state=SCHEDULED, headline=f"Scheduled: {_line(scheduled.message)}",
                         explanation=(f"{scheduled.source or 'A scheduler'} reported: {scheduled.message}.",
                                      "The pod's own update (spec.nodeName) has not arrived on the watch yet."),
                         **base)
    if pod.scheduled is not None and reason not in ("", "SchedulingGated"):
        detail = f"PodScheduled={status} {reason}".rstrip()
        return Diagnosis(state=REFUSED if status == "False" else SCHEDULED, headline=detail,
                         explanation=(f"{detail}: {message}" if message else detail,), raw_message=message, **base)
    lines, likely = _no_scheduler(pod, seen, lease, now, scope)
    return Diagnosis(state=NO_SCHEDULER, headline=NO_SCHEDULER_HAS_LOOKED, explanation=tuple(lines), likely=likely,
                     lease=lease if pod.scheduler_name == DEFAULT_SCHEDULER_NAME else None, **base)


def _bound(pod: PodView, nodes: Mapping[str, NodeView], base: dict[str, Any]) -> Diagnosis:
    node_name = pod.node_name
    node = nodes.get(node_name)
    if pod.terminal:
        detail = f" ({pod.status})" if pod.status != pod.phase else ""
        return Diagnosis(state=FINISHED, headline=f"{pod.status} on {node_name}",
                         explanation=(f"The pod was bound to {node_name} and is {pod.phase}{detail}.",), **base)
    if pod.phase not in ("", "Pending"):
        return Diagnosis(state=RUNNING, headline=f"{pod.status} on {node_name}",
                         explanation=(f"spec.nodeName is {node_name}; the kubelet reports phase {pod.phase}.",),
                         **base)
    if node is None:
        return Diagnosis(state=NODE_MISSING, headline=f"bound to missing node {node_name}",
                         explanation=(f"spec.nodeName is {node_name}, but no Node of that name exists, so no kubelet "
                                      "will ever run the pod.",
                                      "The pod garbage collector deletes pods bound to missing nodes (after a short "
                                      "quarantine)."),
                         likely="the pod was bound by hand to a wrong name, or the node was removed.", **base)
    if node.ready != "True":
        condition = f"Ready={node.ready}" if node.has_ready_condition else "no Ready condition"
        return Diagnosis(state=NODE_NOT_READY, headline=f"bound to {node_name}, node NotReady",
                         explanation=(f"spec.nodeName is {node_name}, whose kubelet is not reporting ({condition}).",
                                      "The pod starts when the node recovers; the node lifecycle controller evicts "
                                      "it if the node stays NotReady."),
                         likely=f"node {node_name} is down or unreachable.", **base)
    if pod.status in ("", "Pending"):
        return Diagnosis(state=WAITING_KUBELET, headline=f"bound to {node_name}, waiting for the kubelet",
                         explanation=(f"spec.nodeName is {node_name} (the Binding is written); the kubelet there has "
                                      "not reported on the pod yet.",), **base)
    return Diagnosis(state=WAITING_KUBELET, headline=f"bound to {node_name}, kubelet reports {pod.status}",
                     explanation=(f"spec.nodeName is {node_name} (the Binding is written); the kubelet there is "
                                  f"starting the pod and reports {pod.status}.",), **base)
