"""Pod defaulting reads a JSON null as Go's decoder does: a nil slice, as if the field were left out."""

from __future__ import annotations

from observatory.lab.strategy import prepare_pod_create, validate_create


def test_null_tolerations_get_the_default_not_ready_and_unreachable_tolerations():
    pod = prepare_pod_create({"metadata": {"name": "p", "namespace": "default"},
                              "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": None}})
    assert [t["key"] for t in pod["spec"]["tolerations"]] == ["node.kubernetes.io/not-ready",
                                                             "node.kubernetes.io/unreachable"]


def test_tolerations_that_are_not_objects_are_left_to_validation():
    pod = prepare_pod_create({"metadata": {"name": "p", "namespace": "default"},
                              "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": [1, "x"]}})
    assert pod["spec"]["tolerations"][:2] == [1, "x"]


def test_a_null_container_is_a_defaulted_empty_container_that_validation_names():
    """Go decodes ``containers: [null]`` as one zero Container, which SetDefaults_Container then fills; what is left
    missing is the name and the image (ValidatePodCreate's two Required causes), never a 500."""
    body = {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [None]}}
    pod = prepare_pod_create(body)
    assert pod["spec"]["containers"][0]["terminationMessagePolicy"] == "File"
    assert pod["status"]["qosClass"] == "BestEffort"
    causes = validate_create("pods", pod)
    assert [(c[1], c[2]) for c in causes] == [("spec.containers[0].name", "Required value"),
                                              ("spec.containers[0].image", "Required value")]
