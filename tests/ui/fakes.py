"""A recorded, deterministic Source for snapshots: fixed objects, fixed times, exchanges as the lab answers them.

Bodies and status texts are the lab's (reference §1.4, §1.7); uids, resourceVersions and times are pinned so an
SVG snapshot is the same on every run.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

from observatory.lab.scenarios import load_scenario
from observatory.model.deltas import Delta, Relisted, Upserted, WatchState
from observatory.model.records import BindingExchange

FROZEN = datetime(2026, 11, 29, 9, 30, 0, tzinfo=UTC)
CREATED = "2026-11-29T09:28:00Z"


def frozen_clock() -> datetime:
    return FROZEN


class RecordedSource:
    """The ``manual-binding`` scenario as a lab would list it, answering binds like kube-apiserver."""

    context = "observatory-lab"
    server = "http://127.0.0.1:6443"
    lab = True

    def __init__(self, namespace: str | None = None, read_only: bool = False, *, pods: bool = True) -> None:
        self.namespace = namespace
        self.read_only = read_only
        self.rv = 100
        self.objects: dict[str, dict[str, dict[str, Any]]] = {"pods": {}, "nodes": {}, "events": {}}
        for i, manifest in enumerate(load_scenario("manual-binding", now=FROZEN - timedelta(minutes=2))):
            kind = {"Pod": "pods", "Node": "nodes"}.get(manifest["kind"])
            if kind is None or (kind == "pods" and not pods):
                continue
            obj = copy.deepcopy(manifest)
            meta = obj["metadata"]
            meta.update(uid=f"00000000-0000-4000-8000-{i:012d}", resourceVersion=str(self.rv),
                        creationTimestamp=CREATED)
            if kind == "pods":
                obj.setdefault("spec", {}).setdefault("schedulerName", "default-scheduler")
                obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
            self.objects[kind][f"{meta.get('namespace', '')}/{meta['name']}"] = obj
        self.queues: dict[str, asyncio.Queue[Delta]] = {kind: asyncio.Queue() for kind in self.objects}

    async def stream(self, kind: str) -> AsyncIterator[Delta]:
        yield WatchState(kind, "connecting")
        yield Relisted(kind, tuple(self.objects[kind].values()), str(self.rv))
        yield WatchState(kind, "live")
        while True:
            yield await self.queues[kind].get()

    def with_namespace(self, namespace: str | None) -> RecordedSource:
        self.namespace = namespace
        return self

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
