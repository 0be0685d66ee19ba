"""observatory.model.writes: the pods' writes from audit events (stages merged by auditID, reads ignored, Bindings
belong to their pod, bounded memory) and the join of timeline frames to writes."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

from observatory.model.audit import AuditEvent, parse_event
from observatory.model.exchange import BindingExchange
from observatory.model.records import TimelineFrame
from observatory.model.source import AuditUpdate
from observatory.model.writes import WriteStore, audit_id_of, body_shape, differences, join_frames, pod_of

T0 = datetime(2026, 12, 2, 4, 0, 0, tzinfo=UTC)
KUBECTL = "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"
SCHEDULER = "kube-scheduler/v1.34.1 (linux/amd64) kubernetes/93248f9/scheduler"
KUBELET = "kubelet/v1.34.1 (linux/amd64) kubernetes/93248f9"
CONFLICT = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
            '"pair-worker"')


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event(audit_id: str, *, verb: str = "create", resource: str = "pods", name: str = "manual",
          subresource: str = "", namespace: str = "sched-lab", stage: str = "ResponseComplete", code: int = 201,
          user: str = "kubernetes-admin", agent: str = KUBECTL, at: datetime = T0, rv: str = "",
          request: Any = None, ips: tuple[str, ...] = ("127.0.0.1",), group: str = "") -> AuditEvent:
    ref: dict[str, Any] = {"resource": resource, "namespace": namespace, "apiVersion": "v1"}
    if name:
        ref["name"] = name
    if subresource:
        ref["subresource"] = subresource
    if group:
        ref["apiGroup"] = group
    path = f"/api/v1/namespaces/{namespace}/{resource}" + (f"/{name}" if name else "") + (
        f"/{subresource}" if subresource else "")
    obj: dict[str, Any] = {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse", "auditID": audit_id,
        "stage": stage, "requestURI": path, "verb": verb,
        "user": {"username": user, "groups": ["system:authenticated"]},
        "sourceIPs": list(ips), "userAgent": agent, "objectRef": ref,
        "requestReceivedTimestamp": _stamp(at), "stageTimestamp": _stamp(at + timedelta(milliseconds=2)),
    }
    if stage != "RequestReceived":
        obj["responseStatus"] = {"metadata": {}, "code": code}
        if code == 409:
            obj["responseStatus"].update(status="Failure", reason="Conflict", message=CONFLICT)
    if rv:
        obj["responseObject"] = {"kind": "Pod", "apiVersion": "v1",
                                 "metadata": {"name": name, "namespace": namespace, "resourceVersion": rv}}
    if request is not None:
        obj["requestObject"] = request
    return parse_event(obj)


def frame(rv: str, change: str = "MODIFIED", at: datetime = T0 + timedelta(seconds=1), node: str = "") -> TimelineFrame:
    return TimelineFrame(rv, at, change, node, "Pending", "Pending")


def test_the_stages_of_one_request_are_one_write_that_keeps_the_complete_stage_at_the_first_place() -> None:
    store = WriteStore()
    store.apply(AuditUpdate((event("a", stage="RequestReceived"), event("b", subresource="status", verb="patch"))))
    store.apply(AuditUpdate((event("a", subresource="binding", code=409),)))
    writes = store.for_pod("sched-lab/manual")
    assert [(w.event.audit_id, w.event.stage, w.event.code) for w in writes] == [
        ("a", "ResponseComplete", 409), ("b", "ResponseComplete", 201)]
    assert len(store) == 2


def test_a_late_earlier_stage_does_not_replace_the_complete_one() -> None:
    store = WriteStore()
    store.add(event("a", code=409))
    assert not store.add(event("a", stage="RequestReceived"))
    got = store.get("a")
    assert got is not None and got.event.complete and got.event.code == 409


def test_reads_and_writes_to_other_objects_are_ignored() -> None:
    store = WriteStore()
    changed = store.apply(AuditUpdate((event("g", verb="get"), event("l", verb="list", name=""),
                                       event("w", verb="watch"), event("n", resource="nodes", namespace=""),
                                       event("e", resource="events"), event("x", group="apps", resource="pods"),
                                       event("c", verb="deletecollection", name=""))))
    assert changed == set() and len(store) == 0


def test_a_binding_belongs_to_its_pod_by_subresource_or_by_a_bindings_create() -> None:
    by_subresource = event("s", subresource="binding")
    named = event("b", resource="bindings", name="manual")
    unnamed = event("u", resource="bindings", name="",
                    request={"kind": "Binding", "apiVersion": "v1", "metadata": {"name": "other"}})
    assert [pod_of(e) for e in (by_subresource, named, unnamed)] == [
        "sched-lab/manual", "sched-lab/manual", "sched-lab/other"]
    store = WriteStore()
    assert store.apply(AuditUpdate((by_subresource, named, unnamed))) == {"sched-lab/manual", "sched-lab/other"}
    assert store.sent_binding("sched-lab/manual") and store.sent_binding("sched-lab/other")
    assert not store.sent_binding("sched-lab/nobody")


def test_a_status_patch_is_not_a_binding() -> None:
    store = WriteStore()
    store.add(event("p", verb="patch", subresource="status", agent=KUBELET, user="system:node:pair-worker"))
    assert not store.sent_binding() and store.for_pod("sched-lab/manual")[0].event.writer == "kubelet pair-worker"


def test_memory_is_bounded_per_pod_and_in_all() -> None:
    store = WriteStore(per_pod=3, total=5)
    for i in range(5):
        store.add(event(f"a{i}", name="a", verb="patch"))
    assert [w.event.audit_id for w in store.for_pod("sched-lab/a")] == ["a2", "a3", "a4"]
    assert store.get("a0") is None
    for i in range(3):
        store.add(event(f"b{i}", name="b", verb="patch"))
    assert len(store) == 5  # pod a, written least recently, lost its oldest
    assert [w.event.audit_id for w in store.for_pod("sched-lab/a")] == ["a3", "a4"]
    for i in range(3):
        store.add(event(f"c{i}", name="c", verb="patch"))
    assert store.for_pod("sched-lab/a") == [] and len(store) == 5
    assert [w.event.audit_id for w in store.in_scope(None)] == ["b1", "b2", "c0", "c1", "c2"]


def test_in_scope_is_one_namespace_or_all_in_arrival_order() -> None:
    store = WriteStore()
    store.add(event("1", name="a"))
    store.add(event("2", name="b", namespace="other"))
    store.add(event("3", name="a", verb="patch"))
    assert [w.event.audit_id for w in store.in_scope("sched-lab")] == ["1", "3"]
    assert [w.event.audit_id for w in store.in_scope(None)] == ["1", "2", "3"]


def test_the_malformed_count_is_the_feeds() -> None:
    store = WriteStore()
    store.apply(AuditUpdate((), malformed=2, problem="not JSON: Expecting value"))
    assert (store.malformed, store.problem) == (2, "not JSON: Expecting value")


def test_an_exchanges_audit_id_is_its_response_header() -> None:
    exchange = BindingExchange(pod="sched-lab/manual", node="pair-worker", method="POST", path="/x",
                               request_headers=(), request_body=b"", http_version="HTTP/1.1", status=201,
                               reason="Created", response_headers=(("audit-id", " 5f0c "), ("Date", "x")),
                               response_body=b"", sent_at=T0, elapsed_ms=1.0)
    assert audit_id_of(exchange) == "5f0c"


def _exercise() -> list:
    """Exercise 1's writes to sched-lab/manual: the create (answer at RV 21), kubectl's Binding (201, a Status),
    kubectl's second Binding (409), the kubelet's status patches (answers at RV 23 and 28)."""
    store = WriteStore()
    store.add(event("create", rv="21", at=T0))
    store.add(event("bind", subresource="binding", at=T0 + timedelta(seconds=1)))
    store.add(event("again", subresource="binding", code=409, at=T0 + timedelta(seconds=2)))
    for audit_id, rv, seconds in (("st1", "23", 3), ("st2", "28", 4)):
        store.add(event(audit_id, verb="patch", subresource="status", agent=KUBELET, user="system:node:pair-worker",
                        code=200, rv=rv, at=T0 + timedelta(seconds=seconds)))
    return store.for_pod("sched-lab/manual")


def test_frames_join_exactly_by_resource_version_and_the_binding_by_order() -> None:
    frames = [frame("21", "ADDED", T0), frame("22", at=T0 + timedelta(seconds=1.5), node="pair-worker"),
              frame("23", at=T0 + timedelta(seconds=3.1)), frame("28", at=T0 + timedelta(seconds=4.1))]
    joined = join_frames(frames, _exercise())
    assert [(j.frame.resource_version, j.write.event.audit_id if j.write else None, j.how) for j in joined] == [
        ("21", "create", "exact"), ("22", "bind", "order"), ("23", "st1", "exact"), ("28", "st2", "exact")]
    assert [j.label for j in joined[1:3]] == ["← POST pods/manual/binding · kubectl · 201 (matched by order)",
                                              "← PATCH pods/manual/status · kubelet pair-worker · 200"]


def test_a_failed_write_makes_no_frame_and_a_frame_with_no_write_says_so() -> None:
    writes = [w for w in _exercise() if w.event.audit_id in ("again", "st1")]
    joined = join_frames([frame("22", at=T0 + timedelta(seconds=2.5)), frame("23")], writes)
    # the 409 changed nothing
    assert (joined[0].write, joined[0].how, joined[0].label) == (None, "none", "no write seen")
    assert joined[1].how == "exact"


def test_by_order_the_last_write_before_the_frame_is_chosen_and_a_later_one_is_not() -> None:
    """A condition-only status patch makes no frame: the frame's write is the last one received before it. A
    relisted frame seen before any write kept joins none."""
    early = event("cond", verb="patch", subresource="status", agent=KUBELET, at=T0)
    late = event("phase", verb="patch", subresource="status", agent=KUBELET, at=T0 + timedelta(seconds=1))
    store = WriteStore()
    store.add(early)
    store.add(late)
    writes = store.for_pod("sched-lab/manual")
    relisted = frame("20", "RELISTED", T0 - timedelta(seconds=5))
    joined = join_frames([relisted, frame("30", at=T0 + timedelta(seconds=2))], writes)
    assert [(j.write.event.audit_id if j.write else None, j.how) for j in joined] == [(None, "none"),
                                                                                      ("phase", "order")]


def test_a_deleted_frame_joins_only_a_delete_and_an_added_frame_only_the_create() -> None:
    store = WriteStore()
    store.add(event("patch", verb="patch", subresource="status", at=T0))
    store.add(event("del", verb="delete", code=200, at=T0 + timedelta(seconds=1)))
    writes = store.for_pod("sched-lab/manual")
    joined = join_frames([frame("5", "ADDED", T0 + timedelta(seconds=3)),
                          frame("6", "DELETED", T0 + timedelta(seconds=3))], writes)
    assert [(j.write.event.audit_id if j.write else None, j.how) for j in joined] == [(None, "none"),
                                                                                      ("del", "order")]


def test_two_bindings_differ_in_who_sent_them_not_in_their_post_or_body_shape() -> None:
    def binding(pod: str, node: str) -> dict:
        return {"kind": "Binding", "apiVersion": "v1", "metadata": {"name": pod, "namespace": "sched-lab"},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
    scheduler = event("s", name="web", subresource="binding", user="system:kube-scheduler", agent=SCHEDULER,
                      request=binding("web", "pair-worker2"), ips=("172.18.0.2",))
    student = event("k", subresource="binding", request=binding("manual", "pair-worker"))
    assert body_shape(student.request_object) == ("apiVersion", "kind", "metadata.name", "metadata.namespace",
                                                  "target.apiVersion", "target.kind", "target.name")
    assert differences(scheduler, student) == {"user", "user_agent", "source_ips"}
    conflict = event("c", subresource="binding", code=409, request={"kind": "Binding", "extra": [1]})
    assert differences(student, conflict) == {"code", "body"}


def test_by_order_the_newest_frame_takes_the_newest_write_and_a_listed_frame_before_it_none() -> None:
    """Frames arriving at the same instant (a frozen clock, a burst): the Binding made the frame after the list, not
    the listed one."""
    store = WriteStore()
    store.add(event("bind", subresource="binding", at=T0))
    joined = join_frames([frame("100", "RELISTED", T0 + timedelta(seconds=1)),
                          frame("101", at=T0 + timedelta(seconds=1))], store.for_pod("sched-lab/manual"))
    assert [(j.write.event.audit_id if j.write else None, j.how) for j in joined] == [(None, "none"),
                                                                                      ("bind", "order")]


def test_a_write_of_unknown_time_joins_by_order_alone() -> None:
    store = WriteStore()
    raw = event("bind", subresource="binding")
    store.add(dataclasses.replace(raw, received=None, stage_at=None))
    joined = join_frames([frame("101", at=T0 - timedelta(days=1))], store.for_pod("sched-lab/manual"))
    assert joined[0].how == "order"
