"""Strict field validation from the kubernetes_asyncio-derived core/v1 schema."""

from __future__ import annotations

import pytest

from observatory.lab.schema import (
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
