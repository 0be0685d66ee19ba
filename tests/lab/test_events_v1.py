"""events.k8s.io/v1 in the lab: the core/v1 events storage seen through the other group.

Expected values come from upstream, not from the lab: field names and JSON tags from ``k8s.io/api`` events/v1 and
core/v1 ``types.go`` and k/k ``pkg/apis/events/v1/conversion.go`` (reference §4.1), 422 texts from k/k
``pkg/apis/core/validation/events.go`` (``ValidateEventCreate``/``ValidateEventUpdate``) with apimachinery's
``field.Error`` and ``IsQualifiedName`` wording, discovery from a v1.3x kube-apiserver capture (§6), field
selectors from ``AddFieldLabelConversionsForEvent``, kubectl's describe "From" column from reference §4.2.
"""

from __future__ import annotations

import asyncio
import json
import re

import yaml
from kubernetes_asyncio import client, config

from observatory.lab import events_v1

NS = "sched-lab"
BASE = f"/apis/events.k8s.io/v1/namespaces/{NS}/events"
CORE_BASE = f"/api/v1/namespaces/{NS}/events"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
"""apimachinery ``IsQualifiedName``'s regex error for the name part (``RegexError`` with its examples)."""


def scheduler_event(name: str = "manual.sched", **extra) -> dict:
    """An events.k8s.io/v1 Event as a scheduler's events/v1 recorder writes one about ``sched-lab/manual``."""
    event = {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name, "namespace": NS},
        "eventTime": "2026-11-29T09:12:07.123456Z", "reportingController": "my-scheduler",
        "reportingInstance": "my-scheduler-host1", "action": "Binding", "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": NS, "name": "manual", "apiVersion": "v1"},
        "note": "Successfully assigned sched-lab/manual to pair-worker", "type": "Normal",
    }
    event.update(extra)
    return event


def kubelet_core_event(name: str = "manual.kubelet") -> dict:
    """A core/v1 Event as the kubelet's legacy recorder writes one (reference §4.2)."""
    return {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": NS},
        "involvedObject": {"kind": "Pod", "namespace": NS, "name": "manual", "apiVersion": "v1",
                           "fieldPath": "spec.containers{c}"},
        "reason": "Pulled", "message": 'Successfully pulled image "nginx"',
        "source": {"component": "kubelet", "host": "pair-worker"},
        "firstTimestamp": "2026-11-29T09:12:08Z", "lastTimestamp": "2026-11-29T09:12:09Z", "count": 2,
        "type": "Normal", "eventTime": None, "reportingComponent": "kubelet", "reportingInstance": "pair-worker",
    }


async def status_of(response) -> tuple[int, dict]:
    return response.status, await response.json()


# --- conversion, both ways, exact field names -----------------------------------------------------------------


def test_to_core_renames_every_differing_field_and_serialises_core_empties():
    event = scheduler_event(series={"count": 2, "lastObservedTime": "2026-11-29T09:13:00.000000Z"},
                            related={"kind": "Node", "name": "pair-worker"})
    core = events_v1.to_core(event)
    assert core == {
        "metadata": {"name": "manual.sched", "namespace": NS},
        "involvedObject": {"kind": "Pod", "namespace": NS, "name": "manual", "apiVersion": "v1"},
        "reason": "Scheduled",
        "message": "Successfully assigned sched-lab/manual to pair-worker",
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "type": "Normal",
        "eventTime": "2026-11-29T09:12:07.123456Z",
        "series": {"count": 2, "lastObservedTime": "2026-11-29T09:13:00.000000Z"},
        "action": "Binding",
        "related": {"kind": "Node", "name": "pair-worker"},
        "reportingComponent": "my-scheduler",
        "reportingInstance": "my-scheduler-host1",
    }
    # core/v1 Event struct order (k8s.io/api core/v1 types.go)
    assert list(core) == ["metadata", "involvedObject", "reason", "message", "source", "firstTimestamp",
                          "lastTimestamp", "type", "eventTime", "series", "action", "related",
                          "reportingComponent", "reportingInstance"]


def test_from_core_maps_a_legacy_kubelet_event_to_the_deprecated_fields():
    core = kubelet_core_event()
    del core["apiVersion"], core["kind"]
    event = events_v1.from_core(core)
    assert event == {
        "metadata": {"name": "manual.kubelet", "namespace": NS},
        "eventTime": None,
        "reportingController": "kubelet",
        "reportingInstance": "pair-worker",
        "reason": "Pulled",
        "regarding": {"kind": "Pod", "namespace": NS, "name": "manual", "apiVersion": "v1",
                      "fieldPath": "spec.containers{c}"},
        "note": 'Successfully pulled image "nginx"',
        "type": "Normal",
        "deprecatedSource": {"component": "kubelet", "host": "pair-worker"},
        "deprecatedFirstTimestamp": "2026-11-29T09:12:08Z",
        "deprecatedLastTimestamp": "2026-11-29T09:12:09Z",
        "deprecatedCount": 2,
    }
    # events/v1 Event struct order (k8s.io/api events/v1 types.go)
    assert list(event) == ["metadata", "eventTime", "reportingController", "reportingInstance", "reason",
                           "regarding", "note", "type", "deprecatedSource", "deprecatedFirstTimestamp",
                           "deprecatedLastTimestamp", "deprecatedCount"]


def test_empty_fields_follow_the_events_v1_json_tags():
    # eventTime has no omitempty; regarding and deprecatedSource are structs and deprecated*Timestamp are
    # metav1.Time, which Go's omitempty never drops; the string fields and deprecatedCount are omitted when empty.
    assert events_v1.from_core({"metadata": {"name": "x"}}) == {
        "metadata": {"name": "x"}, "eventTime": None, "regarding": {}, "deprecatedSource": {},
        "deprecatedFirstTimestamp": None, "deprecatedLastTimestamp": None}


def test_round_trip_keeps_the_stored_object():
    core = kubelet_core_event()
    del core["apiVersion"], core["kind"]
    assert events_v1.to_core(events_v1.from_core(core)) == core


# --- one storage, two groups ------------------------------------------------------------------------------------


async def test_created_through_events_k8s_io_is_read_through_core_v1(http):
    async with http.post(BASE, json=scheduler_event()) as resp:
        status, created = await status_of(resp)
    assert status == 201
    assert (created["kind"], created["apiVersion"]) == ("Event", "events.k8s.io/v1")
    assert created["reportingController"] == "my-scheduler" and created["deprecatedSource"] == {}
    async with http.get(f"{CORE_BASE}/manual.sched") as resp:
        status, core = await status_of(resp)
    assert status == 200
    assert (core["kind"], core["apiVersion"]) == ("Event", "v1")
    assert core["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert core["metadata"]["uid"] == created["metadata"]["uid"]
    # reference §4.2: an events/v1 recorder's event seen through core/v1
    assert core["involvedObject"] == {"kind": "Pod", "namespace": NS, "name": "manual", "apiVersion": "v1"}
    assert core["message"] == "Successfully assigned sched-lab/manual to pair-worker"
    assert (core["source"], core["firstTimestamp"], core["lastTimestamp"]) == ({}, None, None)
    assert "count" not in core
    assert (core["reportingComponent"], core["reportingInstance"], core["action"]) == (
        "my-scheduler", "my-scheduler-host1", "Binding")
    async with http.get(f"/api/v1/namespaces/{NS}/events") as resp:
        names = [e["metadata"]["name"] for e in (await resp.json())["items"]]
    assert "manual.sched" in names


async def test_created_through_core_v1_is_read_through_events_k8s_io(http):
    async with http.post(CORE_BASE, json=kubelet_core_event()) as resp:
        assert resp.status == 201
    async with http.get("/apis/events.k8s.io/v1/events") as resp:
        status, listed = await status_of(resp)
    assert status == 200
    assert (listed["kind"], listed["apiVersion"]) == ("EventList", "events.k8s.io/v1")
    [item] = [e for e in listed["items"] if e["metadata"]["name"] == "manual.kubelet"]
    assert "kind" not in item and "involvedObject" not in item and "message" not in item
    assert item["regarding"]["fieldPath"] == "spec.containers{c}"
    assert item["note"] == 'Successfully pulled image "nginx"'
    assert item["deprecatedSource"] == {"component": "kubelet", "host": "pair-worker"}
    assert (item["deprecatedCount"], item["reportingController"], item["eventTime"]) == (2, "kubelet", None)
    async with http.get(f"{BASE}/manual.kubelet") as resp:
        status, one = await status_of(resp)
    assert status == 200 and one["apiVersion"] == "events.k8s.io/v1" and one["note"] == item["note"]


async def test_errors_name_the_group_resource(http):
    async with http.get(f"{BASE}/nope") as resp:
        status, body = await status_of(resp)
    assert (status, body["reason"], body["message"]) == (404, "NotFound", 'events.events.k8s.io "nope" not found')
    assert body["details"] == {"name": "nope", "group": "events.k8s.io", "kind": "events"}
    async with http.post(BASE, json=scheduler_event()) as resp:
        assert resp.status == 201
    async with http.post(BASE, json=scheduler_event()) as resp:
        status, body = await status_of(resp)
    assert (status, body["reason"], body["message"]) == (
        409, "AlreadyExists", 'events.events.k8s.io "manual.sched" already exists')
    async with http.post(BASE, json=kubelet_core_event("other")) as resp:
        status, body = await status_of(resp)
    assert (status, body["message"]) == (
        400, "the API version in the data (v1) does not match the expected API version (events.k8s.io/v1)")


async def test_list_pages_and_selects_with_the_groups_field_labels(http):
    for i in range(3):
        async with http.post(BASE, json=scheduler_event(f"e{i}", reason="Scheduled" if i else "FailedScheduling",
                                                        type="Normal" if i else "Warning")) as resp:
            assert resp.status == 201
    async with http.get(BASE, params={"limit": "2"}) as resp:
        first = await resp.json()
    assert [e["metadata"]["name"] for e in first["items"]] == ["e0", "e1"]
    assert first["metadata"]["remainingItemCount"] == 1
    async with http.get(BASE, params={"limit": "2", "continue": first["metadata"]["continue"]}) as resp:
        second = await resp.json()
    assert [e["metadata"]["name"] for e in second["items"]] == ["e2"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    for selector, names in (("reason=FailedScheduling", ["e0"]), ("regarding.name=manual,type=Normal", ["e1", "e2"]),
                            ("reportingController=my-scheduler,metadata.name!=e1", ["e0", "e2"]),
                            ("regarding.name=other", [])):
        async with http.get("/apis/events.k8s.io/v1/events", params={"fieldSelector": selector}) as resp:
            assert [e["metadata"]["name"] for e in (await resp.json())["items"]] == names, selector
    # involvedObject.* and reportingComponent are core/v1 labels; events.k8s.io/v1 does not convert them.
    for label in ("involvedObject.name", "reportingComponent", "note"):
        async with http.get(BASE, params={"fieldSelector": f"{label}=x"}) as resp:
            status, body = await status_of(resp)
        assert (status, body["message"]) == (400, f"field label not supported: {label}")
    async with http.get(BASE, params={"labelSelector": "a in (b"}) as resp:
        assert resp.status == 400


async def test_update_patch_delete_and_deletecollection(http):
    async with http.post(BASE, json=scheduler_event()) as resp:
        created = await resp.json()
    labelled = {**created, "metadata": {**created["metadata"], "labels": {"team": "a"}}}
    async with http.put(f"{BASE}/manual.sched", json=labelled) as resp:
        status, updated = await status_of(resp)
    assert status == 200 and updated["metadata"]["labels"] == {"team": "a"}
    async with http.patch(f"{BASE}/manual.sched", data=json.dumps({"metadata": {"labels": {"b": "c"}}}),
                          headers={"Content-Type": "application/merge-patch+json"}) as resp:
        status, merged = await status_of(resp)
    assert status == 200 and merged["metadata"]["labels"] == {"team": "a", "b": "c"}
    ops = [{"op": "remove", "path": "/metadata/labels/team"}]
    async with http.patch(f"{BASE}/manual.sched", data=json.dumps(ops),
                          headers={"Content-Type": "application/json-patch+json"}) as resp:
        status, patched = await status_of(resp)
    assert status == 200 and patched["metadata"]["labels"] == {"b": "c"}
    async with http.patch(f"{BASE}/manual.sched", data=json.dumps({"metadata": {"annotations": {"x": "y"}}}),
                          headers={"Content-Type": "application/strategic-merge-patch+json"}) as resp:
        status, strategic = await status_of(resp)
    assert status == 200 and strategic["metadata"]["annotations"] == {"x": "y"}
    async with http.get(f"{CORE_BASE}/manual.sched") as resp:
        core = await resp.json()
    assert core["metadata"]["labels"] == {"b": "c"} and "note" not in core and "regarding" not in core
    async with http.delete(f"{BASE}/manual.sched") as resp:
        status, deleted = await status_of(resp)
    assert status == 200 and deleted["apiVersion"] == "events.k8s.io/v1"
    async with http.get(f"{CORE_BASE}/manual.sched") as resp:
        assert resp.status == 404
    for name in ("a", "b"):
        async with http.post(BASE, json=scheduler_event(name)) as resp:
            assert resp.status == 201
    async with http.delete(BASE) as resp:
        status, gone = await status_of(resp)
    assert status == 200 and gone["kind"] == "EventList" and [e["metadata"]["name"] for e in gone["items"]] == [
        "a", "b"]
    async with http.get(CORE_BASE) as resp:
        assert (await resp.json())["items"] == []


# --- watch across the groups -------------------------------------------------------------------------------------


async def next_event(resp) -> dict:
    line = await asyncio.wait_for(resp.content.readline(), 20)
    return json.loads(line)


async def test_a_write_through_one_group_reaches_watchers_of_the_other_converted(http):
    async with http.get(CORE_BASE) as resp:
        rv = (await resp.json())["metadata"]["resourceVersion"]
    params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "30"}
    async with http.get(BASE, params=params) as group_watch, http.get(CORE_BASE, params=params) as core_watch:
        async with http.post(CORE_BASE, json=kubelet_core_event()) as resp:
            assert resp.status == 201
        seen = await next_event(group_watch)
        assert seen["type"] == "ADDED"
        assert (seen["object"]["kind"], seen["object"]["apiVersion"]) == ("Event", "events.k8s.io/v1")
        assert seen["object"]["note"] == 'Successfully pulled image "nginx"' and "message" not in seen["object"]
        core_seen = await next_event(core_watch)
        assert core_seen["object"]["apiVersion"] == "v1" and core_seen["object"]["message"] == seen["object"]["note"]
        async with http.post(BASE, json=scheduler_event()) as resp:
            created = await resp.json()
        core_seen = await next_event(core_watch)
        assert (core_seen["type"], core_seen["object"]["apiVersion"]) == ("ADDED", "v1")
        assert core_seen["object"]["reportingComponent"] == "my-scheduler"
        assert core_seen["object"]["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        seen = await next_event(group_watch)
        assert seen["object"]["reportingController"] == "my-scheduler"
        async with http.delete(f"{CORE_BASE}/manual.sched") as resp:
            assert resp.status == 200
        seen = await next_event(group_watch)
        assert (seen["type"], seen["object"]["metadata"]["name"], seen["object"]["apiVersion"]) == (
            "DELETED", "manual.sched", "events.k8s.io/v1")


async def test_watch_with_a_field_selector_of_the_group(http):
    params = {"watch": "true", "fieldSelector": "regarding.name=manual,reason=Scheduled", "timeoutSeconds": "30"}
    async with http.get("/apis/events.k8s.io/v1/events", params=params) as watch:
        async with http.post(CORE_BASE, json=kubelet_core_event()) as resp:  # reason Pulled: filtered out
            assert resp.status == 201
        async with http.post(BASE, json=scheduler_event()) as resp:
            assert resp.status == 201
        seen = await next_event(watch)
    assert (seen["type"], seen["object"]["metadata"]["name"]) == ("ADDED", "manual.sched")


# --- validation: ValidateEventCreate / ValidateEventUpdate for events.k8s.io/v1 -----------------------------------


async def post_invalid(http, body: dict) -> str:
    async with http.post(BASE, json=body) as resp:
        status, status_body = await status_of(resp)
    assert (status, status_body["reason"]) == (422, "Invalid"), status_body
    assert status_body["details"]["group"] == "events.k8s.io" and status_body["details"]["kind"] == "Event"
    return status_body["message"]


async def test_reporting_fields_action_and_reason_are_required_once_event_time_is_set(http):
    body = scheduler_event("bad")
    for key in ("reportingController", "reportingInstance", "action", "reason"):
        del body[key]
    assert await post_invalid(http, body) == (
        'Event.events.k8s.io "bad" is invalid: [reportingController: Required value, '
        'reportingController: Invalid value: "": name part must be non-empty, '
        f'reportingController: Invalid value: "": {QUALIFIED_NAME_MSG}, '
        "reportingInstance: Required value, action: Required value, reason: Required value]")


async def test_note_longer_than_1_kib_alone(http):
    assert await post_invalid(http, scheduler_event("long", note="x" * 1025)) == (
        'Event.events.k8s.io "long" is invalid: message: Invalid value: "": can have at most 1024 characters')
    async with http.post(BASE, json=scheduler_event("fits", note="x" * 1024)) as resp:
        assert resp.status == 201


async def test_deprecated_fields_type_series_and_lengths(http):
    body = scheduler_event("bad", type="Info", deprecatedCount=2, deprecatedSource={"component": "x"},
                           deprecatedFirstTimestamp="2026-11-29T09:12:07Z", series={"count": 1},
                           reportingController="my scheduler", action="a" * 129)
    assert await post_invalid(http, body) == (
        'Event.events.k8s.io "bad" is invalid: ['
        f'reportingController: Invalid value: "my scheduler": {QUALIFIED_NAME_MSG}, '
        'action: Invalid value: "": can have at most 128 characters, '
        'series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value, '
        'type: Invalid value: "": has invalid value: Info, firstTimestamp: Invalid value: "": needs to be unset, '
        'count: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be unset]')


async def test_event_time_and_namespace_agreement(http):
    body = scheduler_event("bad")
    del body["eventTime"], body["type"]
    body["regarding"]["namespace"] = "elsewhere"
    assert await post_invalid(http, body) == (
        'Event.events.k8s.io "bad" is invalid: [involvedObject.namespace: Invalid value: "elsewhere": '
        'does not match event.namespace, eventTime: Required value, type: Invalid value: "": has invalid value: ]')
    # With eventTime set, an empty regarding.namespace is allowed only in default and kube-system.
    body = scheduler_event("bad2")
    del body["regarding"]["namespace"]
    assert await post_invalid(http, body) == (
        'Event.events.k8s.io "bad2" is invalid: involvedObject.namespace: Invalid value: "": '
        "does not match event.namespace")


async def test_core_v1_keeps_its_legacy_leniency(http):
    # The strict checks apply to events.k8s.io/v1 only; the same object through core/v1 is accepted.
    body = events_v1.to_core(scheduler_event("lenient"))
    body.update(apiVersion="v1", kind="Event", type="Info", action="")
    async with http.post(CORE_BASE, json=body) as resp:
        assert resp.status == 201


async def test_update_through_the_group_keeps_the_event_immutable(http):
    async with http.post(BASE, json=scheduler_event()) as resp:
        created = await resp.json()
    async with http.put(f"{BASE}/manual.sched", json={**created, "note": "changed"}) as resp:
        status, body = await status_of(resp)
    assert (status, body["message"]) == (
        422, 'Event.events.k8s.io "manual.sched" is invalid: message: Invalid value: "changed": field is immutable')
    async with http.patch(f"{BASE}/manual.sched", data=json.dumps({"reason": "Other"}),
                          headers={"Content-Type": "application/merge-patch+json"}) as resp:
        status, body = await status_of(resp)
    # reason is checked twice upstream: the message carries it once, the causes twice.
    assert (status, body["message"]) == (
        422, 'Event.events.k8s.io "manual.sched" is invalid: reason: Invalid value: "Other": field is immutable')
    assert [c["field"] for c in body["details"]["causes"]] == ["reason", "reason"]


async def test_a_repeat_updates_the_series_and_put_creates_a_missing_event(http):
    # events' strategy allows create on update: PUT of a missing name creates it (201), validated as a create.
    async with http.put(f"{BASE}/manual.sched", json=scheduler_event()) as resp:
        status, created = await status_of(resp)
    assert (status, created["metadata"]["name"]) == (201, "manual.sched")
    # client-go's events/v1 recorder patches the series of an isomorphic repeat; only the series may change.
    series = {"series": {"count": 2, "lastObservedTime": "2026-11-29T09:13:07.000000Z"}}
    async with http.patch(f"{BASE}/manual.sched", data=json.dumps(series),
                          headers={"Content-Type": "application/merge-patch+json"}) as resp:
        status, patched = await status_of(resp)
    assert (status, patched["series"]) == (200, series["series"])
    async with http.patch(f"{BASE}/manual.sched", data=json.dumps({"series": {"count": 1}}),
                          headers={"Content-Type": "application/merge-patch+json"}) as resp:
        status, body = await status_of(resp)
    assert (status, body["message"]) == (
        422, 'Event.events.k8s.io "manual.sched" is invalid: series.count: Invalid value: "": should be at least 2')
    async with http.get(f"{CORE_BASE}/manual.sched") as resp:
        assert (await resp.json())["series"] == series["series"]


async def test_strict_field_validation_uses_the_groups_schema(http):
    body = scheduler_event("strict", message="core field name")
    async with http.post(BASE, params={"fieldValidation": "Strict"}, json=body) as resp:
        status, status_body = await status_of(resp)
    assert (status, status_body["message"]) == (
        400, 'Event in version "v1" cannot be handled as a Event: strict decoding error: unknown field "message"')
    async with http.post(BASE, params={"fieldValidation": "Strict"}, json=scheduler_event("ok")) as resp:
        assert resp.status == 201
    async with http.post(BASE, json=scheduler_event("typed", note=3)) as resp:
        status, status_body = await status_of(resp)
    assert (status, status_body["message"]) == (
        400, 'Event in version "v1" cannot be handled as a Event: json: cannot unmarshal number into Go struct '
             "field Event.note of type string")


# --- discovery and tables ---------------------------------------------------------------------------------------


async def test_discovery_serves_the_group(http):
    async with http.get("/apis") as resp:
        groups = {g["name"]: g for g in (await resp.json())["groups"]}
    assert groups["events.k8s.io"] == {
        "name": "events.k8s.io", "versions": [{"groupVersion": "events.k8s.io/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "events.k8s.io/v1", "version": "v1"}}
    async with http.get("/apis/events.k8s.io") as resp:
        group = await resp.json()
    assert (group["kind"], group["name"]) == ("APIGroup", "events.k8s.io")
    async with http.get("/apis/events.k8s.io/v1") as resp:
        resources = await resp.json()
    # kube-apiserver v1.3x `kubectl -v=9` capture of GET /apis/events.k8s.io/v1
    assert resources == {
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "events.k8s.io/v1",
        "resources": [{"name": "events", "singularName": "event", "namespaced": True, "kind": "Event",
                       "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
                       "shortNames": ["ev"], "storageVersionHash": "r2yiGXH7wu8="}]}
    for path in ("/apis/events.k8s.io/v1/namespaces/x/pods", f"{BASE}/a/status", "/apis/events.k8s.io/v1/events/a"):
        async with http.get(path) as resp:
            assert resp.status == 404, path


async def test_tables_are_core_events_tables(http):
    async with http.post(BASE, json=scheduler_event()) as resp:
        assert resp.status == 201
    async with http.get(BASE, headers={"Accept": TABLE}) as resp:
        group_table = await resp.json()
    async with http.get(CORE_BASE, headers={"Accept": TABLE}) as resp:
        core_table = await resp.json()
    names = [c["name"] for c in group_table["columnDefinitions"] if c["priority"] == 0]
    assert names == ["Last Seen", "Type", "Reason", "Object", "Message"]
    assert group_table["columnDefinitions"] == core_table["columnDefinitions"]
    assert group_table["rows"][0]["cells"] == core_table["rows"][0]["cells"]
    assert group_table["rows"][0]["cells"][1:4] == ["Normal", "Scheduled", "pod/manual"]
    async with http.get(BASE, params={"includeObject": "Object"}, headers={"Accept": TABLE}) as resp:
        with_objects = await resp.json()
    row_object = with_objects["rows"][0]["object"]
    assert (row_object["apiVersion"], row_object["note"]) == (
        "events.k8s.io/v1", "Successfully assigned sched-lab/manual to pair-worker")


# --- kubernetes_asyncio's EventsV1Api ------------------------------------------------------------------------


async def test_kubernetes_asyncio_events_v1_api(lab):
    cfg = client.Configuration()
    await config.load_kube_config(config_file=str(lab.kubeconfig_path), context="observatory-lab",
                                  client_configuration=cfg)
    async with client.ApiClient(cfg) as api:
        events = client.EventsV1Api(api)
        body = client.EventsV1Event(
            metadata=client.V1ObjectMeta(name="manual.failed"), event_time="2026-11-29T09:12:07.123456Z",
            reporting_controller="my-scheduler", reporting_instance="my-scheduler-host1", action="Scheduling",
            reason="FailedScheduling", type="Warning", note="0/2 nodes are available: 2 Insufficient cpu.",
            regarding=client.V1ObjectReference(kind="Pod", namespace=NS, name="manual", api_version="v1"))
        created = await events.create_namespaced_event(NS, body)
        assert created.reporting_controller == "my-scheduler" and created.regarding.name == "manual"
        read = await events.read_namespaced_event("manual.failed", NS)
        assert read.note == "0/2 nodes are available: 2 Insufficient cpu." and read.action == "Scheduling"
        listed = await events.list_namespaced_event(NS, field_selector="reason=FailedScheduling")
        assert [e.metadata.name for e in listed.items] == ["manual.failed"]
        every = await events.list_event_for_all_namespaces()
        assert "manual.failed" in [e.metadata.name for e in every.items]
        core = await client.CoreV1Api(api).read_namespaced_event("manual.failed", NS)
        assert (core.reporting_component, core.message) == ("my-scheduler", read.note)


# --- kubectl ---------------------------------------------------------------------------------------------------


async def kubectl_run(kubectl: str, lab, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """kubectl against the in-process lab, without blocking the event loop the lab serves on."""
    proc = await asyncio.create_subprocess_exec(
        kubectl, "--kubeconfig", str(lab.kubeconfig_path), "--cache-dir", str(lab.kubeconfig_path.parent / "cache"),
        *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), 60)
    return proc.returncode, out.decode(), err.decode()


async def test_kubectl_create_get_and_describe(kubectl, lab, http):
    async with http.get(f"/api/v1/namespaces/{NS}/pods/manual") as resp:
        uid = (await resp.json())["metadata"]["uid"]
    event = scheduler_event()
    event["regarding"]["uid"] = uid  # kubectl describe selects the pod's events by involvedObject.uid too
    code, out, err = await kubectl_run(kubectl, lab, "create", "-f", "-", stdin=yaml.safe_dump(event))
    assert (code, out.strip()) == (0, "event.events.k8s.io/manual.sched created"), err

    code, out, err = await kubectl_run(kubectl, lab, "get", "events.events.k8s.io", "-A")
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.split() == ["NAMESPACE", "LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    [row] = [r for r in rows if "pod/manual" in r]
    assert re.split(r"\s{2,}", row.strip())[0] == NS
    assert re.split(r"\s{2,}", row.strip())[2:] == ["Normal", "Scheduled", "pod/manual",
                                                    "Successfully assigned sched-lab/manual to pair-worker"]

    code, out, err = await kubectl_run(kubectl, lab, "get", "events.v1.events.k8s.io", "-n", NS, "-o", "yaml")
    assert code == 0, err
    [item] = yaml.safe_load(out)["items"]
    assert (item["apiVersion"], item["kind"]) == ("events.k8s.io/v1", "Event")
    assert (item["reportingController"], item["action"], item["regarding"]["uid"]) == ("my-scheduler", "Binding", uid)
    assert item["deprecatedSource"] == {} and item["deprecatedFirstTimestamp"] is None

    code, out, err = await kubectl_run(kubectl, lab, "describe", "pod", "manual", "-n", NS)
    assert code == 0, err
    section = out.split("\nEvents:", 1)[1].splitlines()
    assert section[1].split() == ["Type", "Reason", "Age", "From", "Message"]
    cells = re.split(r"\s{2,}", section[3].strip())
    # From is source.component, or reportingController when that is empty (reference §4.2)
    assert [cells[0], cells[1], cells[3], cells[4]] == [
        "Normal", "Scheduled", "my-scheduler", "Successfully assigned sched-lab/manual to pair-worker"]


async def test_kubectl_create_refused_shows_the_422(kubectl, lab):
    bad = scheduler_event("bad", type="Bogus")
    code, _out, err = await kubectl_run(kubectl, lab, "create", "-f", "-", stdin=yaml.safe_dump(bad))
    assert code == 1
    assert 'The Event "bad" is invalid: type: Invalid value: "": has invalid value: Bogus' in err

