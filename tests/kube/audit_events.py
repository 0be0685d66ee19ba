"""audit.k8s.io/v1 Events as kube-apiserver writes them (fields of upstream's apis/audit/v1/types.go), for the
audit feed tests: a kubectl Binding (201 or 409) and a kubelet status patch."""

from __future__ import annotations

import json
from typing import Any

CONFLICT = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
            '"pair-worker"')


def binding_event(code: int = 201, audit_id: str = "0f0e4c1a-52c1-4b47-9d2b-1c5a8b0c7d11",
                  **overrides: Any) -> dict[str, Any]:
    """The ResponseComplete Event of ``kubectl create --raw .../pods/manual/binding``: 201 Success or 409."""
    status: dict[str, Any] = {"metadata": {}, "code": code}
    if code == 409:
        status.update(status="Failure", reason="Conflict", message=CONFLICT)
    event: dict[str, Any] = {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata", "auditID": audit_id,
        "stage": "ResponseComplete", "requestURI": "/api/v1/namespaces/sched-lab/pods/manual/binding",
        "verb": "create",
        "user": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
        "sourceIPs": ["127.0.0.1"], "userAgent": "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9",
        "objectRef": {"resource": "pods", "namespace": "sched-lab", "name": "manual", "apiVersion": "v1",
                      "subresource": "binding"},
        "responseStatus": status,
        "requestReceivedTimestamp": "2026-12-02T04:00:00.123456Z", "stageTimestamp": "2026-12-02T04:00:00.125000Z",
    }
    event.update(overrides)
    return event


def status_patch_event(rv: str = "23", audit_id: str = "5b1d0c55-0000-4000-8000-000000000023") -> dict[str, Any]:
    """The kubelet's status patch of sched-lab/manual at RequestResponse level, answered with the pod at ``rv``."""
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "manual", "namespace": "sched-lab",
                                                           "resourceVersion": rv}}
    return binding_event(200, audit_id, level="RequestResponse", verb="patch",
                         requestURI="/api/v1/namespaces/sched-lab/pods/manual/status",
                         user={"username": "system:node:pair-worker", "groups": ["system:nodes",
                                                                                  "system:authenticated"]},
                         userAgent="kubelet/v1.34.1 (linux/amd64) kubernetes/93248f9",
                         objectRef={"resource": "pods", "namespace": "sched-lab", "name": "manual",
                                    "apiVersion": "v1", "subresource": "status"},
                         responseObject=pod)


def line(event: dict[str, Any]) -> bytes:
    """One audit log line: the Event as JSON and its newline."""
    return json.dumps(event).encode() + b"\n"


def event_list(*events: dict[str, Any]) -> dict[str, Any]:
    """One webhook batch."""
    return {"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "metadata": {}, "items": list(events)}
