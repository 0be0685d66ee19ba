"""The scheduling queue: active, backoff and unschedulable pods. Pure, no I/O.

A small model of kube-scheduler's ``PriorityQueue`` (``pkg/scheduler/backend/queue/scheduling_queue.go``), with
upstream's defaults (``DefaultPodInitialBackoffDuration`` 1 s doubling to ``DefaultPodMaxBackoffDuration`` 10 s,
``DefaultPodMaxInUnschedulablePodsDuration`` 5 minutes), used by observatory's one scheduler
(:mod:`observatory.scheduler.loop`), which runs as ``observatory schedule``, inside the screen and as the lab's
default-scheduler:

* :meth:`SchedulingQueue.add` queues a pod (again when its spec changed) as active; :meth:`pop` hands out the
  active pod with the highest priority, then the one queued earliest, then by key (the PrioritySort plugin's
  ``Less``: ``spec.priority``, then ``QueuedPodInfo.Timestamp``, the time the pod entered the queue, refreshed
  when a failed attempt puts it back, ``AddUnschedulableIfNotPresent``);
* after a failed attempt :meth:`unschedulable` parks the pod with the plugins that rejected it
  (``UnschedulablePlugins``, and ``PendingPlugins``) until a cluster event one of those plugins' QueueingHints
  answers with Queue (:meth:`cluster_changed`, :func:`~.hints.requeue_strategy`), and at most
  :data:`MAX_IN_UNSCHEDULABLE`. Queue from an unschedulable plugin, and the flush, still wait for the backoff,
  ``INITIAL_BACKOFF * 2 ** (attempts - 1)`` capped at ``MAX_BACKOFF``; Queue from a pending plugin does not. An
  update of the parked pod itself goes through the same hints (``PriorityQueue.Update`` with QHint on);
* :meth:`retry` (a failed Binding) waits for the backoff only;
* :meth:`done` takes a pod out while keeping its attempt count, so a later :meth:`add` with the same spec does
  not queue it again (it is being bound, or was decided in a dry run).

Times are seconds on any monotonic clock the caller passes in.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from .clusterevents import WILDCARD, ActionType, ClusterEvent, pod_update_events
from .hints import QUEUE_IMMEDIATELY, QUEUE_SKIP, requeue_strategy

__all__ = ["INITIAL_BACKOFF", "MAX_BACKOFF", "MAX_IN_UNSCHEDULABLE", "SchedulingQueue", "backoff"]

INITIAL_BACKOFF = 1.0
"""Seconds of backoff after the first failed attempt (``DefaultPodInitialBackoffDuration``)."""
MAX_BACKOFF = 10.0
"""The backoff doubles per failed attempt up to this many seconds (``DefaultPodMaxBackoffDuration``)."""
MAX_IN_UNSCHEDULABLE = 300.0
"""Seconds an unschedulable pod waits for a cluster change before it is flushed back to be tried again
(``DefaultPodMaxInUnschedulablePodsDuration``, checked by ``flushUnschedulablePodsLeftover`` every 30 s)."""

Key = tuple[str, str]
ACTIVE, BACKOFF, UNSCHEDULABLE, DONE = "active", "backoff", "unschedulable", "done"


def backoff(attempts: int, initial: float = INITIAL_BACKOFF, maximum: float = MAX_BACKOFF) -> float:
    """Seconds before the next try after ``attempts`` failed ones (0 for none)."""
    if attempts <= 0:
        return 0.0
    return min(initial * 2 ** (attempts - 1), maximum)


def rank(pod: dict[str, Any], queued: float) -> tuple[int, float]:
    """The queue order of a pod queued at ``queued``: priority descending, then queue time ascending."""
    spec = pod.get("spec") or {}
    priority = spec.get("priority")
    priority = priority if isinstance(priority, int) and not isinstance(priority, bool) else 0
    return (-priority, queued)


@dataclass
class _Entry:
    rank: tuple[int, float]
    spec: Any
    state: str = ACTIVE
    attempts: int = 0
    not_before: float = 0.0
    flush_at: float = 0.0
    generation: int = 0
    pod: Any = None
    """The pod as last queued (the QueueingHints read it)."""
    plugins: frozenset[str] = frozenset()
    """``UnschedulablePlugins`` of the last failed attempt."""
    pending: frozenset[str] = frozenset()
    """``PendingPlugins`` of the last failed attempt."""


@dataclass
class SchedulingQueue:
    """Pods waiting for a scheduling attempt, keyed by ``(namespace, name)``."""

    initial_backoff: float = INITIAL_BACKOFF
    max_backoff: float = MAX_BACKOFF
    max_in_unschedulable: float = MAX_IN_UNSCHEDULABLE
    _entries: dict[Key, _Entry] = field(default_factory=dict)
    _active: list[tuple[tuple[int, float], Key, int]] = field(default_factory=list)
    _timed: list[tuple[float, Key, int]] = field(default_factory=list)

    def __len__(self) -> int:
        return sum(1 for e in self._entries.values() if e.state != DONE)

    def __contains__(self, key: object) -> bool:
        entry = self._entries.get(key) if isinstance(key, tuple) else None
        return entry is not None and entry.state != DONE

    def state(self, key: Key) -> str | None:
        """``active``, ``backoff``, ``unschedulable``, ``done`` or None (unknown)."""
        entry = self._entries.get(key)
        return entry.state if entry else None

    def attempts(self, key: Key) -> int:
        entry = self._entries.get(key)
        return entry.attempts if entry else 0

    def _activate(self, key: Key, entry: _Entry) -> None:
        entry.state = ACTIVE
        entry.generation += 1
        heapq.heappush(self._active, (entry.rank, key, entry.generation))

    def _wait_until(self, key: Key, entry: _Entry, state: str, when: float) -> None:
        entry.state = state
        entry.generation += 1
        heapq.heappush(self._timed, (when, key, entry.generation))

    def add(self, key: Key, pod: dict[str, Any], now: float) -> bool:
        """Queue ``pod`` if it is new, or if its spec changed since it was last queued (then it is tried again,
        after any backoff still running). Returns whether the queue changed."""
        spec = pod.get("spec")
        entry = self._entries.get(key)
        if entry is not None and entry.state == UNSCHEDULABLE:
            return self._update_unschedulable(key, entry, pod, now)
        if entry is not None and entry.spec == spec:
            return False
        if entry is None:
            entry = self._entries[key] = _Entry(rank(pod, now), spec)
        else:
            entry.rank, entry.spec = rank(pod, entry.rank[1]), spec
        entry.pod = pod
        if entry.not_before > now:
            self._wait_until(key, entry, BACKOFF, entry.not_before)
        else:
            self._activate(key, entry)
        return True

    def remove(self, key: Key) -> None:
        """Forget the pod (deleted, bound, gated, or no longer ours)."""
        self._entries.pop(key, None)

    def done(self, key: Key) -> None:
        """Out of the queue, but remembered with its spec: its Binding is in flight, or a dry run decided it."""
        entry = self._entries.get(key)
        if entry is not None:
            entry.state = DONE
            entry.generation += 1

    def _update_unschedulable(self, key: Key, entry: _Entry, pod: dict[str, Any], now: float) -> bool:
        """The parked pod itself was updated: keep the new version, and move it when its labels or spec changed in a
        way a rejecting plugin's hint answers with Queue. Returns whether the pod moved."""
        old = entry.pod
        entry.pod = pod
        if old is None or ((old.get("metadata") or {}).get("labels") == (pod.get("metadata") or {}).get("labels")
                           and old.get("spec") == pod.get("spec")):
            return False
        entry.rank, entry.spec = rank(pod, entry.rank[1]), pod.get("spec")
        return any(self._requeue(key, entry, event, old, pod, now) for event in pod_update_events(old, pod))

    def unschedulable(self, key: Key, now: float, plugins: frozenset[str] | set[str] = frozenset(),
                      pending: frozenset[str] | set[str] = frozenset()) -> float:
        """A failed attempt rejected by ``plugins`` (``UnschedulablePlugins``; ``pending``: ``PendingPlugins``): wait
        for a cluster event their hints queue on (or :attr:`max_in_unschedulable`) and the backoff. Returns the
        backoff in seconds."""
        entry = self._entries.get(key)
        if entry is None:
            return 0.0
        entry.plugins, entry.pending = frozenset(plugins), frozenset(pending)
        delay = self._back_off(entry, now)
        entry.flush_at = now + self.max_in_unschedulable
        self._wait_until(key, entry, UNSCHEDULABLE, entry.flush_at)
        return delay

    def retry(self, key: Key, now: float) -> float:
        """A failed Binding: try again after the backoff. Returns the backoff in seconds."""
        entry = self._entries.get(key)
        if entry is None:
            return 0.0
        delay = self._back_off(entry, now)
        self._wait_until(key, entry, BACKOFF, entry.not_before)
        return delay

    def _back_off(self, entry: _Entry, now: float) -> float:
        """Count a failed attempt and set its earliest next try; returns the backoff in seconds."""
        entry.attempts += 1
        entry.rank = (entry.rank[0], now)  # back in the queue: its Timestamp is refreshed
        delay = backoff(entry.attempts, self.initial_backoff, self.max_backoff)
        entry.not_before = now + delay
        return delay

    def cluster_changed(self, now: float, event: ClusterEvent | None = None, old: Any = None,
                        new: Any = None) -> bool:
        """A cluster event (``MoveAllToActiveOrBackoffQueue``): ``event`` changed an object from ``old`` to ``new``
        (None for an Add's old or a Delete's new). Each unschedulable pod whose rejecting plugins' hints answer Queue
        moves on: to active, or to backoff while its backoff runs (Queue from a pending plugin: to active at once).
        ``event`` None is the wildcard: every unschedulable pod moves. Returns whether any pod moved."""
        event = event or ClusterEvent(WILDCARD, ActionType.ALL)
        moved = False
        for key, entry in list(self._entries.items()):
            if entry.state == UNSCHEDULABLE:
                moved = self._requeue(key, entry, event, old, new, now) or moved
        return moved

    def _requeue(self, key: Key, entry: _Entry, event: ClusterEvent, old: Any, new: Any, now: float) -> bool:
        """``requeuePodWithQueueingStrategy`` for one parked pod; returns whether it moved."""
        if entry.state != UNSCHEDULABLE:
            return False
        strategy = requeue_strategy(entry.pod or {}, entry.plugins, entry.pending, event, old, new)
        if strategy == QUEUE_SKIP:
            return False
        if strategy != QUEUE_IMMEDIATELY and entry.not_before > now:
            self._wait_until(key, entry, BACKOFF, entry.not_before)
        else:
            self._activate(key, entry)
        return True

    def rejected_by(self, key: Key) -> tuple[frozenset[str], frozenset[str]]:
        """``(UnschedulablePlugins, PendingPlugins)`` of the pod's last failed attempt (empty when unknown)."""
        entry = self._entries.get(key)
        return (entry.plugins, entry.pending) if entry else (frozenset(), frozenset())

    def _promote(self, now: float) -> None:
        while self._timed and self._timed[0][0] <= now:
            _, key, generation = heapq.heappop(self._timed)
            entry = self._entries.get(key)
            if entry is None or entry.generation != generation:
                continue
            if entry.state == UNSCHEDULABLE and entry.not_before > now:  # flushed, but still backing off
                self._wait_until(key, entry, BACKOFF, entry.not_before)
            else:
                self._activate(key, entry)

    def pop(self, now: float) -> tuple[Key | None, float | None]:
        """The next pod to try now, and None with the time the next waiting pod becomes due (None: nothing waits
        on a timer) when no pod is active. A popped pod is ``done`` until :meth:`unschedulable`, :meth:`retry`,
        :meth:`remove` or an :meth:`add` with a changed spec."""
        self._promote(now)
        while self._active:
            _, key, generation = heapq.heappop(self._active)
            entry = self._entries.get(key)
            if entry is None or entry.generation != generation or entry.state != ACTIVE:
                continue
            entry.state = DONE
            entry.generation += 1
            return key, None
        while self._timed:
            when, key, generation = self._timed[0]
            entry = self._entries.get(key)
            if entry is not None and entry.generation == generation:
                return None, when
            heapq.heappop(self._timed)
        return None, None
