"""What one scheduling attempt of ``observatory schedule`` (or the TUI's in-process scheduler) decided, as data.

A :class:`SchedulingDecision` is made by :mod:`observatory.scheduler` once per attempt, when the outcome is known:
after the Binding's answer (``bound``, ``conflict``, ``error``), when no node fits (``unschedulable``), or at once in
dry-run mode (``dry-run``). Pure and frozen: the command line prints it as one line (:meth:`summary`), a pane shows
its table. No I/O, no Textual, no kubernetes-asyncio.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .exchange import BindingExchange

__all__ = ["OUTCOMES", "SchedulerStopped", "SchedulingDecision"]

BOUND, CONFLICT, UNSCHEDULABLE, DRY_RUN, ERROR, SKIPPED = (
    "bound", "conflict", "unschedulable", "dry-run", "error", "skipped")
OUTCOMES = (BOUND, CONFLICT, UNSCHEDULABLE, DRY_RUN, ERROR, SKIPPED)
"""``bound``: the Binding got a 2xx. ``conflict``: a 409 (another binder won; final, not retried). ``unschedulable``:
no node fits (the FitError message). ``dry-run``: a node was chosen and nothing was sent. ``error``: the Binding
failed otherwise (transport failure, 5xx, another 4xx), or the pod cannot be scheduled at all (invalid quantities);
the pod is retried with backoff unless it is gone. ``skipped``: the pod was being deleted when its turn came
(upstream's ``skip schedule deleting pod``)."""


class SchedulerStopped(Exception):
    """The scheduler stopped for good while running: it lost its leader-election Lease (kube-scheduler exits then).
    ``str()`` is one readable sentence."""


@dataclass(frozen=True, slots=True)
class SchedulingDecision:
    """One scheduling attempt for one pod.

    ``pod``: ``namespace/name``; ``uid``: the pod's uid; ``scheduler_name``: the schedulerName served;
    ``policy``: the node-choosing policy (``least-allocated`` …); ``attempt``: 1 for the first try of this pod,
    counting up on each retry. ``verdicts``: every node's filter verdict, in node order: ``""`` when the node fits,
    else the reasons the first rejecting filter gave, joined with ``", "`` (``"Insufficient cpu"``).
    ``scores``: the policy's score per feasible node, higher wins (least-/most-allocated: the weighted total of the
    score plugins; spread: minus the number of pods already on the node; first-fit and random: none).
    ``plugin_scores``: node -> score plugin -> normalised score (0-100) for the best few nodes (five), for the
    policies that score with plugins.
    ``node``: the chosen node, or None. ``message``: the FitError text (``0/2 nodes are available: …``) for
    ``unschedulable``, the error for ``error``, the Status message of a 409 for ``conflict``, else None.
    ``exchange``: the Binding's HTTP exchange, None when none was sent. ``outcome``: one of :data:`OUTCOMES`.
    ``time``: when the outcome was known (aware UTC). ``dry_run``: nothing was written (no Binding, event or status).
    ``cycle``: the scheduling cycle's sequence number in its scheduler run (1 for the first pod popped from the
    queue; 0 when unknown); ``started``: when that cycle started (aware UTC; None when unknown). A failure is known at
    once and a Binding only when its answer comes back, so decisions arrive out of queue order; ordering by
    ``(started, cycle)`` (:attr:`queue_order`) restores the order in which the pods were taken from the queue.
    """

    pod: str
    uid: str
    scheduler_name: str
    policy: str
    attempt: int
    verdicts: Mapping[str, str]
    scores: Mapping[str, int]
    node: str | None
    message: str | None
    exchange: BindingExchange | None
    outcome: str
    time: datetime
    plugin_scores: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    dry_run: bool = False
    cycle: int = 0
    started: datetime | None = None

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome {self.outcome!r} is not one of {', '.join(OUTCOMES)}")

    @property
    def feasible(self) -> tuple[str, ...]:
        """The nodes that passed every filter, in node order."""
        return tuple(node for node, reason in self.verdicts.items() if not reason)

    @property
    def queue_order(self) -> tuple[datetime, int]:
        """The sort key of queue order: when the scheduling cycle started (else when the outcome was known), then
        the cycle number."""
        return (self.started or self.time, self.cycle)

    def top_scores(self, n: int = 3) -> tuple[tuple[str, int], ...]:
        """The ``n`` best ``(node, score)`` pairs, best first (ties by node name)."""
        return tuple(sorted(self.scores.items(), key=lambda item: (-item[1], item[0]))[:n])

    def summary(self) -> str:
        """One line for a person, e.g. ``bound sched-lab/web -> pair-worker (1/2 feasible; top scores: pair-worker
        265) 201 Created in 4 ms``, with ``attempt N; `` first in the parenthesis from the second attempt on; for
        ``--policy spread`` the feasible nodes' pod counts, fewest first (``pods on node: pair-worker 0, …``); the
        FitError text verbatim for ``unschedulable``."""
        nodes = len(self.verdicts)
        parts = [f"attempt {self.attempt}"] if self.attempt > 1 else []
        parts.append(f"{len(self.feasible)}/{nodes} feasible")
        if self.scores and self.policy == "spread":  # spread scores minus the pods on the node: fewest first
            parts.append("pods on node: " + ", ".join(f"{node} {-score}" for node, score in self.top_scores()))
        elif self.scores:
            parts.append("top scores: " + ", ".join(f"{node} {score}" for node, score in self.top_scores()))
        else:
            parts.append(f"policy {self.policy}")
        why = "; ".join(parts)
        attempt = f" (attempt {self.attempt})" if self.attempt > 1 else ""
        ex = self.exchange
        if self.outcome == BOUND and ex is not None:
            return f"bound {self.pod} -> {self.node} ({why}) {ex.status} {ex.reason} in {ex.elapsed_ms:.0f} ms"
        if self.outcome == DRY_RUN:
            return f"would bind {self.pod} -> {self.node} ({why}) [dry run: nothing sent]"
        if self.outcome == CONFLICT:
            status = f"{ex.status} {ex.reason}".strip() if ex is not None else "409 Conflict"
            return (f"{status} {self.pod} -> {self.node}: {self.message or 'conflict'} "
                    "(another binder won; not retried, no Scheduled event)")
        if self.outcome == UNSCHEDULABLE:
            note = " [dry run: not written]" if self.dry_run else ""
            return f"FailedScheduling {self.pod}{attempt}: {self.message}{note}"
        if self.outcome == SKIPPED:
            return f"skipped {self.pod}: {self.message}"
        target = f" -> {self.node}" if self.node else ""
        return f"error {self.pod}{target}{attempt}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: the fields above, ``time`` and ``cycleStarted`` as RFC 3339, the exchange as status,
        reason and ``elapsed_ms`` (its bodies stay out)."""
        ex = self.exchange
        return {"pod": self.pod, "uid": self.uid, "schedulerName": self.scheduler_name, "policy": self.policy,
                "attempt": self.attempt, "outcome": self.outcome, "node": self.node, "message": self.message,
                "feasible": len(self.feasible), "nodes": len(self.verdicts), "scores": dict(self.scores),
                "dryRun": self.dry_run, "time": self.time.isoformat().replace("+00:00", "Z"), "cycle": self.cycle,
                "cycleStarted": None if self.started is None else self.started.isoformat().replace("+00:00", "Z"),
                "binding": None if ex is None else {"status": ex.status, "reason": ex.reason,
                                                    "elapsedMs": round(ex.elapsed_ms, 3), "error": ex.error}}
