"""Status codes and exact response bytes of the lab against kube-apiserver's, from ../shared/k8s-api-reference.md.

Each expected body below is copied from the reference (§1.3-§1.4, §2.2, §3.2, §3.3) with only the object names
changed to this scenario's, and compared byte for byte, trailing newline included.
"""

from __future__ import annotations

import json

import pytest

from observatory.embedded import EmbeddedLab
from observatory.settings import LabSettings
from tests.conftest import API_ONLY

NS = "sched-lab"
BIND = f"/api/v1/namespaces/{NS}/pods/manual/binding"


def binding(pod: str = "manual", node: str = "pair-worker", namespace: str | None = NS) -> dict:
    meta = {"name": pod}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Binding", "metadata": meta,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}}


def pod_manifest(name: str, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.9"}], **spec}}


async def post(http, path: str, body: dict) -> tuple[int, bytes]:
    async with http.post(path, data=json.dumps(body), headers={"Content-Type": "application/json"}) as resp:
        return resp.status, await resp.read()


SUCCESS_201 = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}\n'


async def test_bind_201_exact_body(http):
    assert await post(http, BIND, binding()) == (201, SUCCESS_201)


async def test_bind_twice_409_already_assigned(http):
    await post(http, BIND, binding())
    code, body = await post(http, BIND, binding(node="pair-control-plane"))
    assert code == 409
    assert body == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be '
        b'fulfilled on pods/binding \\"manual\\": pod manual is already assigned to node \\"pair-worker\\"",'
        b'"reason":"Conflict","details":{"name":"manual","kind":"pods/binding"},"code":409}\n'
    )


async def test_bind_gated_pod_409(http):
    gated = pod_manifest("p", schedulingGates=[{"name": "example.com/wait"}])
    assert (await post(http, f"/api/v1/namespaces/{NS}/pods", gated))[0] == 201
    code, body = await post(http, f"/api/v1/namespaces/{NS}/pods/p/binding", binding("p"))
    assert code == 409
    assert json.loads(body)["message"] == (
        'Operation cannot be fulfilled on pods/binding "p": pod p has non-empty .spec.schedulingGates'
    )
    assert json.loads(body)["details"] == {"name": "p", "kind": "pods/binding"}


async def test_bind_deleting_pod_409(http):
    held = pod_manifest("p")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    assert (await post(http, f"/api/v1/namespaces/{NS}/pods", held))[0] == 201
    async with http.delete(f"/api/v1/namespaces/{NS}/pods/p") as resp:
        assert resp.status == 200
        assert "deletionTimestamp" in (await resp.json())["metadata"]
    code, body = await post(http, f"/api/v1/namespaces/{NS}/pods/p/binding", binding("p"))
    assert code == 409
    assert json.loads(body)["message"] == (
        'Operation cannot be fulfilled on pods/binding "p": pod p is being deleted, cannot be assigned to a host'
    )


async def test_bind_missing_pod_404_details_kind_pods(http):
    code, body = await post(http, f"/api/v1/namespaces/{NS}/pods/nope/binding", binding("nope"))
    assert (code, body) == (404, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"nope\\" not found",'
        b'"reason":"NotFound","details":{"name":"nope","kind":"pods"},"code":404}\n'
    ))


async def test_bind_name_mismatch_400(http):
    code, body = await post(http, BIND, binding(pod="other"))
    assert (code, body) == (400, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"name in URL does not match '
        b'name in Binding object","reason":"BadRequest","code":400}\n'
    ))


async def test_bind_namespace_mismatch_400(http):
    code, body = await post(http, BIND, binding(namespace="default"))
    assert (code, body) == (400, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the namespace of the '
        b'provided object does not match the namespace sent on the request","reason":"BadRequest","code":400}\n'
    ))


async def test_bind_empty_target_name_500_without_reason(http):
    body = binding()
    body["target"] = {}
    assert await post(http, BIND, body) == (500, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"target.name: Required value",'
        b'"code":500}\n'
    ))


async def test_bind_wrong_kind_and_no_name_aggregate_500(http):
    body = binding()
    body["target"] = {"kind": "Pod"}
    code, raw = await post(http, BIND, body)
    assert code == 500
    # Go's encoder escapes < and > (HTML-safe JSON), as kube-apiserver's responses do.
    assert json.loads(raw)["message"] == (
        '[target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]'
    )
    assert b"\\u003cempty\\u003e" in raw


async def test_legacy_bindings_endpoint_binds(http, lab):
    code, body = await post(http, f"/api/v1/namespaces/{NS}/bindings", binding())
    assert (code, body) == (201, SUCCESS_201)
    assert lab.store.get("pods", NS, "manual")["spec"]["nodeName"] == "pair-worker"


async def test_legacy_bindings_empty_target_500(http):
    assert await post(http, f"/api/v1/namespaces/{NS}/bindings", {"target": {}}) == (500, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"target.name: Required value",'
        b'"code":500}\n'
    ))


async def test_bind_uid_precondition_409_on_pods(http, lab):
    body = binding()
    body["metadata"]["uid"] = "not-the-uid"
    code, raw = await post(http, BIND, body)
    uid = lab.store.get("pods", NS, "manual")["metadata"]["uid"]
    assert code == 409
    status = json.loads(raw)
    assert status["reason"] == "Conflict"
    assert status["details"] == {"name": "manual", "kind": "pods"}
    assert status["message"] == (
        f'Operation cannot be fulfilled on pods "manual": StorageError: invalid object, Code: 4, '
        f"Key: /registry/pods/{NS}/manual, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
        f"UID in precondition: not-the-uid, UID in object meta: {uid}"
    )
    assert not lab.store.get("pods", NS, "manual")["spec"].get("nodeName")


async def test_bind_dry_run_changes_nothing(http, lab):
    rv = lab.store.resource_version
    assert await post(http, BIND + "?dryRun=All", binding()) == (201, SUCCESS_201)
    assert lab.store.resource_version == rv
    assert not lab.store.get("pods", NS, "manual")["spec"].get("nodeName")


async def test_bind_to_missing_node_succeeds(http, lab):
    assert await post(http, BIND, binding(node="node-that-does-not-exist")) == (201, SUCCESS_201)
    assert lab.store.get("pods", NS, "manual")["spec"]["nodeName"] == "node-that-does-not-exist"


async def test_invalid_pod_422(http):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nginx"},
           "spec": {"containers": [{"name": "nginx"}]}}
    assert await post(http, "/api/v1/namespaces/default/pods", pod) == (422, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Pod \\"nginx\\" is invalid: '
        b'spec.containers[0].image: Required value","reason":"Invalid","details":{"name":"nginx","kind":"Pod",'
        b'"causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers[0].image"}]},'
        b'"code":422}\n'
    ))


async def test_duplicate_pod_409_already_exists(http):
    pod = pod_manifest("nginx")
    assert (await post(http, "/api/v1/namespaces/default/pods", pod))[0] == 201
    assert await post(http, "/api/v1/namespaces/default/pods", pod) == (409, (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"nginx\\" already '
        b'exists","reason":"AlreadyExists","details":{"name":"nginx","kind":"pods"},"code":409}\n'
    ))


async def test_stale_resource_version_update_409(http):
    _code, raw = await post(http, "/api/v1/namespaces/default/pods", pod_manifest("nginx"))
    stale = json.loads(raw)
    stale["metadata"]["labels"] = {"a": "1"}
    async with http.put("/api/v1/namespaces/default/pods/nginx", json=stale) as resp:
        assert resp.status == 200
    stale["metadata"]["labels"] = {"a": "2"}
    async with http.put("/api/v1/namespaces/default/pods/nginx", json=stale) as resp:
        assert resp.status == 409
        status = await resp.json()
    assert status["reason"] == "Conflict"
    assert status["message"] == (
        'Operation cannot be fulfilled on pods "nginx": the object has been modified; please apply your changes to '
        "the latest version and try again"
    )


async def test_unsupported_field_label_400(http):
    async with http.get("/api/v1/pods?fieldSelector=foo.bar%3Dbaz") as resp:
        assert resp.status == 400
        assert await resp.read() == (
            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"field label not '
            b'supported: foo.bar","reason":"BadRequest","code":400}\n'
        )


async def test_get_on_binding_405(http):
    async with http.get(BIND) as resp:
        assert resp.status == 405
        assert await resp.read() == (
            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow '
            b'this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}\n'
        )


async def test_unknown_path_404(http):
    async with http.get("/api/v1/widgets") as resp:
        assert resp.status == 404
        status = await resp.json()
    assert status["message"] == "the server could not find the requested resource"
    assert status["reason"] == "NotFound"


async def test_watch_too_old_resource_version_gets_410_error_event(tmp_path):
    lab = EmbeddedLab(LabSettings(history_size=3, **API_ONLY), scenario="pair", kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        import aiohttp

        async with aiohttp.ClientSession(base_url=lab.url) as http:
            for i in range(5):
                assert (await post(http, "/api/v1/namespaces/default/pods", pod_manifest(f"p{i}")))[0] == 201
            oldest_kept = lab.store.compacted_rv("pods")
            async with http.get("/api/v1/pods?watch=1&resourceVersion=1") as resp:
                assert resp.status == 200
                assert resp.headers["Content-Type"] == "application/json"
                body = await resp.read()
        assert body == (
            b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
            b'"message":"too old resource version: 1 (' + str(oldest_kept).encode() + b')","reason":"Expired",'
            b'"code":410}}\n'
        )
    finally:
        await lab.stop()


@pytest.mark.parametrize("selector",
                         ["spec.nodeName%3D", "spec.schedulerName%3Dnobody-at-all", "status.phase%3DPending"])
async def test_pod_field_selectors_find_the_unbound_pod(http, selector):
    async with http.get(f"/api/v1/pods?fieldSelector={selector}") as resp:
        assert resp.status == 200
        names = [p["metadata"]["name"] for p in (await resp.json())["items"]]
    assert names == ["manual"]


async def test_discovery_lists_binding_status_and_short_names(http):
    async with http.get("/api/v1") as resp:
        body = await resp.json()
    assert body["kind"] == "APIResourceList" and "apiVersion" not in body
    entries = {r["name"]: r for r in body["resources"]}
    assert entries["pods/binding"] == {"name": "pods/binding", "singularName": "", "namespaced": True,
                                       "kind": "Binding", "verbs": ["create"]}
    assert entries["bindings"] == {"name": "bindings", "singularName": "binding", "namespaced": True,
                                   "kind": "Binding", "verbs": ["create"]}
    assert entries["pods/status"]["verbs"] == ["get", "patch", "update"]
    assert entries["pods"] == {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
                               "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update",
                                         "watch"],
                               "shortNames": ["po"], "categories": ["all"], "storageVersionHash": "xPOwRZ+Yhw8="}
    assert [entries[n]["shortNames"] for n in ("nodes", "namespaces", "events")] == [["no"], ["ns"], ["ev"]]
    async with http.get("/apis") as resp:
        groups = await resp.json()
    assert groups["kind"] == "APIGroupList"
    assert [g["name"] for g in groups["groups"]] == ["apps", "events.k8s.io", "authorization.k8s.io", "batch",
                                                     "policy", "storage.k8s.io", "scheduling.k8s.io",
                                                     "coordination.k8s.io", "discovery.k8s.io"]
    assert entries["pods/eviction"] == {"name": "pods/eviction", "singularName": "", "namespaced": True,
                                        "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]}
    async with http.get("/apis/coordination.k8s.io/v1") as resp:
        leases = await resp.json()
    assert leases["groupVersion"] == "coordination.k8s.io/v1"
    assert [r["name"] for r in leases["resources"]] == ["leases"]
    async with http.get("/apis/scheduling.k8s.io/v1") as resp:
        scheduling = await resp.json()
    assert scheduling["resources"] == [{  # a v1.3x kube-apiserver's entry, storageVersionHash included
        "name": "priorityclasses", "singularName": "priorityclass", "namespaced": False, "kind": "PriorityClass",
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        "shortNames": ["pc"], "storageVersionHash": "1QwjyaZjj3Y="}]


async def test_leases_are_served_in_their_group(http):
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "kube-scheduler"},
             "spec": {"holderIdentity": "someone", "leaseDurationSeconds": 15}}
    base = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    async with http.post(base, json=lease) as resp:
        assert resp.status == 201
        created = await resp.json()
    assert (created["kind"], created["apiVersion"]) == ("Lease", "coordination.k8s.io/v1")
    async with http.get(base + "/nope") as resp:
        assert (await resp.json())["message"] == 'leases.coordination.k8s.io "nope" not found'
    async with http.get("/apis/coordination.k8s.io/v1/leases?fieldSelector=spec.holderIdentity%3Dx") as resp:
        assert resp.status == 400
        assert (await resp.json())["message"] == (
            '"spec.holderIdentity" is not a known field selector: only "metadata.name", "metadata.namespace"')
