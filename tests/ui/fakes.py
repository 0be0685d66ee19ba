"""A recorded, deterministic Source for snapshots: fixed objects, fixed times, exchanges as the lab answers them.

Bodies and status texts are the lab's (reference §1.4, §1.7); uids, resourceVersions and times are pinned so an
SVG snapshot is the same on every run. The ``refusals`` scenario comes with each refused pod's PodScheduled
condition and FailedScheduling event as kube-scheduler v1.34.1 writes them (the messages quoted in the scenario's
YAML), and ``read_lease`` answers with kube-scheduler's Lease as a kind cluster holds it.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

from observatory.lab.scenarios import load_scenario
from observatory.model.access import AccessReview
from observatory.model.commands import CommandsContext
from observatory.model.deltas import Delta, Relisted, Upserted, WatchState
from observatory.model.records import BindingExchange, LeaseView
from observatory.model.source import Capabilities

FROZEN = datetime(2026, 11, 29, 9, 30, 0, tzinfo=UTC)
CREATED = "2026-11-29T09:28:00Z"
REFUSED_AT = "2026-11-29T09:28:30.000000Z"
LAST_REFUSED_AT = "2026-11-29T09:29:30.000000Z"

REFUSALS = {
    "too-much-cpu": "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
                    "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes "
                    "are available: 2 Preemption is not helpful for scheduling.",
    "no-ssd": "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had "
              "untolerated taint {node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: "
              "0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    "needs-the-tainted-node": "0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint "
                              "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: "
                              "0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption "
                              "is not helpful for scheduling.",
}
"""What kube-scheduler v1.34.1 writes for each pod of the ``refusals`` scenario (quoted in refusals.yaml)."""

SCHEDULER_LEASE = LeaseView("kube-system", "kube-scheduler", holder="pair-control-plane_7f3c2a9e-1b4d-4c8e-9f2a",
                            renewed=FROZEN - timedelta(seconds=3), duration_seconds=15)
"""kube-scheduler's leader Lease on a kind cluster: held by ``<node>_<uuid>``, renewed every 2 s, 15 s long."""


def frozen_clock() -> datetime:
    return FROZEN


class RecordedSource:
    """The ``manual-binding`` scenario as a lab would list it, answering binds like kube-apiserver."""

    context = "observatory-lab"
    server = "http://127.0.0.1:6443"
    lab = True

    def __init__(self, namespace: str | None = None, read_only: bool = False, *, pods: bool = True,
                 scenario: str = "manual-binding", lease: LeaseView | None = SCHEDULER_LEASE) -> None:
        self.namespace = namespace
        self.read_only = read_only
        self.rv = 100
        self.lease = lease
        self.lease_reads: list[tuple[str, str]] = []
        self.objects: dict[str, dict[str, dict[str, Any]]] = {"pods": {}, "nodes": {}, "events": {}}
        for i, manifest in enumerate(load_scenario(scenario, now=FROZEN - timedelta(minutes=2))):
            kind = {"Pod": "pods", "Node": "nodes"}.get(manifest["kind"])
            if kind is None or (kind == "pods" and not pods):
                continue
            obj = copy.deepcopy(manifest)
            meta = obj["metadata"]
            meta.update(uid=f"00000000-0000-4000-8000-{i:012d}", resourceVersion=str(self.rv),
                        creationTimestamp=CREATED)
            if kind == "pods":
                obj.setdefault("spec", {}).setdefault("schedulerName", "default-scheduler")
                obj.setdefault("status", {"phase": "Pending", "qosClass": "BestEffort"})
                if meta["name"] in REFUSALS:
                    self._refuse(obj, REFUSALS[meta["name"]])
            self.objects[kind][f"{meta.get('namespace', '')}/{meta['name']}"] = obj
        self.queues: dict[str, asyncio.Queue[Delta]] = {kind: asyncio.Queue() for kind in self.objects}

    def _refuse(self, pod: dict[str, Any], message: str) -> None:
        """What kube-scheduler leaves on a pod it cannot place: the PodScheduled condition and a FailedScheduling
        event from its events/v1 recorder, repeated four times (a series)."""
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                        "lastTransitionTime": "2026-11-29T09:28:30Z", "reason": "Unschedulable",
                                        "message": message}]
        meta = pod["metadata"]
        name = f"{meta['name']}.187c5d2e{len(self.objects['events']):08x}"
        self.objects["events"][f"{meta['namespace']}/{name}"] = {
            "metadata": {"name": name, "namespace": meta["namespace"], "uid": f"e0000000-0000-4000-8000-{name[-12:]}",
                         "resourceVersion": str(self.rv), "creationTimestamp": "2026-11-29T09:28:30Z"},
            "involvedObject": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"],
                               "uid": meta["uid"], "apiVersion": "v1", "resourceVersion": str(self.rv)},
            "reason": "FailedScheduling", "message": message, "source": {}, "firstTimestamp": None,
            "lastTimestamp": None, "type": "Warning", "eventTime": REFUSED_AT, "action": "Scheduling",
            "series": {"count": 4, "lastObservedTime": LAST_REFUSED_AT},
            "reportingComponent": "default-scheduler", "reportingInstance": "default-scheduler-pair-control-plane"}

    async def read_lease(self, namespace: str, name: str) -> LeaseView:
        """The recorded Lease for kube-system/kube-scheduler; any other, or none recorded: not found."""
        self.lease_reads.append((namespace, name))
        if self.lease is not None and (namespace, name) == (self.lease.namespace, self.lease.name):
            return self.lease
        return LeaseView.unreadable(namespace, name, "not found")

    async def stream(self, kind: str) -> AsyncIterator[Delta]:
        yield WatchState(kind, "connecting")
        yield Relisted(kind, tuple(self.objects[kind].values()), str(self.rv))
        yield WatchState(kind, "live")
        while True:
            yield await self.queues[kind].get()

    secrets: frozenset[str] = frozenset()
    """The lab without a token has no credential."""

    def commands_context(self) -> CommandsContext:
        """As ClusterSource gives it for the lab's kubeconfig: no credential, plain HTTP, the lab's context."""
        return CommandsContext(server=self.server, context=self.context, auth="none")

    def with_namespace(self, namespace: str | None) -> RecordedSource:
        self.namespace = namespace
        return self

    home_namespace = "default"

    def capabilities(self) -> Capabilities:
        """Access reviews, as ClusterSource offers them."""
        return Capabilities(access=self)

    async def close(self) -> None:
        """Nothing to release."""

    async def access_review(self, verb: str, resource: str, subresource: str = "",
                            namespace: str = "") -> AccessReview:
        """Everything is allowed, as a lab without RBAC answers (AlwaysAllow: no reason)."""
        return AccessReview(verb, resource, subresource, namespace, allowed=True)

    async def bind(self, namespace: str, name: str, node: str, uid: str | None = None) -> BindingExchange:
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": namespace},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        pod = self.objects["pods"][f"{namespace}/{name}"]
        assigned = pod["spec"].get("nodeName")
        if assigned:
            message = (f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already assigned '
                       f'to node "{assigned}"')
            status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                      "reason": "Conflict", "details": {"name": name, "kind": "pods/binding"}, "code": 409}
            code, reason = 409, "Conflict"
        else:
            status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
            code, reason = 201, "Created"
            self.rv += 1
            pod = copy.deepcopy(pod)
            pod["spec"]["nodeName"] = node
            pod["metadata"]["resourceVersion"] = str(self.rv)
            pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                            "lastTransitionTime": "2026-11-29T09:30:00Z"}]
            self.objects["pods"][f"{namespace}/{name}"] = pod
            self.queues["pods"].put_nowait(Upserted("pods", pod, "MODIFIED"))
        response = (json.dumps(status, separators=(",", ":")) + "\n").encode()
        return BindingExchange(
            pod=f"{namespace}/{name}", node=node, method="POST",
            path=f"/api/v1/namespaces/{namespace}/pods/{name}/binding",
            request_headers=(("Accept", "application/json"), ("Content-Type", "application/json"),
                             ("User-Agent", "observatory")),
            request_body=json.dumps(body, separators=(",", ":")).encode(), http_version="HTTP/1.1", status=code,
            reason=reason,
            response_headers=(("Audit-Id", "5f0c6f9e-2f0a-4b7e-9d43-0d6b7d1c2e11"),
                              ("Cache-Control", "no-cache, private"), ("Content-Type", "application/json"),
                              ("Date", "Sun, 29 Nov 2026 09:30:00 GMT"), ("Content-Length", str(len(response)))),
            response_body=response, sent_at=FROZEN, elapsed_ms=3.0)
