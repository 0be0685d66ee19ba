"""PATCH bodies that would erase or rename an object get kube-apiserver's answers.

The patcher (apiserver ``pkg/endpoints/handlers/patch.go``) applies the patch to the stored object, decodes the
result, then ``checkName`` (``handlers/rest.go``) compares its name and namespace with the URL: 400 BadRequest
``the name of the object (x based on URL) was undeterminable: name must be provided`` when a patch removed
``/metadata`` or the strategic ``{"$patch": "delete"}`` emptied the object, ``the name of the object (y) does not
match the name on the URL (x)``, ``the namespace of the object (b) does not match the namespace on the request (a)``.
Patches carry no uid precondition (``rest.DefaultUpdatedObjectInfo(nil, ...)``), so a changed uid reaches
``rest.BeforeUpdate``: 422 ``metadata.uid: Invalid value: "x": field is immutable`` (apimachinery
``ValidateObjectMetaAccessorUpdate``), once from the common checks and once from ``ValidatePodUpdate`` in the causes.
Nothing is stored on any refusal.
"""

from __future__ import annotations

import json

import pytest

from tests.lab.module_lab import module_http_fixture, module_lab_fixture

module_loop = pytest.mark.asyncio(loop_scope="module")
lab = module_lab_fixture()
http = module_http_fixture()

JSON_PATCH = "application/json-patch+json"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


async def make_pod(http, name: str) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"},
                                                            "annotations": {"note": "keep"}},
           "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}
    async with http.post("/api/v1/namespaces/default/pods", json=pod) as resp:
        assert resp.status == 201, await resp.text()
        return await resp.json()


async def send(http, name: str, content_type: str, body) -> tuple[int, dict]:
    async with http.patch(f"/api/v1/namespaces/default/pods/{name}", data=json.dumps(body),
                          headers={"Content-Type": content_type}) as resp:
        return resp.status, await resp.json()


def bad_request(message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": "BadRequest", "code": 400}


async def unchanged(lab, before: dict) -> bool:
    now = lab.store.get("pods", "default", before["metadata"]["name"])
    return now["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"] and now["spec"] == before["spec"]


@module_loop
@pytest.mark.parametrize(("name", "content_type", "body"), [
    ("wipe-metadata", JSON_PATCH, [{"op": "remove", "path": "/metadata"}]),
    ("wipe-all", STRATEGIC, {"$patch": "delete"}),
    ("wipe-meta-smp", STRATEGIC, {"metadata": {"$patch": "delete"}}),
    ("wipe-meta-merge", MERGE, {"metadata": None}),
    ("wipe-name", JSON_PATCH, [{"op": "remove", "path": "/metadata/name"}]),
])
async def test_a_patch_that_leaves_no_name_is_refused(http, lab, name, content_type, body):
    before = await make_pod(http, name)
    assert await send(http, name, content_type, body) == (400, bad_request(
        f"the name of the object ({name} based on URL) was undeterminable: name must be provided"))
    assert await unchanged(lab, before)


@module_loop
async def test_renaming_through_a_patch_is_refused(http, lab):
    before = await make_pod(http, "rename-me")
    assert await send(http, "rename-me", JSON_PATCH, [{"op": "replace", "path": "/metadata/name", "value": "x"}]) == (
        400, bad_request("the name of the object (x) does not match the name on the URL (rename-me)"))
    assert await send(http, "rename-me", MERGE, {"metadata": {"namespace": "sched-lab"}}) == (400, bad_request(
        "the namespace of the object (sched-lab) does not match the namespace on the request (default)"))
    assert await unchanged(lab, before)


@module_loop
async def test_a_changed_uid_is_immutable(http, lab):
    before = await make_pod(http, "uid-patch")
    detail = 'Invalid value: "not-the-uid": field is immutable'
    code, status = await send(http, "uid-patch", JSON_PATCH,
                              [{"op": "replace", "path": "/metadata/uid", "value": "not-the-uid"}])
    assert (code, status["reason"], status["message"]) == (
        422, "Invalid", f'Pod "uid-patch" is invalid: metadata.uid: {detail}')
    assert status["details"] == {"name": "uid-patch", "kind": "Pod", "causes": [
        {"reason": "FieldValueInvalid", "message": detail, "field": "metadata.uid"}] * 2}
    assert await unchanged(lab, before)


@module_loop
async def test_a_patch_that_makes_the_pod_invalid_is_422(http, lab):
    before = await make_pod(http, "bad-label")
    code, status = await send(http, "bad-label", MERGE, {"metadata": {"labels": {"a b": "x"}}})
    detail = ("Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must "
              "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
              "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
    assert (code, status["message"]) == (422, f'Pod "bad-label" is invalid: metadata.labels: {detail}')
    assert await unchanged(lab, before)


@module_loop
async def test_a_json_patch_to_another_version_does_not_decode(http, lab):
    before = await make_pod(http, "v2-patch")
    code, status = await send(http, "v2-patch", JSON_PATCH, [{"op": "replace", "path": "/apiVersion", "value": "v2"}])
    assert code == 422
    assert status["message"].startswith(' "" is invalid: patch: Invalid value: "{')
    assert status["message"].endswith('": no kind "Pod" is registered for version "v2" in scheme '
                                      '"pkg/api/legacyscheme/scheme.go:30"')
    assert await unchanged(lab, before)


@module_loop
async def test_a_stale_resource_version_in_a_patch_conflicts(http, lab):
    before = await make_pod(http, "stale-rv")
    code, status = await send(http, "stale-rv", MERGE, {"metadata": {"resourceVersion": "1", "uid": "other"}})
    assert (code, status["message"]) == (409, 'Operation cannot be fulfilled on pods "stale-rv": the object has '
                                         "been modified; please apply your changes to the latest version and try "
                                         "again")
    assert await unchanged(lab, before)
