"""Strict field validation from the kubernetes_asyncio-derived core/v1 schema."""

from __future__ import annotations

import pytest

from observatory.lab.gotypes import type_error
from observatory.lab.schema import (
    KIND_MODELS,
    closure,
    definition_name,
    model_fields,
    strict_decoding_message,
    unknown_fields,
    warning_texts,
)


def test_known_pod_has_no_unknown_fields() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "nginx", "labels": {"app": "web"}, "annotations": {"a": "b"},
                        "managedFields": [{"manager": "m", "fieldsV1": {"f:metadata": {"f:labels": {}}}}]},
           "spec": {"containers": [{"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}],
                                    "resources": {"limits": {"cpu": "1"}},
                                    "livenessProbe": {"httpGet": {"port": "http", "path": "/"}}}],
                    "nodeSelector": {"disk": "ssd"}, "schedulingGates": [{"name": "g"}],
                    "tolerations": [{"key": "k", "operator": "Exists"}]},
           "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]}}
    assert unknown_fields("Pod", pod) == []


def test_unknown_fields_paths_in_document_order() -> None:
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"labelz": {"x": {"deep": 1}}, "name": "bad"},
            "spec": {"containers": [{"name": "a", "image": "i"}, {"name": "b", "imagee": "i", "ports": [{"port": 80}]}],
                     "foo": 1},
            "Status": {}}
    assert unknown_fields("Pod", body) == [
        "metadata.labelz", "spec.containers[1].imagee", "spec.containers[1].ports[0].port", "spec.foo", "Status"]


def test_other_kinds() -> None:
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
               "target": {"kind": "Node", "name": "n1", "nodeName": "n1"}}
    assert unknown_fields("Binding", binding) == ["target.nodeName"]
    node = {"metadata": {"name": "n"}, "spec": {"unschedulable": True, "taints": [{"key": "k", "effect": "NoSchedule",
                                                                                     "valu": "x"}]},
            "status": {"capacity": {"cpu": "4"}, "nodeInfo": {"kubeletVersion": "v1", "bogus": 1}}}
    assert unknown_fields("Node", node) == ["spec.taints[0].valu", "status.nodeInfo.bogus"]
    assert unknown_fields("Namespace", {"metadata": {"name": "x"}, "spec": {"finalizers": ["kubernetes"]},
                                        "phase": "Active"}) == ["phase"]
    event = {"involvedObject": {"kind": "Pod"}, "reason": "r", "reportingComponent": "c", "eventTime": None,
             "series": {"count": 2, "lastObservedTime": "t", "state": "x"}, "note": "n"}
    assert unknown_fields("Event", event) == ["series.state", "note"]
    with pytest.raises(KeyError):
        unknown_fields("Service", {})


def test_type_mismatches_are_not_unknown_fields() -> None:
    assert unknown_fields("Pod", {"spec": "oops", "metadata": {"labels": ["a"]}}) == []
    assert unknown_fields("Pod", {"spec": {"containers": {"name": "x"}}}) == []


def test_messages() -> None:
    paths = ["metadata.labelz", "spec.containers[0].imagee"]
    assert strict_decoding_message("Pod", paths) == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "metadata.labelz", '
        'unknown field "spec.containers[0].imagee"')
    assert strict_decoding_message("Binding", ["target.foo"]) == (
        'Binding in version "v1" cannot be handled as a Binding: strict decoding error: unknown field "target.foo"')
    assert warning_texts(paths) == ['unknown field "metadata.labelz"', 'unknown field "spec.containers[0].imagee"']
    assert warning_texts([]) == []


def test_model_introspection() -> None:
    assert definition_name("V1Pod") == "io.k8s.api.core.v1.Pod"
    assert definition_name("CoreV1Event") == "io.k8s.api.core.v1.Event"
    assert definition_name("CoreV1EventSeries") == "io.k8s.api.core.v1.EventSeries"
    assert definition_name("V1ObjectMeta") == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert definition_name("V1OwnerReference") == "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"
    with pytest.raises(ValueError):
        definition_name("Pod")
    assert model_fields("V1Pod") == {"apiVersion": ("str", "api_version"), "kind": ("str", "kind"),
                                     "metadata": ("V1ObjectMeta", "metadata"), "spec": ("V1PodSpec", "spec"),
                                     "status": ("V1PodStatus", "status")}
    reach = closure(("V1Pod",))
    assert reach[0] == "V1Pod"
    assert {"V1Container", "V1ObjectMeta", "V1Toleration", "V1ManagedFieldsEntry"} <= set(reach)
    assert "V1Node" not in reach


# -- JSON type errors (sigs.k8s.io/json UnmarshalTypeError through transformDecodeError) -------------------------

def _pod(**spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def _container(**fields) -> dict:
    return _pod(containers=[{"name": "c", "image": "nginx", **fields}])


POD = 'Pod in version "v1" cannot be handled as a Pod: '
QTY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


@pytest.mark.parametrize(("kind", "body", "error"), [
    # string/number/bool/array/object mismatches; Struct is the innermost struct, the path has no indexes
    ("Pod", {"metadata": {"name": 5}},
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string"),
    ("Pod", {"metadata": 5}, "json: cannot unmarshal number into Go struct field Pod.metadata of type v1.ObjectMeta"),
    ("Pod", {"spec": {"containers": "x"}},
     "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container"),
    ("Pod", {"spec": {"containers": {"name": "x"}}},
     "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container"),
    ("Pod", {"spec": {"containers": [1]}},
     "json: cannot unmarshal number into Go struct field PodSpec.spec.containers of type v1.Container"),
    ("Pod", {"spec": {"containers": [{"name": "a"}, {"name": ["b"]}]}},
     "json: cannot unmarshal array into Go struct field Container.spec.containers.name of type string"),
    ("Pod", {"metadata": {"labels": {"a": 1}}},
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"),
    ("Pod", {"metadata": {"labels": ["a=b"]}},
     "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"),
    ("Pod", {"status": {"conditions": "x"}},
     "json: cannot unmarshal string into Go struct field PodStatus.status.conditions of type []v1.PodCondition"),
    ("Pod", {"status": {"conditions": [{"type": "Ready", "status": True}]}},
     "json: cannot unmarshal bool into Go struct field PodCondition.status.conditions.status of type "
     "v1.ConditionStatus"),
    ("Pod", _container(ports=[{"containerPort": "80"}]),
     "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of "
     "type int32"),
    ("Pod", _container(ports=[{"containerPort": 80.5}]),
     "json: cannot unmarshal number 80.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of "
     "type int32"),
    ("Pod", _container(ports=[{"containerPort": 1 << 31}]),
     "json: cannot unmarshal number 2147483648 into Go struct field ContainerPort.spec.containers.ports."
     "containerPort of type int32"),
    ("Pod", _container(stdin="yes"),
     "json: cannot unmarshal string into Go struct field Container.spec.containers.stdin of type bool"),
    # named Go types that the generated models flatten to str/int/list[str]
    ("Pod", _pod(restartPolicy=5),
     "json: cannot unmarshal number into Go struct field PodSpec.spec.restartPolicy of type v1.RestartPolicy"),
    ("Pod", {"metadata": {"uid": 7}}, "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid "
                                      "of type types.UID"),
    ("Pod", _pod(securityContext={"runAsUser": "1000"}),
     "json: cannot unmarshal string into Go struct field PodSecurityContext.spec.securityContext.runAsUser of type "
     "int64"),
    ("Pod", _container(securityContext={"capabilities": {"add": [1]}}),
     "json: cannot unmarshal number into Go struct field Capabilities.spec.containers.securityContext."
     "capabilities.add of type v1.Capability"),
    ("Pod", _pod(volumes=[{"name": "v", "hostPath": "/tmp"}]),
     "json: cannot unmarshal string into Go struct field Volume.spec.volumes.hostPath of type "
     "v1.HostPathVolumeSource"),
    ("Pod", _container(livenessProbe={"exec": {"command": "ls"}}),
     "json: cannot unmarshal string into Go struct field ExecAction.spec.containers.livenessProbe.exec.command of "
     "type []string"),
    ("Pod", _container(resources={"limits": "1"}),
     "json: cannot unmarshal string into Go struct field ResourceRequirements.spec.containers.resources.limits of "
     "type v1.ResourceList"),
    ("Node", {"spec": {"taints": [{"key": "k", "effect": 1}]}},
     "json: cannot unmarshal number into Go struct field Taint.spec.taints.effect of type v1.TaintEffect"),
    ("Node", {"status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": "10250"}}}},
     "json: cannot unmarshal string into Go struct field DaemonEndpoint.status.daemonEndpoints.kubeletEndpoint.Port "
     "of type int32"),
    ("Namespace", {"spec": {"finalizers": [True]}},
     "json: cannot unmarshal bool into Go struct field NamespaceSpec.spec.finalizers of type v1.FinalizerName"),
    ("Lease", {"spec": {"leaseDurationSeconds": "15"}},
     "json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"),
    ("Event", {"involvedObject": "pod/p"},
     "json: cannot unmarshal string into Go struct field Event.involvedObject of type v1.ObjectReference"),
    # Binding bodies as posted by hand
    ("Binding", {"metadata": {"name": "p"}, "target": "pair-worker"},
     "json: cannot unmarshal string into Go struct field Binding.target of type v1.ObjectReference"),
    ("Binding", {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": 5}},
     "json: cannot unmarshal number into Go struct field ObjectReference.target.name of type string"),
    # the types' own decoders: their errors abort decoding and are not json UnmarshalTypeErrors
    ("Pod", _container(resources={"limits": {"cpu": "1 core"}}), QTY_FORMAT),
    ("Pod", _container(resources={"requests": {"memory": True}}), QTY_FORMAT),
    ("Pod", _container(resources={"requests": {"memory": "1kk"}}), "unable to parse quantity's suffix"),
    ("Pod", _pod(volumes=[{"name": "v", "emptyDir": {"sizeLimit": "lots"}}]), QTY_FORMAT),
    ("Pod", _container(livenessProbe={"httpGet": {"port": 80.5}}),
     "json: cannot unmarshal number 80.5 into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet."
     "port of type int32"),
    ("Pod", _container(readinessProbe={"tcpSocket": {"port": {"name": "http"}}}),
     "json: cannot unmarshal object into Go struct field TCPSocketAction.spec.containers.readinessProbe.tcpSocket."
     "port of type int32"),
    ("Pod", {"metadata": {"creationTimestamp": 1700000000}},
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"),
    ("Pod", {"metadata": {"creationTimestamp": "2024-01-01"}},
     'parsing time "2024-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"'),
    ("Pod", {"status": {"startTime": "2024-02-30T10:00:00Z"}}, 'parsing time "2024-02-30T10:00:00Z": day out of range'),
    ("Lease", {"spec": {"renewTime": "2024-01-01T00:00:00Z"}},
     'parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'),
])
def test_type_error_messages(kind: str, body: dict, error: str) -> None:
    assert type_error(kind, body) == f'{kind} in version "v1" cannot be handled as a {kind}: {error}'


def test_type_error_accepts_what_the_go_types_accept() -> None:
    assert type_error("Pod", _container(resources={"limits": {"cpu": 1, "memory": "1Gi"},
                                                   "requests": {"cpu": 0.5, "memory": None}})) is None
    assert type_error("Pod", _container(livenessProbe={"httpGet": {"port": "http"}},
                                        readinessProbe={"tcpSocket": {"port": 8080}})) is None
    assert type_error("Pod", {"metadata": {"creationTimestamp": None, "deletionTimestamp": "2024-01-01T10:00:00+02:00",
                                           "managedFields": [{"fieldsV1": {"f:metadata": {}}, "time": None}]}}) is None
    assert type_error("Event", {"eventTime": "2024-01-01T10:00:00.123456Z", "count": 3,
                                "series": {"count": 2, "lastObservedTime": None}}) is None
    # null anywhere, unknown (and wrongly-cased) fields are not decoded, so not type-checked
    assert type_error("Pod", {"metadata": None, "spec": {"containers": [None], "nodeSelector": {"a": None}},
                              "Metadata": 5, "spec2": [1]}) is None
    assert type_error("Pod", None) is None
    assert type_error("Binding", {"target": {"kind": "Node", "name": "pair-worker"}}) is None
    assert type_error("Lease", {"spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40,
                                         "renewTime": "2024-01-01T10:00:00.000000Z"}}) is None


def test_type_error_order() -> None:
    # the first saved mismatch in document order ...
    body = {"metadata": {"name": 1, "labels": {"a": 2}}, "spec": "x"}
    assert type_error("Pod", body).endswith("ObjectMeta.metadata.name of type string")
    body = {"spec": "x", "metadata": {"name": 1}}
    assert type_error("Pod", body).endswith("Pod.spec of type v1.PodSpec")
    # ... unless a type's UnmarshalJSON fails later: that error stops decoding and is the one reported
    body = {"spec": "x", "metadata": {"creationTimestamp": "yesterday"}}
    assert type_error("Pod", body) == POD + (
        'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"')


def test_type_error_in_kind_or_api_version() -> None:
    # SimpleMetaFactory.Interpret decodes them first, with encoding/json (case-insensitive keys), before any GVK
    assert type_error("Pod", {"kind": 5}) == (
        "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: "
        'json: cannot unmarshal number into Go struct field .kind of type string ({"kind":5})')
    body = b'{"apiVersion": ["v1"], "kind": "Pod", "metadata": {"name": "p"}}'
    assert type_error("Pod", {"apiVersion": ["v1"], "kind": "Pod"}, body=body) == (
        "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: "
        "json: cannot unmarshal array into Go struct field .apiVersion of type string "
        '({"apiVersion": ["v1"], "kind": ...)')
    assert "Go struct field .kind of type string" in type_error("Node", {"KIND": True})
    assert type_error("Pod", [1]).startswith(
        "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: "
        "json: cannot unmarshal array into Go value of type struct { "
        'APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (5b315d)')


@pytest.mark.parametrize(("value", "error"), [
    ("2024-01-01T00:00:00", 'cannot parse "" as "Z07:00"'),
    ("2024-01-01 00:00:00Z", 'cannot parse " 00:00:00Z" as "T"'),
    ("2024-1-01T00:00:00Z", 'cannot parse "1-01T00:00:00Z" as "01"'),
    ("2024-01-01T00:00:00+0100", 'cannot parse "+0100" as "Z07:00"'),
    ("2024-13-01T00:00:00Z", "month out of range"),
    ("2024-01-01T24:00:00Z", "hour out of range"),
    ("2024-01-01T00:00:60Z", "second out of range"),
    ("2023-02-29T00:00:00Z", "day out of range"),
    ("2024-01-01T00:00:00+25:00", "time zone offset hour out of range"),
    ("2024-01-01T00:00:00Zjunk", 'extra text: "junk"'),
    ("2024-02-29T23:59:59Z", None),
    ("2024-01-01T00:00:00.123456789-07:00", None),
    ("2024-01-01T7:00:00,5Z", None),  # the general parser takes a 1-digit hour and a comma
])
def test_time_values(value: str, error: str | None) -> None:
    message = type_error("Pod", {"status": {"startTime": value}})
    if error is None:
        assert message is None
    elif "out of range" in error or "extra text" in error:
        assert message == POD + f'parsing time "{value}": {error}'
    else:
        assert message == POD + f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": {error}'


@pytest.mark.parametrize(("value", "error"), [
    ("100m", None), ("1Gi", None), ("1.5Ki", None), (".5", None), ("1e3", None), ("1E", None), ("+0", None),
    (" 2 ", None), (4, None), (1.25, None), (-1, None),
    ("", QTY_FORMAT), ("1 core", QTY_FORMAT), ("1KiB", QTY_FORMAT), ("1e3.5", QTY_FORMAT), (False, QTY_FORMAT),
    ([1], QTY_FORMAT), ({"v": 1}, QTY_FORMAT),
    ("1e", "unable to parse quantity's suffix"), ("1Ki1", "unable to parse quantity's suffix"),
    ("e-10", "unable to parse numeric part of quantity"),
])
def test_quantity_values(value: object, error: str | None) -> None:
    message = type_error("Node", {"status": {"capacity": {"cpu": value}}})
    assert message == (None if error is None else 'Node in version "v1" cannot be handled as a Node: ' + error)


def test_type_error_kubelet_style_statuses() -> None:
    pod_status = {
        "phase": "Running", "qosClass": "Burstable", "hostIP": "172.18.0.3", "hostIPs": [{"ip": "172.18.0.3"}],
        "podIP": "10.244.1.5", "podIPs": [{"ip": "10.244.1.5"}], "startTime": "2024-05-01T10:00:00Z",
        "observedGeneration": 1,
        "conditions": [{"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": None,
                        "lastTransitionTime": "2024-05-01T10:00:02Z", "observedGeneration": 1}],
        "containerStatuses": [{
            "name": "c", "ready": True, "restartCount": 2, "started": True, "image": "docker.io/library/nginx:1.27",
            "imageID": "docker.io/library/nginx@sha256:abc", "containerID": "containerd://123",
            "state": {"running": {"startedAt": "2024-05-01T10:00:03Z"}},
            "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2024-05-01T09:00:00Z",
                                         "finishedAt": "2024-05-01T09:59:00Z", "containerID": "containerd://122"}},
            "allocatedResources": {"cpu": "250m", "memory": "64Mi"},
            "resources": {"requests": {"cpu": "250m"}, "limits": {"memory": "128Mi"}},
            "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets", "readOnly": True,
                              "recursiveReadOnly": "Disabled"}],
            "user": {"linux": {"uid": 0, "gid": 0, "supplementalGroups": [0, 1, 2]}}}],
    }
    assert type_error("Pod", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                              "spec": {"containers": [{"name": "c"}]}, "status": pod_status}) is None
    node = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "n", "labels": {"kubernetes.io/os": "linux"}, "annotations": {"a": "b"}},
        "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"], "providerID": "kind://docker/n",
                 "taints": [{"key": "k", "effect": "NoExecute", "timeAdded": "2024-05-01T10:00:00Z"}]},
        "status": {
            "capacity": {"cpu": "8", "memory": "16331584Ki", "pods": "110", "hugepages-2Mi": "0"},
            "allocatable": {"cpu": "8", "ephemeral-storage": "263174212Ki"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ok",
                            "lastHeartbeatTime": "2024-05-01T10:00:00Z", "lastTransitionTime": "2024-05-01T09:00:00Z"}],
            "addresses": [{"type": "InternalIP", "address": "172.18.0.3"}, {"type": "Hostname", "address": "n"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.1",
                         "osImage": "Debian", "containerRuntimeVersion": "containerd://1.7",
                         "kubeletVersion": "v1.34.1", "kubeProxyVersion": "", "operatingSystem": "linux",
                         "architecture": "amd64", "swap": {"capacity": 0}},
            "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320368}],
            "runtimeHandlers": [{"name": "runc", "features": {"recursiveReadOnlyMounts": True,
                                                              "userNamespaces": True}}],
            "features": {"supplementalGroupsPolicy": True}, "config": {}},
    }
    assert type_error("Node", node) is None


def test_type_error_no_false_positives_on_scenarios() -> None:
    from observatory.lab.scenarios import list_scenarios, load_scenario

    checked = 0
    for info in list_scenarios():
        for manifest in load_scenario(info.name):
            if manifest["kind"] not in KIND_MODELS:  # kinds the lab ships no model of are not type-checked
                continue
            assert type_error(manifest["kind"], manifest) is None, (info.name, manifest["metadata"])
            checked += 1
    assert checked > 50
