"""observatory.model.audit: audit.k8s.io/v1 Events read defensively (fields of upstream's apis/audit/v1/types.go)."""

from __future__ import annotations

import json

import pytest

from observatory.model.audit import AuditFormatError, parse_batch, parse_event, parse_line, short_agent


def _event(**overrides: object) -> dict:
    event = {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse",
        "auditID": "0f0e4c1a-52c1-4b47-9d2b-1c5a8b0c7d11", "stage": "ResponseComplete",
        "requestURI": "/api/v1/namespaces/sched-lab/pods/manual/binding", "verb": "create",
        "user": {"username": "kubernetes-admin", "groups": ["kubeadm:cluster-admins", "system:authenticated"]},
        "sourceIPs": ["127.0.0.1"], "userAgent": "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9",
        "objectRef": {"resource": "pods", "namespace": "sched-lab", "name": "manual", "apiVersion": "v1",
                      "subresource": "binding"},
        "responseStatus": {"metadata": {}, "status": "Failure", "code": 409, "reason": "Conflict",
                           "message": 'Operation cannot be fulfilled on pods/binding "manual": pod manual is '
                                      'already assigned to node "pair-worker"'},
        "requestReceivedTimestamp": "2026-12-02T04:00:00.123456Z", "stageTimestamp": "2026-12-02T04:00:00.125000Z",
    }
    event.update(overrides)
    return event


def test_a_binding_conflict_reads_as_who_what_and_the_answer() -> None:
    event = parse_line(json.dumps(_event()))
    assert (event.writer, event.target, event.object_key) == ("kubectl", "pods/manual/binding", "sched-lab/manual")
    assert (event.code, event.reason, event.is_write, event.complete) == (409, "Conflict", True, True)
    assert event.message.endswith('already assigned to node "pair-worker"')
    assert event.resource_version == ""  # a Status answer carries no object's resourceVersion
    assert event.received is not None and event.received.microsecond == 123456


def test_the_resource_version_is_the_response_objects_only_when_it_is_the_object() -> None:
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "manual", "resourceVersion": "23"}}
    assert parse_event(_event(responseObject=pod)).resource_version == "23"
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "code": 409}
    assert parse_event(_event(responseObject=status)).resource_version == ""


@pytest.mark.parametrize(("user", "agent", "writer"), [
    ("system:node:pair-worker", "kubelet/v1.34.1 (linux/amd64) kubernetes/93248f9", "kubelet pair-worker"),
    ("system:kube-scheduler", "kube-scheduler/v1.34.1 (linux/amd64) kubernetes/93248f9/scheduler", "kube-scheduler"),
    ("system:serviceaccount:kube-system:node-controller",
     "kube-controller-manager/v1.34.1 (linux/amd64) kubernetes/93248f9/system:serviceaccount:kube-system:"
     "node-controller", "kube-controller-manager node-controller"),
    ("alice", "", "alice"),
])
def test_the_writer_is_the_user_agents_program_with_the_node_or_controller(user: str, agent: str,
                                                                            writer: str) -> None:
    assert parse_event(_event(user={"username": user}, userAgent=agent)).writer == writer


@pytest.mark.parametrize("bad", [
    "not json", "[]", json.dumps({"kind": "Pod", "apiVersion": "v1"}),
    json.dumps(_event(auditID="")), json.dumps(_event(stage="Finished")),
])
def test_anything_else_is_one_format_error(bad: str) -> None:
    with pytest.raises(AuditFormatError):
        parse_line(bad)


def test_a_webhook_batch_is_an_event_list() -> None:
    events = parse_batch({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": [_event(), _event()]})
    assert len(events) == 2
    with pytest.raises(AuditFormatError):
        parse_batch({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": [_event(), {"kind": "x"}]})
    with pytest.raises(AuditFormatError):
        parse_batch(_event())


def test_short_agent() -> None:
    assert short_agent("kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9") == "kubectl"
    assert short_agent("") == ""
