"""Simulated pod garbage collector: pods bound to nodes that do not exist are failed, then deleted.

kube-controller-manager's PodGC (``pkg/controller/podgc/gc_controller.go`` ``gcOrphaned``) waits out a quarantine
(40 s upstream) to be sure the node is really gone, then marks the pod Failed with the condition
``DisruptionTarget``/True, reason ``DeletionByPodGC``, message ``PodGC: node no longer exists``, and force-deletes
it. It records no Event (reference §1.3 point 9).

It writes as kube-controller-manager's ``pod-garbage-collector`` service account. Upstream marks the pod Failed by
server-side apply (``markFailedAndDeletePodWithCondition``: ``ApplyStatus`` with ``Force``), which the lab does not
serve; the lab sends the same status as a PUT of ``pods/NAME/status``, then the ``DELETE`` with grace period 0.
"""

from __future__ import annotations

import asyncio
import copy
import functools
from typing import Any

from observatory.lab import errors
from observatory.lab.resources import CORE_V1
from observatory.lab.simulation.client import Client
from observatory.lab.simulation.informer import Informer
from observatory.lab.store import now_rfc3339
from observatory.settings import LabSettings

DISRUPTION_CONDITION = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
                        "message": "PodGC: node no longer exists"}


class PodGC:
    """Fails and deletes pods whose ``spec.nodeName`` names no Node, after the quarantine."""

    def __init__(self, registry: Client, settings: LabSettings) -> None:
        self.registry = registry
        self.settings = settings
        self.pods = Informer(registry.store, "pods", self._on_pod)
        self.nodes = Informer(registry.store, "nodes", self._on_node)
        self._pending: dict[tuple[str, str], asyncio.Task[None]] = {}

    async def run(self) -> None:
        self.nodes.start()
        self.pods.start()
        self._sweep()
        try:
            await asyncio.gather(self.pods.run(), self.nodes.run())
        finally:
            for task in self._pending.values():
                task.cancel()

    def _on_pod(self, type_: str, pod: dict[str, Any], old: dict[str, Any] | None) -> None:
        """A changed pod is checked alone (a sweep per pod change is quadratic at scale)."""
        if type_ != "DELETED":
            meta = pod.get("metadata") or {}
            self._check((meta.get("namespace", ""), meta.get("name", "")), pod)

    def _on_node(self, type_: str, node: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Only a node going away can orphan pods that were fine."""
        if type_ == "DELETED":
            self._sweep()

    def _orphaned(self, pod: dict[str, Any]) -> bool:
        node = (pod.get("spec") or {}).get("nodeName")
        return bool(node) and ("", node) not in self.nodes.cache

    def _sweep(self) -> None:
        for key, pod in list(self.pods.cache.items()):
            self._check(key, pod)

    def _check(self, key: tuple[str, str], pod: dict[str, Any]) -> None:
        if key not in self._pending and self._orphaned(pod):
            task = asyncio.get_running_loop().create_task(self._collect(key))
            self._pending[key] = task
            task.add_done_callback(functools.partial(self._forget, key))

    def _forget(self, key: tuple[str, str], _task: asyncio.Task[None]) -> None:
        self._pending.pop(key, None)

    async def _collect(self, key: tuple[str, str]) -> None:
        await asyncio.sleep(self.settings.podgc_quarantine)
        pod = self.registry.store.get("pods", *key)
        if pod is None or not self._orphaned(pod):
            return
        pods = CORE_V1["pods"]
        status = copy.deepcopy(pod.get("status") or {})
        if status.get("phase") not in ("Succeeded", "Failed"):
            status["phase"] = "Failed"
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
        conditions.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                           "lastTransitionTime": now_rfc3339(), "reason": DISRUPTION_CONDITION["reason"],
                           "message": DISRUPTION_CONDITION["message"]})
        status["conditions"] = conditions
        try:
            self.registry.update_status(pods, key[0], key[1], {"metadata": {}, "status": status})
            self.registry.delete(pods, key[0], key[1], grace_period=0)
        except errors.StatusError:
            pass
