"""Realistic API JSON for the model tests, recorded from the lab in-process (no HTTP, no fixed sleeps).

* :func:`busy` — the ``busy`` scenario as a cluster would serve it: objects created through the lab's registry
  (uid, resourceVersion, creationTimestamp, defaults), pod statuses written as a kubelet would (PUT .../status),
  and the FailedScheduling events and PodScheduled=False conditions of the pods it cannot place, built by the
  scheduler's own code (:mod:`observatory.scheduler.objects`: the events.k8s.io/v1 Event and the status patch) and
  written through the lab's registry as its API handlers write them; kubelet events for one running pod.
  Statuses and events are the lab's and the scheduler's, not hand-made.
* :func:`manual_binding` — a recorded watch stream: the ``manual-binding`` scenario with the lab's scheduler and
  kubelets running; ``sched-lab/manual`` is bound to ``pair-worker`` through the registry (as a Binding POST is),
  the kubelet starts it, then a second Binding to ``pair-control-plane`` is refused with 409.

Every call returns fresh copies (JSON round trip), so tests may change what they get.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from observatory import scheduling
from observatory.embedded import EmbeddedLab
from observatory.lab import errors, events_v1_api
from observatory.lab.resources import CORE_V1
from observatory.lab.scenarios import load_scenario
from observatory.lab.simulation.events import EventWriter
from observatory.scheduler.objects import condition_patch, scheduler_event
from observatory.scheduling.messages import truncate_message
from observatory.settings import LabSettings

KINDS = ("pods", "nodes", "events")
API_ONLY = {"scheduler": False, "kubelet": False, "podgc": False, "node_lifecycle": False}


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _lab(scenario: str, **settings: Any) -> EmbeddedLab:
    """A lab to load (its store only) or to start: a started one writes its kubeconfig to a fresh temporary folder."""
    kubeconfig = Path(tempfile.mkdtemp(prefix="observatory-model-")) / "kubeconfig"
    return EmbeddedLab(LabSettings(**{**API_ONLY, **settings}), scenario=scenario, kubeconfig_path=kubeconfig)


@dataclass
class Cluster:
    """Lists as served: ``pods``, ``nodes``, ``events`` (JSON dicts), and ``resource_version`` of the store."""

    pods: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    events: list[dict[str, Any]]
    resource_version: str

    def pod(self, key: str) -> dict[str, Any]:
        """The pod ``namespace/name``."""
        ns, name = key.split("/")
        return next(p for p in self.pods if p["metadata"]["namespace"] == ns and p["metadata"]["name"] == name)

    def events_about(self, key: str) -> list[dict[str, Any]]:
        ns, name = key.split("/")
        return [e for e in self.events
                if e["involvedObject"].get("namespace") == ns and e["involvedObject"].get("name") == name]


@functools.cache
def _busy() -> Cluster:
    server = _lab("busy")
    server.load()
    registry = server.registry
    for manifest in load_scenario("busy"):
        if manifest["kind"] == "Pod" and manifest.get("status"):
            meta = manifest["metadata"]
            registry.update_status(CORE_V1["pods"], meta["namespace"], meta["name"],
                                   {"metadata": {}, "status": manifest["status"]})
    writer = EventWriter(registry)
    nodes = list(server.store.iter("nodes"))
    pods = list(server.store.iter("pods"))
    snapshot = scheduling.Snapshot(nodes, pods)
    for pod in pods:
        if not scheduling.responsible_for_pod(pod, scheduling.DEFAULT_SCHEDULER_NAME):
            continue
        decision = scheduling.schedule_one(pod, snapshot)
        if decision.node is None:
            _record_failure(registry, pod, decision.condition_reason or "Unschedulable", decision.message or "")
    web = server.store.get("pods", "team-web", "web-7d9f8b6c5-x2k4p")
    assert web is not None
    node = web["spec"]["nodeName"]
    writer.kubelet_event(web, node, "Pulling", 'Pulling image "nginx:1.29.3"', container="web")
    writer.kubelet_event(web, node, "Pulled", 'Container image "nginx:1.29.3" already present on machine',
                         container="web")
    writer.kubelet_event(web, node, "Created", "Created container: web", container="web")
    writer.kubelet_event(web, node, "Started", "Started container web", container="web")
    store = server.store
    return Cluster(*(list(store.iter(kind)) for kind in KINDS), str(store.resource_version))


def _record_failure(registry: Any, pod: dict[str, Any], reason: str, message: str) -> None:
    """What the scheduler's ``handleSchedulingFailure`` sends, applied as the lab's handlers apply it: the
    events.k8s.io/v1 FailedScheduling Event (POST), then the PodScheduled=False strategic merge patch of the status."""
    meta = pod["metadata"]
    event = scheduler_event(pod, "Warning", "FailedScheduling", "Scheduling", truncate_message(message),
                            controller="default-scheduler", instance="default-scheduler-busy-control-plane")
    events_v1_api.create(registry, meta["namespace"], event)
    patch = condition_patch(pod, reason, message)
    if patch is not None:
        registry.patch(CORE_V1["pods"], meta["namespace"], meta["name"], "application/strategic-merge-patch+json",
                       json.dumps(patch).encode(), subresource="status")


def busy() -> Cluster:
    """The ``busy`` scenario as served, with the scheduler's failures and some kubelet events recorded."""
    return _copy_cluster(_busy())


def _copy_cluster(cluster: Cluster) -> Cluster:
    return Cluster(_copy(cluster.pods), _copy(cluster.nodes), _copy(cluster.events), cluster.resource_version)


@dataclass
class Recording:
    """``initial``: the lists before anything happened; ``changes``: the watch stream after, as
    ``(resourceVersion, type, resource, object)``; ``conflict``: the Status of the refused second Binding."""

    initial: Cluster
    changes: list[tuple[str, str, str, dict[str, Any]]]
    conflict: dict[str, Any]


async def _wait_for(predicate, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise TimeoutError("the lab did not reach the expected state")
        await asyncio.sleep(0.01)


async def _record_manual_binding() -> Recording:
    server = _lab("manual-binding", scheduler=True, kubelet=True, kubelet_start_seconds=0.02, bind_delay=0.0)
    store, registry = server.store, server.registry
    changes: list[tuple[str, str, str, dict[str, Any]]] = []
    recording = False
    store.listeners.append(lambda ch: changes.append((str(ch.rv), ch.type, ch.resource, copy.deepcopy(ch.obj)))
                           if recording and ch.resource in KINDS else None)
    await server.start()
    try:
        # the scheduler has nothing to do for nobody-at-all: wait until it leads (its Lease), then record
        await _wait_for(lambda: server.scheduler is not None and server.scheduler.elector is not None
                        and server.scheduler.elector.leading.is_set())
        initial = _copy_cluster(Cluster(*(list(store.iter(kind)) for kind in KINDS), str(store.resource_version)))
        recording = True
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual"},
                   "target": {"kind": "Node", "name": "pair-worker"}}
        registry.bind("sched-lab", "manual", binding)

        def started() -> bool:
            pod = store.get("pods", "sched-lab", "manual")
            reasons = {e["reason"] for e in store.iter("events", "sched-lab")}
            return pod is not None and pod["status"].get("phase") == "Running" and "Started" in reasons

        await _wait_for(started)
        again = {**binding, "target": {"kind": "Node", "name": "pair-control-plane"}}
        try:
            registry.bind("sched-lab", "manual", again)
        except errors.StatusError as exc:
            conflict = exc.status
        else:  # pragma: no cover - the lab must refuse
            raise AssertionError("the second Binding was accepted")
    finally:
        recording = False
        await server.stop()
    return Recording(initial, _copy(changes), _copy(conflict))


@functools.cache
def _manual_binding() -> Recording:
    return asyncio.run(_record_manual_binding())


def manual_binding() -> Recording:
    """The recorded manual-binding session (recorded once per test run)."""
    rec = _manual_binding()
    return Recording(_copy_cluster(rec.initial), _copy(rec.changes), _copy(rec.conflict))
