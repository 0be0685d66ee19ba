"""The lab's simulated kube-scheduler (v1.34.1 behaviour, reference §4.3-§4.5).

* It queues unbound, ungated, not-deleting pods whose ``spec.schedulerName`` is one of its profiles
  (``responsibleForPod``), highest priority first, then oldest.
* A scheduling cycle runs the one framework in :mod:`observatory.scheduling` over its informer caches. On success
  the pod is assumed onto the node and a binding cycle POSTs the Binding through the same code path clients use,
  after ``bind_delay`` (so watchers see the Pending frame first). When a hand-bind wins meanwhile, the 409 comes
  back: the pod gets ``PodScheduled=False``/``SchedulerError`` with ``binding rejected: running Bind plugin
  "DefaultBinder": …`` and a FailedScheduling event, and no Scheduled event (``handleBindingCycleError`` →
  ``handleSchedulingFailure`` in ``schedule_one.go``).
* A refused pod gets a FailedScheduling Warning with the FitError text and ``PodScheduled=False``/
  ``Unschedulable``; it waits with backoff (1 s doubling to 10 s) and is retried when nodes or pods change, or
  after five minutes at the latest (``podMaxInUnschedulablePodsDuration``).
* It holds and renews the ``kube-system/kube-scheduler`` Lease, as leader election does.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from observatory import scheduling
from observatory.lab import errors
from observatory.lab.registry import Registry
from observatory.lab.resources import ALL, CORE_V1
from observatory.lab.simulation.events import EventWriter, micro_time
from observatory.lab.simulation.informer import Informer
from observatory.lab.store import now_rfc3339
from observatory.settings import LabSettings

log = logging.getLogger(__name__)

PODS = CORE_V1["pods"]
INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
MAX_IN_UNSCHEDULABLE = 300.0
NOTE_LENGTH_LIMIT = 1024
"""``validation.NoteLengthLimit``: longer event messages are cut and end with `` ...``."""


def truncate_message(message: str) -> str:
    """``truncateMessage`` in schedule_one.go."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    return message[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


@dataclass
class QueuedPod:
    """A pod in the scheduling queue: attempts so far, earliest next try, and whether it waits for a change."""

    attempts: int = 0
    not_before: float = 0.0
    unschedulable: bool = False
    flush_at: float = 0.0


class DefaultScheduler:
    """kube-scheduler with the default profile, answering to every name in ``settings.scheduler_names``."""

    def __init__(self, registry: Registry, events: EventWriter, settings: LabSettings, *, host: str) -> None:
        self.registry = registry
        self.events = events
        self.settings = settings
        self.names = set(settings.scheduler_names)
        self.host = host
        self.pods = Informer(registry.store, "pods", self._on_pod)
        self.nodes = Informer(registry.store, "nodes", self._on_node)
        self.queue: dict[tuple[str, str], QueuedPod] = {}
        self.assumed: dict[tuple[str, str], str] = {}
        """pods decided but not yet seen bound: key -> node"""
        self.snapshot = scheduling.Snapshot()
        self._wake = asyncio.Event()
        self._binds: set[asyncio.Task[None]] = set()
        self.identity = f"{host}_{uuid.uuid4()}"

    # -- queue ---------------------------------------------------------------------------------------------------

    def responsible(self, pod: dict[str, Any]) -> bool:
        """``responsibleForPod`` over every profile: unbound, ungated, not deleting, and one of our names."""
        name = (pod.get("spec") or {}).get("schedulerName") or scheduling.DEFAULT_SCHEDULER_NAME
        return name in self.names and scheduling.responsible_for_pod(pod, name)

    def _on_pod(self, type_: str, pod: dict[str, Any], old: dict[str, Any] | None) -> None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if type_ == "DELETED":
            self.snapshot.remove_pod(pod)
            self.assumed.pop(key, None)
        elif (pod.get("spec") or {}).get("nodeName") or key not in self.assumed:
            self.assumed.pop(key, None)
            self.snapshot.add_pod(pod)  # counts bound, non-terminal pods on their node
        if type_ != "DELETED" and self.responsible(pod):
            if key not in self.queue or (old is not None and old.get("spec") != pod.get("spec")):
                self.queue[key] = QueuedPod()
                self._wake.set()
        else:
            self.queue.pop(key, None)
        if type_ == "DELETED" or (old is not None and (old.get("spec") or {}).get("nodeName")):
            self._cluster_changed()  # a pod leaving a node may free room for the unschedulable ones

    def _on_node(self, type_: str, node: dict[str, Any], old: dict[str, Any] | None) -> None:
        if type_ == "DELETED":
            self.snapshot.remove_node(node["metadata"]["name"])
        else:
            self.snapshot.set_node(node)
        self._cluster_changed()

    def _cluster_changed(self) -> None:
        for queued in self.queue.values():
            queued.unschedulable = False
        self._wake.set()

    def _next(self, now: float) -> tuple[tuple[str, str] | None, float | None]:
        """The next pod to try now (priority desc, then creation) and, if none, when one becomes due."""
        best, best_rank, due = None, None, None
        for key, queued in self.queue.items():
            if queued.unschedulable and now >= queued.flush_at:
                queued.unschedulable = False
            ready_at = queued.flush_at if queued.unschedulable else queued.not_before
            if queued.unschedulable or queued.not_before > now:
                due = ready_at if due is None else min(due, ready_at)
                continue
            pod = self.pods.cache.get(key)
            if pod is None:
                continue
            rank = (-int((pod.get("spec") or {}).get("priority") or 0), pod["metadata"].get("creationTimestamp", ""),
                    key)
            if best_rank is None or rank < best_rank:
                best, best_rank = key, rank
        return best, due

    # -- run -----------------------------------------------------------------------------------------------------

    async def run(self) -> None:
        for node in self.nodes.start():
            self.snapshot.set_node(node)
        for pod in self.pods.start():
            self._on_pod("ADDED", pod, None)
        try:
            await asyncio.gather(self.pods.run(), self.nodes.run(), self._schedule_loop(), self._hold_lease())
        finally:
            for task in list(self._binds):
                task.cancel()

    async def _schedule_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            key, due = self._next(loop.time())
            if key is None:
                self._wake.clear()
                timeout = None if due is None else max(0.0, due - loop.time())
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout)
                except TimeoutError:
                    pass
                continue
            self.schedule_one(key, loop.time())
            await asyncio.sleep(0)

    def schedule_one(self, key: tuple[str, str], now: float) -> None:
        """One scheduling cycle for the queued pod ``key``."""
        queued = self.queue.pop(key)
        pod = self.pods.cache.get(key)
        if pod is None or not self.responsible(pod):
            return
        decision = scheduling.schedule_one(pod, self.snapshot)
        if decision.node is None:
            self._record_failure(pod, decision.condition_reason or "Unschedulable", decision.message or "")
            queued.attempts += 1
            queued.unschedulable = True
            queued.not_before = now + min(INITIAL_BACKOFF * 2 ** (queued.attempts - 1), MAX_BACKOFF)
            queued.flush_at = now + MAX_IN_UNSCHEDULABLE
            self.queue[key] = queued
            return
        self.snapshot.assume(pod, decision.node)
        self.assumed[key] = decision.node
        task = asyncio.get_running_loop().create_task(self._bind(pod, decision.node))
        self._binds.add(task)
        task.add_done_callback(self._binds.discard)

    async def _bind(self, pod: dict[str, Any], node: str) -> None:
        """The binding cycle: wait ``bind_delay``, POST the Binding, then record the outcome."""
        await asyncio.sleep(self.settings.bind_delay)
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        profile = (pod.get("spec") or {}).get("schedulerName", "default-scheduler")
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": meta["name"], "namespace": key[0], "uid": meta.get("uid", "")},
                "target": {"kind": "Node", "name": node}}
        try:
            self.registry.bind(key[0], meta["name"], body)
        except errors.StatusError as exc:
            if self.assumed.pop(key, None) is not None:
                self.snapshot.remove_pod(pod)  # forget the assumption; the informer recounts the real state
                current = self.pods.cache.get(key)
                if current is not None:
                    self.snapshot.add_pod(current)
            if exc.code == 404:
                return  # the pod is gone
            self._record_failure(pod, "SchedulerError", f'binding rejected: running Bind plugin "DefaultBinder": '
                                                        f"{exc.message}")
            return
        self.events.scheduler_event(pod, "Normal", "Scheduled", "Binding",
                                    scheduling.scheduled_message(key[0], meta["name"], node),
                                    controller=profile, instance=f"{profile}-{self.host}")

    def _record_failure(self, pod: dict[str, Any], reason: str, message: str) -> None:
        """FailedScheduling event plus the PodScheduled=False condition (``handleSchedulingFailure``)."""
        profile = (pod.get("spec") or {}).get("schedulerName", "default-scheduler")
        self.events.scheduler_event(pod, "Warning", "FailedScheduling", "Scheduling", truncate_message(message),
                                    controller=profile, instance=f"{profile}-{self.host}")
        meta = pod["metadata"]
        current = self.registry.store.get("pods", meta.get("namespace", ""), meta["name"])
        if current is None or current["metadata"].get("uid") != meta.get("uid"):
            return
        status = copy.deepcopy(current.get("status") or {})
        conditions = status.get("conditions") or []
        condition = {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                     "lastTransitionTime": now_rfc3339(), "reason": reason, "message": message}
        for i, cond in enumerate(conditions):
            if cond.get("type") == "PodScheduled":
                if cond.get("status") == "False":
                    condition["lastTransitionTime"] = cond.get("lastTransitionTime") or condition["lastTransitionTime"]
                conditions[i] = condition
                break
        else:
            conditions.append(condition)
        status["conditions"] = conditions
        try:
            self.registry.update_status(PODS, meta.get("namespace", ""), meta["name"], {"metadata": {}, "status": status})
        except errors.StatusError:
            pass

    async def _hold_lease(self) -> None:
        """Acquire and renew ``kube-system/kube-scheduler`` every 2 s (leaseDurationSeconds 15)."""
        leases = ALL["leases"]
        acquired = micro_time()
        while True:
            spec = {"holderIdentity": self.identity, "leaseDurationSeconds": 15, "acquireTime": acquired,
                    "renewTime": micro_time(), "leaseTransitions": 0}
            current = self.registry.store.get("leases", "kube-system", "kube-scheduler")
            try:
                if current is None:
                    self.registry.create(leases, "kube-system", {
                        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": {"name": "kube-scheduler"}, "spec": spec})
                else:
                    if (current.get("spec") or {}).get("holderIdentity") != self.identity:
                        spec["leaseTransitions"] = int((current.get("spec") or {}).get("leaseTransitions") or 0) + 1
                    self.registry.update(leases, "kube-system", "kube-scheduler", {**current, "spec": spec})
            except errors.StatusError:
                pass
            await asyncio.sleep(2.0)
