"""audit.k8s.io/v1 Events of exercise 1 as kube-apiserver writes them at RequestResponse level: kubectl's Binding
of sched-lab/manual (201), the kubelet's status patch, kubectl's second Binding (409), and a Secret created with its
data. Shapes from upstream's ``staging/src/k8s.io/apiserver/pkg/apis/audit/v1/types.go``; ``responseStatus`` of a
Status answer holds its ``status``, ``message``, ``reason``, ``details`` and ``code``
(``staging/src/k8s.io/apiserver/pkg/audit/context.go``, ``AuditContext.LogResponseObject``), of any other answer the
code alone."""

from __future__ import annotations

import json
from typing import Any

KUBECTL = "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"
KUBELET = "kubelet/v1.34.1 (linux/amd64) kubernetes/93248f9"
MESSAGE_409 = ('Operation cannot be fulfilled on pods/binding "manual": '
               'pod manual is already assigned to node "pair-worker"')
STATUS_409 = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": MESSAGE_409,
              "reason": "Conflict", "details": {"name": "manual", "kind": "pods/binding"}, "code": 409}
STATUS_201 = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
BINDING = {"kind": "Binding", "apiVersion": "v1", "metadata": {"name": "manual", "namespace": "sched-lab"},
           "target": {"kind": "Node", "name": "pair-worker"}}
SECRET_VALUE = "aHVudGVyMg=="  # base64 of the Secret's password


def event(audit_id: str, at: str, *, verb: str = "create", user: str = "kubernetes-admin",
          groups: tuple[str, ...] = ("kubeadm:cluster-admins", "system:authenticated"), agent: str = KUBECTL,
          resource: str = "pods", name: str = "manual", subresource: str = "", namespace: str = "sched-lab",
          code: int = 201, status: str = "Success", reason: str = "", message: str = "",
          details: dict[str, Any] | None = None, request: Any = None,
          response: Any = None, level: str = "RequestResponse") -> dict[str, Any]:
    """One ResponseComplete event (``at`` is the seconds part of 2026-12-02T04:00:SS, e.g. ``"10.250000"``)."""
    uri = f"/api/v1/namespaces/{namespace}/{resource}/{name}" + (f"/{subresource}" if subresource else "")
    ref = {"resource": resource, "namespace": namespace, "name": name, "apiVersion": "v1"}
    if subresource:
        ref["subresource"] = subresource
    out: dict[str, Any] = {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": level, "auditID": audit_id,
        "stage": "ResponseComplete", "requestURI": uri, "verb": verb,
        "user": {"username": user, "groups": list(groups)}, "sourceIPs": ["127.0.0.1"], "userAgent": agent,
        "objectRef": ref, "responseStatus": {"metadata": {}, "code": code},
        "requestReceivedTimestamp": f"2026-12-02T04:00:{at}Z", "stageTimestamp": f"2026-12-02T04:00:{at}Z",
        "annotations": {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""},
    }
    if status:
        out["responseStatus"]["status"] = status
    if message:
        out["responseStatus"]["message"] = message
    if reason:
        out["responseStatus"]["reason"] = reason
    if details:
        out["responseStatus"]["details"] = details
    if request is not None:
        out["requestObject"] = request
    if response is not None:
        out["responseObject"] = response
    return out


def pod(rv: str, node: str, phase: str = "Pending") -> dict[str, Any]:
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "manual", "namespace": "sched-lab", "resourceVersion": rv},
            "spec": {"nodeName": node}, "status": {"phase": phase}}


def bind_201() -> dict[str, Any]:
    return event("a1", "10.250000", subresource="binding", request=BINDING, response=STATUS_201)


def status_patch() -> dict[str, Any]:
    """The kubelet's status patch that moved the pod to Running: the answer is the pod, with its resourceVersion."""
    return event("a2", "11.500000", verb="patch", user="system:node:pair-worker",
                 groups=("system:nodes", "system:authenticated"), agent=KUBELET, subresource="status", code=200,
                 status="", request={"status": {"phase": "Running"}}, response=pod("28", "pair-worker", "Running"))


def bind_409() -> dict[str, Any]:
    return event("a3", "14.000000", subresource="binding", code=409, status="Failure", reason="Conflict",
                 message=MESSAGE_409, details=STATUS_409["details"], request=BINDING, response=STATUS_409)


def secret_create(token: str = SECRET_VALUE) -> dict[str, Any]:
    """A Secret created at RequestResponse (a policy that logs Secrets' bodies, which upstream does not forbid)."""
    secret = {"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "db", "namespace": "sched-lab"},
              "data": {"password": token}}
    return event("a4", "15.000000", resource="secrets", name="db", request=secret, response=secret, code=201,
                 status="")


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj)
