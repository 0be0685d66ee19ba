"""The OpenAPI v3 documents, checked the way kubectl v1.32 reads them.

The helpers below mirror cli-runtime ``query_param_verifier_v3.go`` (``supportsQueryParamV3``), kubectl
``apply/patcher.go`` (``gvkSupportsPatchOpenAPIV3``, ``buildStrategicMergePatchFromOpenAPIV3``) and apimachinery
``strategicpatch.PatchMetaFromOpenAPIV3`` (properties / ``allOf[0].$ref`` / ``items`` resolution).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from observatory.lab.openapi import openapi_v3_core_v1, openapi_v3_hash, openapi_v3_root

REF = "#/components/schemas/"


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return json.loads(openapi_v3_core_v1())


def gvk(kind: str) -> dict[str, str]:
    return {"group": "", "kind": kind, "version": "v1"}


def supports_query_param(doc: dict, kind: str, param: str) -> bool:
    """supportsQueryParamV3: the first PATCH op for the GVK decides, by its operation-level parameters."""
    for item in doc["paths"].values():
        op = item.get("patch")
        if op is None or op.get("x-kubernetes-group-version-kind") != gvk(kind):
            continue
        return any(p.get("name") == param for p in op.get("parameters", []))
    return False


def test_root_discovery() -> None:
    assert openapi_v3_root("ABC") == {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=ABC"}}}
    default = openapi_v3_root()["paths"]["api/v1"]["serverRelativeURL"]
    assert default == "/openapi/v3/api/v1?hash=" + openapi_v3_hash()


def test_hash_is_sha512_of_cached_bytes() -> None:
    body = openapi_v3_core_v1()
    assert body is openapi_v3_core_v1()
    assert openapi_v3_hash() == hashlib.sha512(body).hexdigest().upper()
    assert len(openapi_v3_hash()) == 128


def test_document_header(doc: dict) -> None:
    assert doc["openapi"] == "3.0.0"
    assert doc["info"]["title"] == "Kubernetes"


@pytest.mark.parametrize("kind", ["Pod", "Node", "Namespace", "Event"])
def test_field_validation_supported_for_every_patch_op(doc: dict, kind: str) -> None:
    assert supports_query_param(doc, kind, "fieldValidation")
    patch_ops = [item["patch"] for item in doc["paths"].values()
                 if "patch" in item and item["patch"]["x-kubernetes-group-version-kind"] == gvk(kind)]
    assert patch_ops
    for op in patch_ops:  # Go map order is random, so every PATCH op for the GVK must qualify
        assert "fieldValidation" in [p["name"] for p in op["parameters"]]
        assert "application/strategic-merge-patch+json" in op["requestBody"]["content"]


def test_binding_has_no_patch_but_post_with_field_validation(doc: dict) -> None:
    assert not supports_query_param(doc, "Binding", "fieldValidation")
    post = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/binding"]["post"]
    assert post["x-kubernetes-group-version-kind"] == gvk("Binding")
    assert "fieldValidation" in [p["name"] for p in post["parameters"]]
    assert post["requestBody"]["content"]["*/*"]["schema"] == {"$ref": REF + "io.k8s.api.core.v1.Binding"}


def test_paths_for_all_resources(doc: dict) -> None:
    paths = doc["paths"]
    for p in ("/api/v1/namespaces/{namespace}/pods", "/api/v1/namespaces/{namespace}/pods/{name}",
              "/api/v1/namespaces/{namespace}/pods/{name}/status", "/api/v1/pods", "/api/v1/nodes",
              "/api/v1/nodes/{name}", "/api/v1/nodes/{name}/status", "/api/v1/namespaces",
              "/api/v1/namespaces/{name}", "/api/v1/namespaces/{name}/status", "/api/v1/events",
              "/api/v1/namespaces/{namespace}/events", "/api/v1/namespaces/{namespace}/events/{name}",
              "/api/v1/namespaces/{namespace}/bindings"):
        assert p in paths, p
    item = paths["/api/v1/namespaces/{namespace}/pods/{name}"]
    assert {"get", "put", "patch", "delete", "parameters"} <= set(item)
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace", "pretty"]
    assert item["patch"]["operationId"] == "patchCoreV1NamespacedPod"
    assert item["patch"]["x-kubernetes-action"] == "patch"
    status_patch = paths["/api/v1/namespaces/{namespace}/pods/{name}/status"]["patch"]
    assert status_patch["x-kubernetes-group-version-kind"] == gvk("Pod")
    assert paths["/api/v1/nodes/{name}"]["patch"]["x-kubernetes-group-version-kind"] == gvk("Node")
    assert "delete" not in paths["/api/v1/namespaces"]


def test_components_named_like_upstream(doc: dict) -> None:
    schemas = doc["components"]["schemas"]
    for name in ("io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.PodSpec", "io.k8s.api.core.v1.Container",
                 "io.k8s.api.core.v1.Node", "io.k8s.api.core.v1.Namespace", "io.k8s.api.core.v1.Event",
                 "io.k8s.api.core.v1.EventSeries", "io.k8s.api.core.v1.Binding", "io.k8s.api.core.v1.PodList",
                 "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
                 "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime", "io.k8s.apimachinery.pkg.api.resource.Quantity",
                 "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"):
        assert name in schemas, name
    assert schemas["io.k8s.api.core.v1.Pod"]["x-kubernetes-group-version-kind"] == [gvk("Pod")]
    assert schemas["io.k8s.api.core.v1.Event"]["x-kubernetes-group-version-kind"] == [gvk("Event")]
    assert "x-kubernetes-group-version-kind" not in schemas["io.k8s.api.core.v1.PodSpec"]
    assert schemas["io.k8s.api.core.v1.Container"]["required"] == ["name"]
    assert schemas["io.k8s.api.core.v1.PodSpec"]["required"] == ["containers"]
    props = schemas["io.k8s.api.core.v1.ResourceRequirements"]["properties"]
    assert props["limits"]["additionalProperties"] == {"$ref": REF + "io.k8s.apimachinery.pkg.api.resource.Quantity"}
    assert schemas["io.k8s.api.core.v1.Event"]["properties"]["eventTime"]["allOf"] == [
        {"$ref": REF + "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"}]
    assert schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]["creationTimestamp"]["allOf"] == [
        {"$ref": REF + "io.k8s.apimachinery.pkg.apis.meta.v1.Time"}]
    assert schemas["io.k8s.api.core.v1.HTTPGetAction"]["properties"]["port"]["allOf"] == [
        {"$ref": REF + "io.k8s.apimachinery.pkg.util.intstr.IntOrString"}]
    assert schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["nodeName"]["description"].startswith("NodeName ")


def test_every_ref_resolves(doc: dict) -> None:
    schemas = doc["components"]["schemas"]
    refs: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                refs.append(node["$ref"])
            for v in node.values():
                collect(v)
        elif isinstance(node, list):
            for v in node:
                collect(v)

    collect(doc)
    assert refs
    missing = {r for r in refs if not r.startswith(REF) or r[len(REF):] not in schemas}
    assert missing == set()


def lookup(doc: dict, schema: dict, key: str, *, slice_: bool = False) -> tuple[dict, dict]:
    """PatchMetaFromOpenAPIV3.LookupPatchMetadataFor{Struct,Slice}: (sub-schema, patch meta)."""
    prop = schema["properties"][key]  # KeyError == 'unable to find api field'
    meta = {k: prop[k] for k in ("x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key") if k in prop}
    sub = prop["items"] if slice_ and "items" in prop else prop
    if sub.get("allOf"):
        sub = sub["allOf"][0]
    if "$ref" in sub:
        sub = doc["components"]["schemas"][sub["$ref"][len(REF):]]
    return sub, meta


def test_strategic_merge_metadata_resolves_like_kubectl(doc: dict) -> None:
    pod = next(s for s in doc["components"]["schemas"].values()
               if gvk("Pod") in s.get("x-kubernetes-group-version-kind", []))
    spec, _ = lookup(doc, pod, "spec")
    container, meta = lookup(doc, spec, "containers", slice_=True)
    assert meta == {"x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"}
    _, ports = lookup(doc, container, "ports", slice_=True)
    assert ports["x-kubernetes-patch-merge-key"] == "containerPort"
    _, env = lookup(doc, container, "env", slice_=True)
    assert env["x-kubernetes-patch-merge-key"] == "name"
    _, volumes = lookup(doc, spec, "volumes", slice_=True)
    assert volumes["x-kubernetes-patch-strategy"] == "merge,retainKeys"
    metadata, _ = lookup(doc, pod, "metadata")
    labels, _ = lookup(doc, metadata, "labels")
    assert labels["type"] == "object"
    status, _ = lookup(doc, pod, "status")
    _, conds = lookup(doc, status, "conditions", slice_=True)
    assert conds["x-kubernetes-patch-merge-key"] == "type"
    node = doc["components"]["schemas"]["io.k8s.api.core.v1.Node"]
    node_status, _ = lookup(doc, node, "status")
    assert lookup(doc, node_status, "addresses", slice_=True)[1]["x-kubernetes-patch-merge-key"] == "type"
