"""Objects kube-apiserver refuses are refused with its 422: pods, nodes, ObjectMeta.

Texts from k/k ``pkg/apis/core/validation/validation.go`` (``ValidatePodCreate``, ``ValidatePodSpec``,
``ValidateContainerResourceRequirements``, ``ValidateTolerations``, ``validateSchedulingGates``, ``ValidateNode``,
``validateNodeTaints``), apimachinery ``pkg/api/validation/objectmeta.go`` (annotations: ``Too long: may not be more
than 262144 bytes``, as real clusters print it), ``pkg/util/validation`` (names, label keys and values) and
``pkg/util/validation/field/errors.go`` (how each error prints its value). The causes are ``(type, field, body)``.
"""

from __future__ import annotations

import json

import pytest

from observatory.lab import strategy
from observatory.lab.scenarios import list_scenarios, load_scenario
from observatory.lab.validation import field, node, quantity
from tests.lab.module_lab import module_http_fixture, module_lab_fixture

module_loop = pytest.mark.asyncio(loop_scope="module")
lab = module_lab_fixture()
http = module_http_fixture()

KEY = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
       "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
         "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
         "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
         "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def pod(**spec) -> dict:
    meta = spec.pop("metadata", {})
    container = {"name": "c", "image": "nginx:1.27", **spec.pop("container", {})}
    return {"metadata": {"name": "p", "namespace": "default", **meta}, "spec": {"containers": [container], **spec}}


def causes(obj: dict, resource: str = "pods") -> list[tuple[str, str, str]]:
    return strategy.validate_create(resource, strategy.prepare_create(resource, obj))


def texts(obj: dict, resource: str = "pods") -> list[str]:
    return [field.text(c) for c in causes(obj, resource)]


# -- resources ----------------------------------------------------------------------------------------------------

def test_negative_requests_and_limits():
    assert texts(pod(container={"resources": {"requests": {"cpu": "-1", "memory": "-64Mi"}}})) == [
        'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        'spec.containers[0].resources.requests[memory]: Invalid value: "-64Mi": must be greater than or equal to 0']


def test_requests_above_limits_print_canonical_quantities():
    assert texts(pod(container={"resources": {"requests": {"cpu": "2000m", "memory": "1024Mi"},
                                              "limits": {"cpu": "1", "memory": "512Mi"}}})) == [
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
        'spec.containers[0].resources.requests: Invalid value: "1Gi": must be less than or equal to memory limit of '
        "512Mi"]


def test_resource_names_and_extended_resources():
    assert texts(pod(container={"resources": {"requests": {"example.com/gpu": "1", "foo": "1"}}})) == [
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
        "spec.containers[0].resources.requests[foo]: Invalid value: foo: must be a standard resource type or fully "
        "qualified",
        "spec.containers[0].resources.requests[foo]: Invalid value: foo: must be a standard resource for containers"]
    assert texts(pod(container={"resources": {"limits": {"example.com/gpu": "1500m"}}})) == [
        "spec.containers[0].resources.limits[example.com/gpu]: Invalid value: 1500m: must be an integer",
        "spec.containers[0].resources.requests[example.com/gpu]: Invalid value: 1500m: must be an integer"]


@pytest.mark.parametrize(("raw", "shown"), [
    ("100m", "100m"), ("2000m", "2"), ("0.5", "500m"), ("1.5", "1500m"), ("1024Mi", "1Gi"), ("1.5Gi", "1536Mi"),
    ("1000", "1k"), ("+5", "+5"), ("1e3", "1e3"), ("0.0", "0"), (2, "2"), ("8Ki", "8Ki")])
def test_quantities_print_as_quantity_string(raw, shown):
    assert quantity.string(raw) == shown


# -- containers, policies, names ----------------------------------------------------------------------------------

def test_containers_image_name_and_policies():
    obj = pod(container={"name": "Bad_Name", "image": ""}, restartPolicy="Sometimes")
    obj["spec"]["containers"].append({"name": "Bad_Name", "image": " nginx "})
    assert texts(obj) == [
        f'spec.containers[0].name: Invalid value: "Bad_Name": {LABEL}',
        "spec.containers[0].image: Required value",
        f'spec.containers[1].name: Invalid value: "Bad_Name": {LABEL}',
        'spec.containers[1].name: Duplicate value: "Bad_Name"',
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
        'spec.containers[1].image: Invalid value: " nginx ": must not have leading or trailing whitespace']


def test_no_containers():
    obj = pod()
    obj["spec"]["containers"] = []
    assert texts(obj) == ["spec.containers: Required value"]


def test_node_name_and_priority_class_name_are_subdomains():
    assert texts(pod(nodeName="a\x1bb", priorityClassName="Hi There")) == [
        f'spec.nodeName: Invalid value: "a\\x1bb": {SUBDOMAIN}',
        f'spec.priorityClassName: Invalid value: "Hi There": {SUBDOMAIN}']


def test_scheduler_name_is_not_validated_upstream():
    """kube-apiserver v1.34 has no validation of ``spec.schedulerName`` (none in ``ValidatePodSpec``): any string."""
    assert causes(pod(schedulerName="my\x1b]0;title\x07scheduler")) == []


def test_gates_node_selector_and_tolerations():
    obj = pod(schedulingGates=[{"name": "a b"}, {"name": "x/y"}, {"name": "x/y"}],
              nodeSelector={"disk": "s s"},
              tolerations=[{"operator": "Equal", "value": "v"}, {"key": "k", "operator": "Exists", "value": "v"},
                           {"key": "k", "operator": "Maybe", "effect": "Sometimes"},
                           {"key": "k", "tolerationSeconds": 5}])
    assert texts(obj) == [
        f'spec.nodeSelector: Invalid value: "s s": {VALUE}',
        f'spec.schedulingGates[0]: Invalid value: "a b": {KEY}',
        'spec.schedulingGates[2]: Duplicate value: "x/y"',
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which '
        'means "match all values and all keys"',
        "spec.tolerations[1].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
        'spec.tolerations[2].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"',
        'spec.tolerations[2].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
        "spec.tolerations[3].effect: Invalid value: \"\": effect must be 'NoExecute' when `tolerationSeconds` is set"]


def test_node_affinity_and_topology_spread():
    obj = pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In"}, {"key": "zone", "operator": "Near"}]}]}}},
        topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Never"}])
    base = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
    assert texts(obj) == [
        f"{base}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        f'{base}.matchExpressions[1].operator: Invalid value: "Near": not a valid selector operator',
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
        'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Never": supported values: '
        '"DoNotSchedule", "ScheduleAnyway"']


# -- ObjectMeta ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("labels", "expected"), [
    ({"a b": "x"}, [f'metadata.labels: Invalid value: "a b": {KEY}']),
    ({"k": "v" * 64}, [f'metadata.labels: Invalid value: "{"v" * 64}": must be no more than 63 characters']),
    ({"k": "🙂"}, [f'metadata.labels: Invalid value: "🙂": {VALUE}']),
    ({"k\x07": "v"}, [f'metadata.labels: Invalid value: "k\\a": {KEY}']),
    ({"é" * 32: "v"}, [f'metadata.labels: Invalid value: "{"é" * 32}": name part must be no more than 63 characters',
                       f'metadata.labels: Invalid value: "{"é" * 32}": {KEY}']),
])
def test_label_keys_and_values(labels, expected):
    assert texts(pod(metadata={"labels": labels})) == expected


def test_annotations_over_256_kib_in_total():
    assert texts(pod(metadata={"annotations": {"a": "x" * 200_000, "b": "y" * 62_142}})) == []
    assert texts(pod(metadata={"annotations": {"a": "x" * 200_000, "b": "y" * 62_143}})) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"]


def test_names_namespace_finalizers_owner_references():
    obj = pod(metadata={"name": "Bad.Name", "generateName": "-x-", "finalizers": ["a b", "orphan",
                                                                                 "foregroundDeletion"],
                        "ownerReferences": [{"apiVersion": "", "kind": "", "name": "", "uid": ""}]})
    assert texts(obj) == [
        f'metadata.generateName: Invalid value: "-x-": {SUBDOMAIN}',
        f'metadata.name: Invalid value: "Bad.Name": {SUBDOMAIN}',
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
        f'metadata.finalizers: Invalid value: "a b": {KEY}',
        'metadata.finalizers: Invalid value: []string{"a b", "orphan", "foregroundDeletion"}: finalizer orphan and '
        "foregroundDeletion cannot be both set"]


# -- nodes --------------------------------------------------------------------------------------------------------

def test_node_taints():
    obj = {"metadata": {"name": "n1"}, "spec": {"taints": [
        {"key": "a b", "value": "v", "effect": "NoSchedule"}, {"key": "k", "effect": ""},
        {"key": "k", "value": "x", "effect": "NoExecute"}, {"key": "k", "value": "y", "effect": "NoExecute"},
        {"key": "k", "effect": "Sometimes"}]}}
    assert texts(obj, "nodes") == [
        f'metadata.taints[0].key: Invalid value: "a b": {KEY}',
        "metadata.taints[1].effect: Required value",
        'metadata.taints[3]: Duplicate value: core.Taint{Key:"k", Value:"y", Effect:"NoExecute", '
        "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
        'metadata.taints[4].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"']
    assert node.validate_node({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "-2"}}}) == [
        ("FieldValueInvalid", "status.capacity.cpu", 'Invalid value: "-2": must be greater than or equal to 0')]


# -- scenarios stay valid -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [*[info.name for info in list_scenarios()], "scale:nodes=3,pods=5"])
def test_every_scenario_object_is_valid(name):
    for manifest in load_scenario(name):
        resource = {"Pod": "pods", "Node": "nodes", "Namespace": "namespaces"}.get(manifest.get("kind"))
        if resource is None:
            continue
        obj = json.loads(json.dumps(manifest))
        if resource == "pods":
            obj["metadata"].setdefault("namespace", "default")
        assert causes(obj, resource) == [], manifest["metadata"]["name"]


# -- over HTTP ----------------------------------------------------------------------------------------------------

async def post(http, path: str, body: dict) -> tuple[int, dict]:
    async with http.post(path, json=body) as resp:
        return resp.status, await resp.json()


@module_loop
async def test_an_invalid_pod_is_refused_with_every_cause(http, lab):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad", "labels": {"a b": "x"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "-1"}}}]}}
    code, status = await post(http, "/api/v1/namespaces/default/pods", body)
    first = f'Invalid value: "a b": {KEY}'
    second = 'Invalid value: "-1": must be greater than or equal to 0'
    assert (code, status) == (422, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'Pod "bad" is invalid: [metadata.labels: {first}, '
                   f"spec.containers[0].resources.requests[cpu]: {second}]",
        "reason": "Invalid", "details": {"name": "bad", "kind": "Pod", "causes": [
            {"reason": "FieldValueInvalid", "message": first, "field": "metadata.labels"},
            {"reason": "FieldValueInvalid", "message": second, "field": "spec.containers[0].resources.requests[cpu]"}]},
        "code": 422})
    assert lab.store.get("pods", "default", "bad") is None


@module_loop
async def test_another_api_version_or_kind_does_not_decode(http):
    pod_v2 = {"apiVersion": "v2", "kind": "Pod", "metadata": {"name": "v2"},
              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert await post(http, "/api/v1/namespaces/default/pods", pod_v2) == (400, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Pod in version "v2" cannot be handled as a Pod: no kind "Pod" is registered for version "v2" in '
                   'scheme "pkg/api/legacyscheme/scheme.go:30"', "reason": "BadRequest", "code": 400})
    code, status = await post(http, "/api/v1/namespaces/default/pods", {**pod_v2, "apiVersion": "v1", "kind": "Node"})
    assert (code, status["message"]) == (
        400, 'Node in version "v1" cannot be handled as a Pod: converting (v1.Node) to (core.Pod): unknown conversion')


@module_loop
async def test_an_invalid_node_and_a_status_update(http, lab):
    node_body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "tainted"},
                 "spec": {"taints": [{"key": "k", "effect": "Never"}]}}
    code, status = await post(http, "/api/v1/nodes", node_body)
    assert (code, status["message"]) == (422, 'Node "tainted" is invalid: metadata.taints[0].effect: Unsupported '
                                         'value: "Never": supported values: "NoSchedule", "PreferNoSchedule", '
                                         '"NoExecute"')
    manual = lab.store.get("pods", "sched-lab", "manual")
    body = {"metadata": {"name": "manual"}, "status": {**manual["status"], "nominatedNodeName": "Not A Node"}}
    async with http.put("/api/v1/namespaces/sched-lab/pods/manual/status", json=body) as resp:
        assert resp.status == 422
        assert (await resp.json())["message"] == (
            f'Pod "manual" is invalid: status.nominatedNodeName: Invalid value: "Not A Node": {SUBDOMAIN}')


@module_loop
async def test_put_without_a_name_is_refused(http):
    async with http.put("/api/v1/namespaces/sched-lab/pods/manual", json={"metadata": {}, "spec": {}}) as resp:
        assert resp.status == 400
        assert (await resp.json())["message"] == (
            "the name of the object (manual based on URL) was undeterminable: name must be provided")


@module_loop
async def test_put_with_another_uid_fails_its_precondition(http, lab):
    manual = lab.store.get("pods", "sched-lab", "manual")
    body = {**manual, "metadata": {**manual["metadata"], "uid": "not-the-uid"}}
    async with http.put("/api/v1/namespaces/sched-lab/pods/manual", json=body) as resp:
        assert resp.status == 409
        assert (await resp.json())["message"] == (
            'Operation cannot be fulfilled on pods "manual": StorageError: invalid object, Code: 4, '
            "Key: /registry/pods/sched-lab/manual, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
            f"UID in precondition: not-the-uid, UID in object meta: {manual['metadata']['uid']}")


def test_pod_updates_only_add_tolerations_and_remove_gates():
    from observatory.lab.validation.podupdate import validate_pod_update
    old = strategy.prepare_create("pods", pod(tolerations=[{"key": "k", "operator": "Exists"}],
                                              schedulingGates=[{"name": "a"}]))
    old["metadata"].update(uid="u", resourceVersion="5", creationTimestamp="2026-01-01T00:00:00Z")
    added = json.loads(json.dumps(old))
    added["spec"]["tolerations"].append({"key": "other", "operator": "Exists"})
    added["spec"]["schedulingGates"] = []
    assert validate_pod_update(added, old) == []
    changed = json.loads(json.dumps(old))
    changed["spec"]["tolerations"][0]["key"] = "changed"
    changed["spec"]["schedulingGates"].append({"name": "b"})
    assert [field.text(c) for c in validate_pod_update(changed, old)] == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds",
        "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'b'"]
    moved = json.loads(json.dumps(old))
    moved["spec"]["nodeName"] = "elsewhere"
    assert [c[1] for c in validate_pod_update(moved, old)] == ["spec"]
