"""Pod defaulting reads a JSON null as Go's decoder does: a nil slice, as if the field were left out."""

from __future__ import annotations

from observatory.lab.strategy import prepare_pod_create


def test_null_tolerations_get_the_default_not_ready_and_unreachable_tolerations():
    pod = prepare_pod_create({"metadata": {"name": "p", "namespace": "default"},
                              "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": None}})
    assert [t["key"] for t in pod["spec"]["tolerations"]] == ["node.kubernetes.io/not-ready",
                                                             "node.kubernetes.io/unreachable"]


def test_tolerations_that_are_not_objects_are_left_to_validation():
    pod = prepare_pod_create({"metadata": {"name": "p", "namespace": "default"},
                              "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": [1, "x"]}})
    assert pod["spec"]["tolerations"][:2] == [1, "x"]
