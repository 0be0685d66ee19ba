"""PATCH application against kube-apiserver's semantics: the bodies kubectl sends, directives and exact errors."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from observatory.lab.patch import GENERIC_422, PatchError, json_merge_patch, json_patch
from observatory.lab.strategicpatch import strategic_merge_patch

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def make_pod() -> dict[str, Any]:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": "nginx", "namespace": "default", "uid": "u-1", "resourceVersion": "10",
                     "labels": {"app": "web"}, "annotations": {"note": "a"}, "finalizers": ["x.io/a", "x.io/b"]},
        "spec": {
            "containers": [
                {"name": "nginx", "image": "nginx:1.24", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                 "env": [{"name": "A", "value": "1"}]},
                {"name": "sidecar", "image": "busybox"},
            ],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
            "schedulerName": "default-scheduler",
        },
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]},
    }


def make_node() -> dict[str, Any]:
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1"}},
        "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"],
                 "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
        "status": {
            "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "False"}],
            "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}, {"type": "Hostname", "address": "node-1"}],
        },
    }


def error(fn: Any, *args: Any) -> PatchError:
    with pytest.raises(PatchError) as info:
        fn(*args)
    return info.value


def directive_keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [k for k in value if k.startswith("$")]
        return found + [k for v in value.values() for k in directive_keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in directive_keys(v)]
    return []


# --- JSON merge patch (kubectl label / annotate) ---------------------------------------------------------------

def test_kubectl_label_adds_and_overwrites() -> None:
    pod = make_pod()
    out = json_merge_patch(pod, {"metadata": {"labels": {"env": "prod", "app": "api"}}})
    assert out["metadata"]["labels"] == {"app": "api", "env": "prod"}
    assert out["spec"] == pod["spec"]
    assert pod["metadata"]["labels"] == {"app": "web"}  # input untouched


def test_kubectl_label_remove_with_resource_version() -> None:
    out = json_merge_patch(make_pod(), {"metadata": {"labels": {"app": None}, "resourceVersion": "10"}})
    assert out["metadata"]["labels"] == {}
    assert out["metadata"]["resourceVersion"] == "10"


def test_kubectl_annotate_on_object_without_annotations() -> None:
    node = make_node()
    out = json_merge_patch(node, {"metadata": {"annotations": {"owner": "team-a", "gone": None}}})
    assert out["metadata"]["annotations"] == {"owner": "team-a"}


def test_merge_patch_replaces_lists_and_prunes_nulls_in_new_values() -> None:
    out = json_merge_patch(make_pod(), {"spec": {"tolerations": [{"key": "k", "operator": "Exists", "value": None},
                                                                 None]}})
    assert out["spec"]["tolerations"] == [{"key": "k", "operator": "Exists"}]
    out = json_merge_patch(make_pod(), {"spec": {"schedulerName": {"a": None, "b": 1}}})
    assert out["spec"]["schedulerName"] == {"b": 1}
    out = json_merge_patch(make_pod(), {"metadata": {"labels": "flat"}})
    assert out["metadata"]["labels"] == "flat"


def test_merge_patch_from_raw_bytes() -> None:
    out = json_merge_patch(make_node(), b'{"spec":{"unschedulable":true}}')
    assert out["spec"]["unschedulable"] is True


@pytest.mark.parametrize("body", [None, 5, "x", b"{bad", b"", b"null", b'"str"'])
def test_merge_patch_invalid_bodies(body: Any) -> None:
    err = error(json_merge_patch, make_pod(), body)
    assert (err.code, err.reason, err.message, err.details) == (400, "BadRequest", "Invalid JSON Patch", None)


def test_merge_patch_array_replaces_document_and_fails_to_decode() -> None:
    err = error(json_merge_patch, make_pod(), [1, None])
    detail = ('Invalid value: "[1]": couldn\'t get version/kind; json parse error: json: cannot unmarshal array into '
              'Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
              '"json:\\"kind,omitempty\\"" }')
    assert err.code == 422 and err.reason == "Invalid"
    assert err.message == ' "" is invalid: patch: ' + detail
    assert err.details == {"causes": [{"reason": "FieldValueInvalid", "message": detail, "field": "patch"}]}


# --- JSON patch ----------------------------------------------------------------------------------------------------

def test_json_patch_ops() -> None:
    pod = make_pod()
    out = json_patch(pod, [
        {"op": "add", "path": "/metadata/labels/tier", "value": "front"},
        {"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:1.25"},
        {"op": "remove", "path": "/metadata/finalizers/0"},
        {"op": "test", "path": "/status/phase", "value": "Pending"},
    ])
    assert out["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert out["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert out["metadata"]["finalizers"] == ["x.io/b"]
    assert pod == make_pod()


def test_json_patch_null_body_is_a_no_op() -> None:
    assert json_patch(make_pod(), None) == make_pod()
    assert json_patch(make_pod(), b"null") == make_pod()


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "test", "path": "/status/phase", "value": "Running"}],
        [{"op": "remove", "path": "/metadata/labels/missing"}],
        [{"op": "replace", "path": "/spec/nodeName", "value": "n"}],
        [{"op": "add", "path": "/no/such/parent", "value": 1}],
        [{"op": "frobnicate", "path": "/spec"}],
        [{"path": "/spec"}],
        [None],
    ],
)
def test_json_patch_that_cannot_apply_is_generic_422(ops: Any) -> None:
    err = error(json_patch, make_pod(), ops)
    assert (err.code, err.reason, err.message, err.details) == (
        422, "Invalid", "the server rejected our request due to an error in our request", {})
    assert err.message == GENERIC_422
    status = err.status_error().status
    assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": GENERIC_422, "reason": "Invalid", "details": {}, "code": 422}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        ("just text", "invalid character 'j' looking for beginning of value"),
        (b'"text"', "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
        ([{"op": "add"}, "x"], "json: cannot unmarshal string into Go value of type jsonpatch.Operation"),
        ([1], "json: cannot unmarshal number into Go value of type jsonpatch.Operation"),
        (b'[{"op":"add",}]', "invalid character '}' looking for beginning of object key string"),
        (b'[{"op" "add"}]', "invalid character '\"' after object key"),
        (b'[{"op":"add" "path":"/a"}]', "invalid character '\"' after object key:value pair"),
        (b'[{"op":"add"} {"op":"remove"}]', "invalid character '{' after array element"),
        (b"[] x", "invalid character 'x' after top-level value"),
        (b'[{"op":"add"', "unexpected end of JSON input"),
        (b"", "unexpected end of JSON input"),
    ],
)
def test_json_patch_undecodable_bodies_are_400(body: Any, message: str) -> None:
    err = error(json_patch, make_pod(), body)
    assert (err.code, err.reason, err.message) == (400, "BadRequest", message)
    assert err.status_error().status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                         "message": message, "reason": "BadRequest", "code": 400}


def test_json_patch_too_many_operations() -> None:
    ops = [{"op": "test", "path": "/kind", "value": "Pod"}] * 10001
    err = error(json_patch, make_pod(), ops)
    assert (err.code, err.reason) == (413, "RequestEntityTooLarge")
    assert err.message == ("Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
                           "got 10001")


# --- strategic merge patch: what kubectl sends ------------------------------------------------------------------

def test_kubectl_taint_add_replaces_the_list() -> None:
    node = make_node()
    taints = [{"effect": "NoSchedule", "key": "dedicated", "value": "gpu"},
              {"effect": "NoExecute", "key": "maintenance"}]
    out = strategic_merge_patch(node, {"spec": {"taints": taints}}, "Node")
    assert out["spec"]["taints"] == taints
    assert node == make_node()


def test_kubectl_taint_remove_last_sends_null() -> None:
    out = strategic_merge_patch(make_node(), {"spec": {"taints": None}}, "Node")
    assert "taints" not in out["spec"]
    assert out["spec"]["podCIDRs"] == ["10.244.1.0/24"]


def test_kubectl_cordon_and_uncordon() -> None:
    cordoned = strategic_merge_patch(make_node(), {"spec": {"unschedulable": True}}, "Node")
    assert cordoned["spec"]["unschedulable"] is True
    uncordoned = strategic_merge_patch(cordoned, {"spec": {"unschedulable": None}}, "Node")
    assert uncordoned == make_node()


def test_kubectl_apply_existing_pod_with_set_element_order() -> None:
    last = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nginx", "namespace": "default"},
                       "spec": {"containers": [{"image": "nginx:1.25", "name": "nginx"},
                                               {"image": "busybox", "name": "sidecar"}]}}) + "\n"
    body = {
        "metadata": {"annotations": {LAST_APPLIED: last}},
        "spec": {"$setElementOrder/containers": [{"name": "nginx"}, {"name": "sidecar"}],
                 "containers": [{"image": "nginx:1.25", "name": "nginx"}]},
    }
    pod = make_pod()
    out = strategic_merge_patch(pod, body, "Pod")
    assert out["metadata"]["annotations"] == {"note": "a", LAST_APPLIED: last}
    assert out["spec"]["containers"] == [
        {"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80, "protocol": "TCP"}],
         "env": [{"name": "A", "value": "1"}]},
        {"name": "sidecar", "image": "busybox"},
    ]
    assert directive_keys(out) == []
    assert pod == make_pod() and "$setElementOrder/containers" in body["spec"]


def test_set_element_order_reorders_without_content_change() -> None:
    body = {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "nginx"}]}}
    out = strategic_merge_patch(make_pod(), body, "Pod")
    assert [c["name"] for c in out["spec"]["containers"]] == ["sidecar", "nginx"]


def test_set_element_order_with_added_container() -> None:
    body = {"spec": {"$setElementOrder/containers": [{"name": "nginx"}, {"name": "log"}, {"name": "sidecar"}],
                     "containers": [{"name": "log", "image": "fluentbit"}]}}
    out = strategic_merge_patch(make_pod(), body, "Pod")
    assert [c["name"] for c in out["spec"]["containers"]] == ["nginx", "log", "sidecar"]


def test_set_element_order_for_a_new_list() -> None:
    body = {"metadata": {"$setElementOrder/ownerReferences": [{"uid": "b"}, {"uid": "a"}],
                         "ownerReferences": [{"uid": "b", "kind": "ReplicaSet", "name": "rs-b"},
                                             {"uid": "a", "kind": "ReplicaSet", "name": "rs-a"}]}}
    out = strategic_merge_patch(make_pod(), body, "Pod")
    assert out["metadata"]["ownerReferences"] == [{"uid": "b", "kind": "ReplicaSet", "name": "rs-b"},
                                                  {"uid": "a", "kind": "ReplicaSet", "name": "rs-a"}]
    assert "$setElementOrder/ownerReferences" not in out["metadata"]


# --- strategic merge patch: merge semantics ---------------------------------------------------------------------

def test_containers_merge_by_name_and_new_items_go_first_without_order() -> None:
    out = strategic_merge_patch(make_pod(), {"spec": {"containers": [{"name": "extra", "image": "x"}]}}, "Pod")
    assert [c["name"] for c in out["spec"]["containers"]] == ["extra", "nginx", "sidecar"]


def test_nested_ports_and_env_merge_by_their_keys() -> None:
    body = {"spec": {"containers": [{"name": "nginx", "ports": [{"containerPort": 80, "name": "http"},
                                                                {"containerPort": 443}],
                                     "env": [{"name": "A", "value": "2"}, {"name": "B", "value": None}]}]}}
    out = strategic_merge_patch(make_pod(), body, "Pod")
    nginx = out["spec"]["containers"][0]
    assert nginx["ports"] == [{"containerPort": 80, "protocol": "TCP", "name": "http"}, {"containerPort": 443}]
    assert nginx["env"] == [{"name": "A", "value": "2"}, {"name": "B"}]
    assert out["spec"]["containers"][1] == {"name": "sidecar", "image": "busybox"}


def test_tolerations_have_no_strategy_and_are_replaced() -> None:
    tol = [{"key": "gpu", "operator": "Exists"}]
    assert strategic_merge_patch(make_pod(), {"spec": {"tolerations": tol}}, "Pod")["spec"]["tolerations"] == tol


def test_pod_and_node_conditions_merge_by_type() -> None:
    out = strategic_merge_patch(make_pod(), {"status": {"conditions": [
        {"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "False"}]}}, "Pod")
    assert out["status"]["conditions"] == [{"type": "PodScheduled", "status": "True"},
                                           {"type": "Ready", "status": "False"}]
    out = strategic_merge_patch(make_node(), {"status": {
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        "addresses": [{"type": "Hostname", "address": "n1"}]}}, "Node")
    assert out["status"]["conditions"] == [{"type": "MemoryPressure", "status": "False"},
                                           {"type": "Ready", "status": "True", "reason": "KubeletReady"}]
    assert out["status"]["addresses"] == [{"type": "InternalIP", "address": "172.18.0.2"},
                                          {"type": "Hostname", "address": "n1"}]


def test_finalizers_merge_as_a_set_and_delete_from_primitive_list() -> None:
    out = strategic_merge_patch(make_pod(), {"metadata": {"finalizers": ["x.io/c", "x.io/a"]}}, "Pod")
    assert out["metadata"]["finalizers"] == ["x.io/c", "x.io/a", "x.io/b"]
    out = strategic_merge_patch(make_pod(), {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x.io/a"]}}, "Pod")
    assert out["metadata"]["finalizers"] == ["x.io/b"]
    node = make_node()
    out = strategic_merge_patch(node, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}, "Node")
    assert out == node


def test_patch_delete_and_replace_in_lists() -> None:
    out = strategic_merge_patch(make_pod(), {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}, "Pod")
    assert [c["name"] for c in out["spec"]["containers"]] == ["nginx"]
    body = {"spec": {"containers": [{"name": "solo", "image": "i"}, {"$patch": "replace"}]}}
    out = strategic_merge_patch(make_pod(), body, "Pod")
    assert out["spec"]["containers"] == [{"name": "solo", "image": "i"}]


def test_patch_replace_and_delete_on_maps() -> None:
    out = strategic_merge_patch(make_pod(), {"metadata": {"labels": {"$patch": "replace", "x": "y"}}}, "Pod")
    assert out["metadata"]["labels"] == {"x": "y"}
    out = strategic_merge_patch(make_pod(), {"metadata": {"annotations": {"$patch": "delete"}}}, "Pod")
    assert out["metadata"]["annotations"] == {}
    out = strategic_merge_patch(make_node(), {"metadata": {"annotations": {"$patch": "delete"}}}, "Node")
    assert "annotations" not in out["metadata"]


def test_retain_keys_clears_other_volume_sources() -> None:
    body = {"spec": {"volumes": [{"name": "data", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/d"}}]}}
    out = strategic_merge_patch(make_pod(), body, "Pod")
    assert out["spec"]["volumes"] == [{"name": "data", "hostPath": {"path": "/d"}}]


def test_owner_references_merge_by_uid() -> None:
    pod = make_pod()
    pod["metadata"]["ownerReferences"] = [{"uid": "a", "kind": "ReplicaSet", "name": "rs"}]
    out = strategic_merge_patch(pod, {"metadata": {"ownerReferences": [{"uid": "a", "controller": True}]}}, "Pod")
    assert out["metadata"]["ownerReferences"] == [{"uid": "a", "kind": "ReplicaSet", "name": "rs", "controller": True}]


def test_new_values_lose_nulls_and_directives() -> None:
    node = make_node()
    del node["spec"]["taints"]
    body = {"metadata": {"annotations": {"a": "1", "b": None}},
            "spec": {"taints": [{"key": "k", "effect": "NoSchedule", "value": None}]}}
    out = strategic_merge_patch(node, body, "Node")
    assert out["metadata"]["annotations"] == {"a": "1"}
    assert out["spec"]["taints"] == [{"key": "k", "effect": "NoSchedule"}]
    pod = make_pod()
    del pod["spec"]["containers"]
    body = {"spec": {"$setElementOrder/containers": [{"name": "a"}], "containers": [{"name": "a", "image": "i"}],
                     "initContainers": [{"name": "gone", "$patch": "delete"}, {"name": "init", "image": "i"}]}}
    out = strategic_merge_patch(pod, body, "Pod")
    assert out["spec"]["containers"] == [{"name": "a", "image": "i"}]
    assert out["spec"]["initContainers"] == [{"name": "init", "image": "i"}]
    assert directive_keys(out) == []


def test_null_and_empty_bodies_change_nothing() -> None:
    assert strategic_merge_patch(make_pod(), None, "Pod") == make_pod()
    assert strategic_merge_patch(make_pod(), b"null", "Pod") == make_pod()
    assert strategic_merge_patch(make_pod(), {}, "Pod") == make_pod()


def test_inputs_are_never_mutated() -> None:
    pod, body = make_pod(), {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "nginx"}],
                                      "containers": [{"name": "nginx", "image": "n"}]},
                             "metadata": {"$deleteFromPrimitiveList/finalizers": ["x.io/a"]}}
    snapshot = copy.deepcopy(body)
    strategic_merge_patch(pod, body, "Pod")
    assert pod == make_pod() and body == snapshot


# --- strategic merge patch: errors ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ({"spec": {"containers": [{"image": "nginx"}]}}, 500,
         "map: map[image:nginx] does not contain declared merge key: name"),
        ({"spec": {"containers": [{"name": "nginx", "$patch": "merge"}]}}, 500,
         "merging lists cannot yet be specified in the patch"),
        ({"spec": {"containers": [{"name": "nginx", "$patch": "bogus"}]}}, 500,
         "unknown patch type: bogus in map: map[$patch:bogus name:nginx]"),
        ({"metadata": {"labels": {"$patch": "bogus"}}}, 500, "unknown patch type: bogus in map: map[$patch:bogus]"),
        ({"spec": {"$setElementOrder/containers": [{"name": "sidecar"}],
                   "containers": [{"name": "nginx", "image": "z"}]}}, 500,
         "the order in patch list:\n[map[image:z name:nginx]]\n doesn't match $setElementOrder list:\n"
         "[map[name:sidecar]]"),
        ({"spec": {"$setElementOrder/containers": "nope"}}, 500,
         "expected a []interface {}, but received a string"),
        ({"metadata": {"finalizers": [{"a": 1}]}}, 500,
         "list element types are not identical: [[x.io/a x.io/b] [map[a:1]]]"),
        ({"spec": {"$retainKeys": ["volumes"], "containers": []}}, 400, "invalid patch format of retainKeys"),
        ({"spec": {"$retainKeys": "volumes"}}, 400, "invalid patch format of retainKeys"),
        ({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}, 400, "invalid patch format of primitive list"),
        ({"spec": {"$setElementOrderx/containers": []}}, 400, "invalid patch format of setElementOrder list"),
        ({"status": {"conditions": [[1]]}}, 500,
         "list element types are not identical: [[map[status:False type:PodScheduled]] [[1]]]"),
    ],
)
def test_strategic_merge_patch_errors(body: dict[str, Any], code: int, message: str) -> None:
    err = error(strategic_merge_patch, make_pod(), body, "Pod")
    assert (err.code, err.message) == (code, message)
    assert err.reason == {400: "BadRequest", 500: ""}[code]


def test_list_of_lists_is_generic_422() -> None:
    pod = make_pod()
    pod["metadata"]["finalizers"] = [["a"]]
    err = error(strategic_merge_patch, pod, {"metadata": {"finalizers": [["b"]]}}, "Pod")
    assert (err.code, err.reason, err.message, err.details) == (422, "Invalid", GENERIC_422, {})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([1], "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        (7, "json: cannot unmarshal number into Go value of type map[string]interface {}"),
        (b'{"spec": [1,}', "invalid character '}' looking for beginning of value"),
        (b'{"spec": "\x01"}', "invalid character '\\x01' in string literal"),
        (b'{"a": "\\q"}', "invalid character 'q' in string escape code"),
        (b'{"a": "x', "unexpected end of JSON input"),
    ],
)
def test_strategic_merge_patch_undecodable_bodies(body: Any, message: str) -> None:
    err = error(strategic_merge_patch, make_pod(), body, "Pod")
    assert (err.code, err.reason, err.message) == (400, "BadRequest", message)


def test_status_error_for_a_500_has_no_reason() -> None:
    err = error(strategic_merge_patch, make_pod(), {"spec": {"containers": [{"image": "nginx"}]}}, "Pod")
    assert err.status_error().status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "map: map[image:nginx] does not contain declared merge key: name", "code": 500}
