"""A recorded Source with an audit feed: the ``manual-binding`` scenario, and the writers of exercise 1 as
kube-apiserver's audit log names them (``audit.k8s.io/v1`` Events, stages ``RequestReceived`` then
``ResponseComplete``, level ``RequestResponse``).

* :meth:`AuditedSource.kubectl_bind`: the student's ``kubectl create --raw …/pods/manual/binding -f binding.json``,
  as ``kubernetes-admin`` with kubectl's user agent: 201, or the 409 kubectl prints.
* :meth:`AuditedSource.scheduler_bind`: kube-scheduler's Binding (``system:kube-scheduler``).
* :meth:`AuditedSource.kubelet_status`: the kubelet's status patch (``system:node:pair-worker``), whose answer is the
  pod at its new resourceVersion (joined exactly to its frame).
* observatory's own ``bind`` answers with a unique ``Audit-Id`` header and logs the matching event.

Times are pinned before the frozen clock, so frames (received at the frozen time) come after their writes.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from observatory.model.audit import parse_event
from observatory.model.deltas import Upserted
from observatory.model.records import BindingExchange
from observatory.model.source import AuditUpdate, Capabilities
from tests.ui.fakes import FROZEN, RecordedSource

KUBECTL = "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"
SCHEDULER = "kube-scheduler/v1.34.1 (linux/amd64) kubernetes/93248f9/scheduler"
KUBELET = "kubelet/v1.34.1 (linux/amd64) kubernetes/93248f9"
ALREADY_ASSIGNED = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
                    '"pair-worker"')
"""kube-apiserver's 409 for a second Binding (pkg/registry/core/pod/storage/storage.go assignPod), as kubectl
prints it after ``Error from server (Conflict): ``."""


class Feed:
    """An AuditFeed whose updates the test puts in."""

    origin = "lab"

    def __init__(self) -> None:
        self.updates: asyncio.Queue[AuditUpdate] = asyncio.Queue()

    async def audit_stream(self) -> AsyncIterator[AuditUpdate]:
        while True:
            yield await self.updates.get()


class AuditedSource(RecordedSource):
    """:class:`RecordedSource` with an audit feed and the other writers of exercise 1."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.feed = Feed()
        self.audit_ids = 0
        self.seconds = 0

    def capabilities(self) -> Capabilities:
        return Capabilities(access=self, audit=self.feed)

    # -- audit events --------------------------------------------------------------------------------------------

    def _event(self, audit_id: str, *, verb: str, name: str, subresource: str, user: str, groups: list[str],
               agent: str, ip: str, code: int, request: Any, response: Any, message: str = "") -> list[dict]:
        """The two stages of one request, ``requestReceivedTimestamp`` a second after the last one logged."""
        self.seconds += 1
        at = (FROZEN - timedelta(seconds=60 - self.seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        base = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse", "auditID": audit_id,
                "requestURI": f"/api/v1/namespaces/sched-lab/pods/{name}" + (f"/{subresource}" if subresource else ""),
                "verb": verb, "user": {"username": user, "groups": groups}, "sourceIPs": [ip], "userAgent": agent,
                "objectRef": {"resource": "pods", "namespace": "sched-lab", "name": name, "apiVersion": "v1",
                              **({"subresource": subresource} if subresource else {})},
                "requestReceivedTimestamp": at, "stageTimestamp": at}
        status: dict[str, Any] = {"metadata": {}, "code": code}
        if message:
            status.update(status="Failure", message=message, reason="Conflict")
        complete = dict(base, stage="ResponseComplete", responseStatus=status, requestObject=request)
        if response is not None:
            complete["responseObject"] = response
        return [dict(base, stage="RequestReceived"), complete]

    def log(self, *events: dict, malformed: int = 0, problem: str = "") -> None:
        self.feed.updates.put_nowait(AuditUpdate(tuple(parse_event(e) for e in events), malformed, problem))

    def _next_id(self) -> str:
        self.audit_ids += 1
        return f"00000000-aaaa-4000-8000-{self.audit_ids:012d}"

    # -- writers -------------------------------------------------------------------------------------------------

    def _assign(self, name: str, node: str) -> tuple[int, str]:
        pod = self.objects["pods"][f"sched-lab/{name}"]
        assigned = pod["spec"].get("nodeName")
        if assigned:
            return 409, (f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already assigned '
                         f'to node "{assigned}"')
        self.rv += 1
        pod = copy.deepcopy(pod)
        pod["spec"]["nodeName"] = node
        pod["metadata"]["resourceVersion"] = str(self.rv)
        self.objects["pods"][f"sched-lab/{name}"] = pod
        self.queues["pods"].put_nowait(Upserted("pods", pod, "MODIFIED"))
        return 201, ""

    def _binding(self, name: str, node: str, *, user: str, groups: list[str], agent: str, ip: str) -> None:
        code, message = self._assign(name, node)
        body = {"kind": "Binding", "apiVersion": "v1", "metadata": {"name": name, "namespace": "sched-lab"},
                "target": {"kind": "Node", "apiVersion": "v1", "name": node}}
        answer = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
        self.log(*self._event(self._next_id(), verb="create", name=name, subresource="binding", user=user,
                              groups=groups, agent=agent, ip=ip, code=code, request=body,
                              response=answer if code == 201 else None, message=message))

    def kubectl_bind(self, name: str = "manual", node: str = "pair-worker") -> None:
        """The student's Binding with kubectl (kind's ``kubernetes-admin``)."""
        self._binding(name, node, user="kubernetes-admin", groups=["kubeadm:cluster-admins", "system:authenticated"],
                      agent=KUBECTL, ip="172.18.0.1")

    def scheduler_bind(self, name: str, node: str = "pair-worker") -> None:
        """kube-scheduler's Binding."""
        self._binding(name, node, user="system:kube-scheduler", groups=["system:authenticated"], agent=SCHEDULER,
                      ip="172.18.0.2")

    def add_pod(self, name: str) -> None:
        """Another pod of sched-lab for the default scheduler, as the watch brings it (ADDED)."""
        pod = copy.deepcopy(self.objects["pods"]["sched-lab/manual"])
        self.rv += 1
        pod["metadata"].update(name=name, uid=f"00000000-0000-4000-8000-{self.rv:012d}", resourceVersion=str(self.rv))
        pod["spec"]["schedulerName"] = "default-scheduler"
        pod["spec"].pop("nodeName", None)
        self.objects["pods"][f"sched-lab/{name}"] = pod
        self.queues["pods"].put_nowait(Upserted("pods", pod, "ADDED"))

    def kubelet_status(self, name: str = "manual", *, running: bool = False) -> None:
        """The kubelet's status patch: ContainerCreating, or Running."""
        pod = copy.deepcopy(self.objects["pods"][f"sched-lab/{name}"])
        node = pod["spec"]["nodeName"]
        state = {"running": {"startedAt": "2026-11-29T09:29:50Z"}} if running else {
            "waiting": {"reason": "ContainerCreating"}}
        patch = {"status": {"phase": "Running" if running else "Pending",
                            "containerStatuses": [{"name": "pause", "ready": running, "restartCount": 0,
                                                   "image": "registry.k8s.io/pause:3.9", "imageID": "",
                                                   "state": state}]}}
        pod["status"].update(patch["status"])
        self.rv += 1
        pod["metadata"]["resourceVersion"] = str(self.rv)
        self.objects["pods"][f"sched-lab/{name}"] = pod
        self.queues["pods"].put_nowait(Upserted("pods", pod, "MODIFIED"))
        self.log(*self._event(self._next_id(), verb="patch", name=name, subresource="status",
                              user=f"system:node:{node}", groups=["system:nodes", "system:authenticated"],
                              agent=KUBELET, ip="172.18.0.3", code=200, request=patch, response=pod))

    async def bind(self, namespace: str, name: str, node: str, uid: str | None = None) -> BindingExchange:
        """observatory's own Binding: the recorded answer with a fresh ``Audit-Id``, and its audit event."""
        exchange = await super().bind(namespace, name, node, uid)
        audit_id = self._next_id()
        headers = tuple((k, audit_id if k == "Audit-Id" else v) for k, v in exchange.response_headers)
        exchange = dataclasses.replace(exchange, response_headers=headers)
        status = json.loads(exchange.response_body)
        self.log(*self._event(audit_id, verb="create", name=name, subresource="binding", user="kubernetes-admin",
                              groups=["system:authenticated"], agent="observatory/0.1", ip="127.0.0.1",
                              code=exchange.status, request=json.loads(exchange.request_body),
                              response=status if exchange.ok else None, message=exchange.status_message or ""))
        return exchange
