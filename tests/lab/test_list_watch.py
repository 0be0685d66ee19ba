"""List and watch semantics of the lab (reference §3): initial events, resume, bookmarks, timeouts, paging,
selectors, and what binding and create do to the pod (§1.5, §1.6)."""

from __future__ import annotations

import asyncio
import json

from observatory.lab.registry import BINDING_SUCCESS


def pod(name: str, labels: dict | None = None, **spec) -> dict:
    meta: dict = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], **spec}}


async def create(http, name: str, ns: str = "default", **kw) -> dict:
    async with http.post(f"/api/v1/namespaces/{ns}/pods", json=pod(name, **kw)) as resp:
        assert resp.status == 201, await resp.text()
        return await resp.json()


async def read_events(resp) -> list[dict]:
    return [json.loads(line) for line in (await resp.read()).splitlines()]


async def test_watch_without_resource_version_starts_with_synthetic_added(http):
    async with http.get("/api/v1/nodes?watch=1&timeoutSeconds=1") as resp:
        assert resp.status == 200
        events = await read_events(resp)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "pair-control-plane"), ("ADDED", "pair-worker")]
    assert events[0]["object"]["kind"] == "Node" and events[0]["object"]["apiVersion"] == "v1"


async def test_watch_timeout_seconds_ends_the_stream_cleanly(http, lab):
    url = f"/api/v1/pods?watch=true&timeoutSeconds=1&resourceVersion={lab.store.resource_version}"
    async with http.get(url) as resp:
        loop = asyncio.get_running_loop()
        start = loop.time()
        assert await resp.read() == b""
        assert loop.time() - start >= 0.9


async def test_bookmarks_carry_the_current_resource_version(http, lab):
    rv = lab.store.resource_version
    async with http.get(f"/api/v1/namespaces/sched-lab/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=1"
                        f"&resourceVersion={rv}") as resp:
        events = await read_events(resp)
    assert events, "a bookmark is due every 0.2 s in the test settings"
    assert all(e == {"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                                    "metadata": {"resourceVersion": str(rv)}}} for e in events)


async def test_no_bookmarks_unless_asked(http, lab):
    async with http.get(f"/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion={lab.store.resource_version}") as resp:
        assert await read_events(resp) == []


async def test_watch_list_ends_initial_events_with_an_annotated_bookmark(http, lab):
    async with http.get("/api/v1/namespaces/sched-lab/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                        "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1") as resp:
        events = await read_events(resp)
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == "manual"
    assert events[1]["type"] == "BOOKMARK"
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_limit_and_continue_page_with_the_first_pages_resource_version(http):
    for i in range(5):
        await create(http, f"p{i}")
    async with http.get("/api/v1/namespaces/default/pods?limit=2") as resp:
        first = await resp.json()
    assert [p["metadata"]["name"] for p in first["items"]] == ["p0", "p1"]
    assert first["metadata"]["remainingItemCount"] == 3
    names = [p["metadata"]["name"] for p in first["items"]]
    token = first["metadata"]["continue"]
    await create(http, "p9")  # written after the first page: the pages keep the first page's resourceVersion
    while token:
        async with http.get(f"/api/v1/namespaces/default/pods?limit=2&continue={token}") as resp:
            page = await resp.json()
        assert page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        names += [p["metadata"]["name"] for p in page["items"]]
        token = page["metadata"].get("continue", "")
    assert names[:5] == ["p0", "p1", "p2", "p3", "p4"]


async def test_label_selectors_equality_and_set_based(http):
    await create(http, "a", labels={"app": "web", "tier": "front"})
    await create(http, "b", labels={"app": "db"})
    await create(http, "c")
    for selector, expected in [("app%3Dweb", ["a"]), ("app!%3Dweb", ["b", "c"]), ("app+in+(web,db)", ["a", "b"]),
                               ("!app", ["c"]), ("app,tier+notin+(front)", ["b"])]:
        async with http.get(f"/api/v1/namespaces/default/pods?labelSelector={selector}") as resp:
            assert resp.status == 200, await resp.text()
            assert [p["metadata"]["name"] for p in (await resp.json())["items"]] == expected, selector


async def test_cluster_wide_lists_of_pods_and_events(http):
    await create(http, "a")
    async with http.get("/api/v1/pods") as resp:
        body = await resp.json()
    assert body["kind"] == "PodList"
    assert sorted((p["metadata"]["namespace"], p["metadata"]["name"]) for p in body["items"]) == [
        ("default", "a"), ("sched-lab", "manual")]
    assert all("kind" not in p for p in body["items"])
    async with http.get("/api/v1/events") as resp:
        assert (await resp.json())["kind"] == "EventList"


async def test_event_field_selectors(http):
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "manual.1"},
             "involvedObject": {"kind": "Pod", "namespace": "sched-lab", "name": "manual"},
             "reason": "Scheduled", "type": "Normal", "source": {"component": "default-scheduler"}, "message": "m"}
    async with http.post("/api/v1/namespaces/sched-lab/events", json=event) as resp:
        assert resp.status == 201
    for selector, count in [("involvedObject.name%3Dmanual", 1), ("reason%3DFailedScheduling", 0),
                            ("source%3Ddefault-scheduler,type%3DNormal", 1), ("involvedObject.kind!%3DPod", 0)]:
        async with http.get(f"/api/v1/events?fieldSelector={selector}") as resp:
            assert len((await resp.json())["items"]) == count, selector


async def test_binding_sets_node_condition_and_merges_annotations(http, lab):
    before = lab.store.get("pods", "sched-lab", "manual")
    assert "conditions" not in before["status"]  # nothing looked at it: no PodScheduled condition at all
    body = {"metadata": {"name": "manual", "annotations": {"lesson": "manual-binding"}},
            "target": {"name": "pair-worker"}}
    async with http.post("/api/v1/namespaces/sched-lab/pods/manual/binding", json=body) as resp:
        assert (resp.status, await resp.json()) == (201, BINDING_SUCCESS)
    after = lab.store.get("pods", "sched-lab", "manual")
    assert after["spec"]["nodeName"] == "pair-worker"
    assert after["metadata"]["annotations"]["lesson"] == "manual-binding"
    [cond] = after["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["lastProbeTime"]) == ("PodScheduled", "True", None)
    assert after["status"]["phase"] == "Pending"
    assert int(after["metadata"]["resourceVersion"]) == int(before["metadata"]["resourceVersion"]) + 1
    async with http.get("/api/v1/events") as resp:
        assert (await resp.json())["items"] == []  # the API server records no Event for a binding


async def test_binding_replaces_an_unschedulable_condition(http, lab):
    current = lab.store.get("pods", "sched-lab", "manual")
    status = {"metadata": {"name": "manual"}, "status": {**current["status"], "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/2 nodes are available"}]}}
    async with http.put("/api/v1/namespaces/sched-lab/pods/manual/status", json=status) as resp:
        assert resp.status == 200
    async with http.post("/api/v1/namespaces/sched-lab/pods/manual/binding",
                         json={"metadata": {"name": "manual"}, "target": {"name": "pair-worker"}}) as resp:
        assert resp.status == 201
    [cond] = lab.store.get("pods", "sched-lab", "manual")["status"]["conditions"]
    assert "reason" not in cond and "message" not in cond and cond["status"] == "True"


async def test_gated_pod_gets_the_scheduling_gated_condition(http):
    created = await create(http, "gated", schedulingGates=[{"name": "example.com/quota"}])
    assert created["status"]["conditions"] == [{
        "type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": None,
        "reason": "SchedulingGated", "message": "Scheduling is blocked due to non-empty scheduling gates"}]


async def test_create_in_a_missing_namespace_is_404(http):
    async with http.post("/api/v1/namespaces/nope/pods", json=pod("x")) as resp:
        assert resp.status == 404
        assert (await resp.json())["message"] == 'namespaces "nope" not found'


async def test_delete_returns_the_object_and_removes_it(http):
    created = await create(http, "gone")
    async with http.delete("/api/v1/namespaces/default/pods/gone") as resp:
        assert resp.status == 200
        body = await resp.json()
    assert body["kind"] == "Pod" and body["metadata"]["uid"] == created["metadata"]["uid"]
    async with http.get("/api/v1/namespaces/default/pods/gone") as resp:
        assert resp.status == 404


async def test_merge_patch_and_status_subresource(http):
    await create(http, "p")
    async with http.patch("/api/v1/namespaces/default/pods/p", data=json.dumps({"metadata": {"labels": {"x": "1"}}}),
                          headers={"Content-Type": "application/merge-patch+json"}) as resp:
        assert resp.status == 200
        assert (await resp.json())["metadata"]["labels"] == {"x": "1"}
    async with http.patch("/api/v1/namespaces/default/pods/p/status",
                          data=json.dumps({"status": {"phase": "Running"}, "spec": {"nodeName": "sneaky"}}),
                          headers={"Content-Type": "application/merge-patch+json"}) as resp:
        body = await resp.json()
    assert body["status"]["phase"] == "Running"
    assert "nodeName" not in body["spec"]  # the status subresource never writes spec


async def test_table_for_pods_has_wide_columns_and_partial_metadata(http):
    async with http.get("/api/v1/namespaces/sched-lab/pods",
                        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}) as resp:
        table = await resp.json()
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]
    [row] = table["rows"]
    assert row["cells"][:3] == ["manual", "0/1", "Pending"]
    assert row["object"]["kind"] == "PartialObjectMetadata"


async def test_watch_list_with_a_resource_version_does_not_replay_older_history(http, lab):
    await create(http, "gone")
    async with http.delete("/api/v1/namespaces/default/pods/gone") as resp:
        assert resp.status == 200
    async with http.get("/api/v1/pods?watch=1&resourceVersion=1&sendInitialEvents=true&allowWatchBookmarks=true"
                        "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1") as resp:
        events = await read_events(resp)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events if e["type"] != "BOOKMARK"] == [
        ("ADDED", "manual")]
    end = events[1]
    assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert end["object"]["metadata"]["resourceVersion"] == str(lab.store.resource_version)


async def test_health_endpoints_answer_ok(http):
    for path in ("/healthz", "/livez", "/readyz"):
        async with http.get(path) as resp:
            assert (resp.status, await resp.text()) == (200, "ok")


async def test_a_scenario_without_system_namespaces_still_has_them(tmp_path):
    from observatory.embedded import EmbeddedLab
    from observatory.settings import LabSettings
    from tests.conftest import API_ONLY

    custom = tmp_path / "custom.yaml"
    custom.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n---\n"
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n")
    lab = EmbeddedLab(LabSettings(**API_ONLY), scenario=str(custom), kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        names = [ns["metadata"]["name"] for ns in lab.store.iter("namespaces")]
        assert names == ["default", "kube-node-lease", "kube-public", "kube-system", "team-a"]
        assert lab.store.get("pods", "default", "p") is not None
    finally:
        await lab.stop()


async def test_watch_from_a_future_resource_version_is_504_too_large(http, lab):
    future = lab.store.resource_version + 100
    async with http.get(f"/api/v1/pods?watch=1&resourceVersion={future}") as resp:
        assert resp.status == 504
        status = await resp.json()
    assert status["reason"] == "Timeout"
    assert status["message"] == f"Timeout: Too large resource version: {future}, current: {lab.store.resource_version}"
