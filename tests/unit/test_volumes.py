"""The lab's storage kinds as pure functions: Quantity.String(), printers, DefaultStorageClass admission, validation
and volume matching. Cases follow upstream's own tests where they exist (printers_test.go ``TestPrintPersistentVolume``,
``TestPrintPersistentVolumeClaim``, ``TestPrintStorageClass``; the VolumeAttributesClass cell the v1.3x printers
add is ``<unset>``) and captured kube-apiserver output otherwise."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from observatory.lab import printing
from observatory.lab.volumes import KIND_DEFAULT_CLASS, godiff, helpers, strategy
from observatory.lab.volumes.quantity import canonical

NOW = datetime(2026, 1, 1, tzinfo=UTC)
CLAIM_REF = {"name": "test", "namespace": "default"}


@pytest.mark.parametrize(("raw", "text"), [
    ("1Gi", "1Gi"), ("1.5Gi", "1536Mi"), ("1024Mi", "1Gi"), ("2048Ki", "2Mi"), ("0.5Ki", "512"), ("500M", "500M"),
    ("1000", "1k"), ("1.5", "1500m"), ("1e3", "1e3"), ("0", "0"), ("100Mi", "100Mi"), (2, "2"),
])
def test_quantity_string_is_canonical(raw, text):
    assert canonical(raw) == text


def pv(name: str, modes: list[str], size: str, phase: str, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"claimRef": CLAIM_REF, "accessModes": modes,
                                                 "capacity": {"storage": size}, **spec},
            "status": {"phase": phase}}


@pytest.mark.parametrize(("volume", "cells"), [
    (pv("test1", ["ReadOnlyMany"], "4Gi", "Bound"),
     ["test1", "4Gi", "ROX", "", "Bound", "default/test", "", "<unset>", "", "<unknown>", "<unset>"]),
    (pv("test2", ["ReadOnlyMany"], "4Gi", "Failed"),
     ["test2", "4Gi", "ROX", "", "Failed", "default/test", "", "<unset>", "", "<unknown>", "<unset>"]),
    (pv("test4", ["ReadWriteOnce"], "10Gi", "Pending", storageClassName="my-scn"),
     ["test4", "10Gi", "RWO", "", "Pending", "default/test", "my-scn", "<unset>", "", "<unknown>", "<unset>"]),
    (pv("test6", ["ReadWriteOnce"], "10Gi", "Released", storageClassName="my-scn"),
     ["test6", "10Gi", "RWO", "", "Released", "default/test", "my-scn", "<unset>", "", "<unknown>", "<unset>"]),
])
def test_print_persistent_volume_as_upstream(volume, cells):
    assert printing.row_cells("persistentvolumes", volume, NOW) == cells


def test_print_volume_modes_in_fixed_order_terminating_and_no_claim():
    volume = {"metadata": {"name": "v", "deletionTimestamp": "2026-01-01T00:00:00Z",
                           "creationTimestamp": "2025-12-31T23:55:00Z"},
              "spec": {"accessModes": ["ReadWriteOncePod", "ReadWriteMany", "ReadWriteOnce"],
                       "persistentVolumeReclaimPolicy": "Delete", "volumeMode": "Block",
                       "volumeAttributesClassName": "gold"},
              "status": {"phase": "Bound", "reason": "x"}}
    assert printing.row_cells("persistentvolumes", volume, NOW) == [
        "v", "0", "RWO,RWX,RWOP", "Delete", "Terminating", "", "", "gold", "x", "5m", "Block"]


def claim(name: str, phase: str, modes: list[str], size: str, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": spec,
            "status": {"phase": phase, "accessModes": modes, "capacity": {"storage": size}}}


@pytest.mark.parametrize(("pvc", "cells"), [
    (claim("test1", "Bound", ["ReadOnlyMany"], "4Gi", volumeName="my-volume", volumeMode="Filesystem"),
     ["test1", "Bound", "my-volume", "4Gi", "ROX", "", "<unset>", "<unknown>", "Filesystem"]),
    (claim("test2", "Lost", ["ReadOnlyMany"], "4Gi", volumeMode="Filesystem"),
     ["test2", "Lost", "", "", "", "", "<unset>", "<unknown>", "Filesystem"]),
    (claim("test4", "Pending", ["ReadWriteOnce"], "10Gi", volumeName="my-volume", storageClassName="my-scn",
           volumeMode="Filesystem"),
     ["test4", "Pending", "my-volume", "10Gi", "RWO", "my-scn", "<unset>", "<unknown>", "Filesystem"]),
    (claim("test5", "Pending", ["ReadWriteOnce"], "10Gi", volumeName="my-volume", storageClassName="my-scn"),
     ["test5", "Pending", "my-volume", "10Gi", "RWO", "my-scn", "<unset>", "<unknown>", "<unset>"]),
])
def test_print_persistent_volume_claim_as_upstream(pvc, cells):
    assert printing.row_cells("persistentvolumeclaims", pvc, NOW) == cells


def test_print_storage_class_marks_the_default_and_fills_nil_fields():
    assert printing.row_cells("storageclasses", {"metadata": {"name": "sc2", "creationTimestamp":
                                                              "2025-12-31T23:55:00Z"},
                                                 "provisioner": "kubernetes.io/nfs"}, NOW) == [
        "sc2", "kubernetes.io/nfs", "Delete", "Immediate", False, "5m"]
    kind = {**KIND_DEFAULT_CLASS, "allowVolumeExpansion": True}
    assert printing.row_cells("storageclasses", kind, NOW)[:5] == [
        "standard (default)", "rancher.io/local-path", "Delete", "WaitForFirstConsumer", True]


def test_column_definitions_are_upstreams_in_order_with_priorities():
    assert [(c["name"], c["priority"]) for c in printing.column_definitions("persistentvolumeclaims")] == [
        ("Name", 0), ("Status", 0), ("Volume", 0), ("Capacity", 0), ("Access Modes", 0), ("StorageClass", 0),
        ("VolumeAttributesClass", 0), ("Age", 0), ("VolumeMode", 1)]
    assert [c["name"] for c in printing.column_definitions("persistentvolumes")] == [
        "Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
        "VolumeAttributesClass", "Reason", "Age", "VolumeMode"]
    sc = printing.column_definitions("storageclasses")
    assert [c["name"] for c in sc] == ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode",
                                       "AllowVolumeExpansion", "Age"]
    assert sc[0]["format"] == "name" and sc[1]["description"] == "provisioner indicates the type of the provisioner."


def sc(name: str, created: str, default: bool = True) -> dict:
    annotations = {helpers.ANN_DEFAULT_CLASS: "true"} if default else {}
    return {"metadata": {"name": name, "creationTimestamp": created, "annotations": annotations}, "provisioner": "p"}


def test_default_class_admission_takes_the_newest_default_then_the_first_name():
    classes = [sc("old", "2026-01-01T00:00:00Z"), sc("b", "2026-01-02T00:00:00Z"), sc("a", "2026-01-02T00:00:00Z"),
               sc("newest-not-default", "2026-01-03T00:00:00Z", default=False)]
    pvc = {"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    assert strategy.set_default_class(pvc, classes)["spec"]["storageClassName"] == "a"
    assert "storageClassName" not in pvc["spec"]  # the caller's dict is untouched


@pytest.mark.parametrize("spec_or_meta", [{"spec": {"storageClassName": ""}}, {"spec": {"storageClassName": "x"}},
                                          {"metadata": {"annotations": {helpers.ANN_BETA_STORAGE_CLASS: ""}}}])
def test_default_class_admission_leaves_a_claim_that_names_a_class(spec_or_meta):
    pvc = {"metadata": {"name": "c"}, "spec": {}, **spec_or_meta}
    assert strategy.set_default_class(pvc, [sc("a", "2026-01-01T00:00:00Z")]) is pvc
    assert strategy.set_default_class({"metadata": {}, "spec": {}}, [sc("a", "x", default=False)]) == {
        "metadata": {}, "spec": {}}


def test_claim_validation_texts():
    claim = {"metadata": {"name": "c", "namespace": "default"}, "spec": {}}
    causes = strategy.validate_create("persistentvolumeclaims", claim)
    assert causes == [("FieldValueRequired", "spec.accessModes", "Required value: at least 1 access mode is required"),
                      ("FieldValueRequired", "spec.resources[storage]", "Required value")]
    causes = strategy.validate_create("persistentvolumeclaims", {"metadata": claim["metadata"], "spec": {
        "accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "Sometimes"],
        "resources": {"requests": {"storage": "0"}}}})
    assert [c[2] for c in causes] == [
        'Unsupported value: "Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", '
        '"ReadWriteOncePod"',
        "Forbidden: may not use ReadWriteOncePod with other access modes",
        'Invalid value: "0": must be greater than zero']


def test_volume_and_class_validation_texts():
    causes = strategy.validate_create("persistentvolumes", {"metadata": {"name": "v"}, "spec": {}})
    assert [f"{c[1]}: {c[2]}" for c in causes] == [
        "spec.accessModes: Required value", "spec.capacity: Required value",
        'spec.capacity: Unsupported value: core.ResourceList(nil): supported values: "storage"',
        "spec: Required value: must specify a volume type"]
    local = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "local": {"path": "/mnt"}}
    assert strategy.validate_volume_spec(local) == [
        ("FieldValueRequired", "spec.nodeAffinity", "Required value: Local volume requires node affinity")]
    assert strategy.validate_create("storageclasses", {"metadata": {"name": "s"}, "reclaimPolicy": "Recycle"}) == [
        ("FieldValueRequired", "provisioner", "Required value"),
        ("FieldValueNotSupported", "reclaimPolicy", 'Unsupported value: "Recycle": supported values: "Delete", '
                                                    '"Retain"')]


def test_class_update_forbids_provisioner_parameters_policy_and_binding_mode():
    old = strategy.prepare_create("storageclasses", {"metadata": {"name": "s"}, "provisioner": "a"})
    new = {**old, "provisioner": "b", "parameters": {"x": "1"}, "reclaimPolicy": "Retain",
           "volumeBindingMode": "WaitForFirstConsumer"}
    assert [f"{c[1]}: {c[2]}" for c in strategy.validate_update("storageclasses", new, old)] == [
        "parameters: Forbidden: updates to parameters are forbidden.",
        "provisioner: Forbidden: updates to provisioner are forbidden.",
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable']


def bound_claim(**spec) -> dict:
    return strategy.prepare_create("persistentvolumeclaims", {"metadata": {"name": "c"}, "spec": {
        "accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "5Gi"}}, **spec}})


def test_claim_spec_is_immutable_with_the_json_diff_a_real_server_appends():
    old = bound_claim()
    new = bound_claim(accessModes=["ReadWriteOnce"])
    causes = strategy.validate_update("persistentvolumeclaims", new, old)
    assert len(causes) == 1 and causes[0][:2] == ("FieldValueForbidden", "spec")
    head, _, diff = causes[0][2].partition("\n")
    assert head == ("Forbidden: spec is immutable after creation except resources.requests and "
                    "volumeAttributesClassName for bound claims")
    # a kube-apiserver capture of the same change starts with exactly these lines
    assert diff.startswith('@@ -1,6 +1,6 @@\n {\n  "AccessModes": [\n-  "ReadWriteMany"\n+  "ReadWriteOnce"\n'
                           '  ],\n  "Selector": null,\n  "Resources": {\n')


def test_claim_update_allows_volume_name_once_a_class_from_nil_and_bound_resizes():
    old = bound_claim()
    old["spec"].pop("storageClassName", None)
    set_once = bound_claim(volumeName="pv-1", storageClassName="standard")
    assert strategy.validate_update("persistentvolumeclaims", set_once, old) == []
    bound_old = bound_claim(volumeName="pv-1")
    bound_old["status"] = {"phase": "Bound", "capacity": {"storage": "5Gi"}}
    grown = bound_claim(volumeName="pv-1", resources={"requests": {"storage": "10Gi"}})
    grown["status"] = bound_old["status"]
    assert strategy.validate_update("persistentvolumeclaims", grown, bound_old) == []
    moved = bound_claim(volumeName="pv-2")
    assert strategy.validate_update("persistentvolumeclaims", moved, bound_old)[0][1] == "spec"


def test_godiff_of_equal_values_is_empty():
    assert godiff.diff({"a": 1}, {"a": 1}) == ""


def volume(name: str, size: str, modes: tuple[str, ...] = ("ReadWriteOnce",), phase: str = "Available",
           **spec) -> dict:
    return {"metadata": {"name": name, "labels": spec.pop("labels", {})},
            "spec": {"accessModes": list(modes), "capacity": {"storage": size}, **spec}, "status": {"phase": phase}}


def want(size: str, modes: tuple[str, ...] = ("ReadWriteOnce",), **spec) -> dict:
    return {"metadata": {"name": "claim01", "namespace": "myns", "uid": "uid01"},
            "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, **spec}}


GCE = [volume("gce-pd-1", "1G", ("ReadWriteOnce", "ReadOnlyMany")),
       volume("gce-pd-5", "5G", ("ReadWriteOnce", "ReadOnlyMany")),
       volume("gce-pd-10", "10G", ("ReadWriteOnce", "ReadOnlyMany")),
       volume("nfs-1", "1G", ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany")),
       volume("nfs-5", "5G", ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany")),
       volume("nfs-10", "10G", ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"))]
"""index_test.go ``TestMatchVolume``'s volumes: GCE PDs (RWO, ROX) and NFS shares (RWO, ROX, RWX)."""


@pytest.mark.parametrize(("claim_", "expected"), [
    (want("8G", ("ReadOnlyMany", "ReadWriteOnce")), "gce-pd-10"),   # successful-match-gce-10
    (want("3G", ("ReadWriteMany", "ReadWriteOnce", "ReadOnlyMany")), "nfs-5"),  # successful-match-nfs-5
    (want("1G",), "gce-pd-1"),                                      # smallest, fewest access modes first
    (want("100G",), None),                                          # unsuccessful-match-gce-10
    (want("1G", storageClassName="silver"), None),                  # class must match
])
def test_find_matching_volume_as_the_pv_index(claim_, expected):
    match = helpers.find_matching_volume(claim_, GCE, delay_binding=False)
    assert (match or {}).get("metadata", {}).get("name") == expected


def test_find_matching_volume_selector_prebinding_and_delayed_binding():
    labelled = [volume("plain", "1G"), volume("gold", "5G", labels={"tier": "gold"})]
    selected = want("1G", selector={"matchLabels": {"tier": "gold"}})
    assert helpers.find_matching_volume(selected, labelled, False)["metadata"]["name"] == "gold"
    prebound = volume("reserved", "1M", claimRef={"name": "claim01", "namespace": "myns"})
    assert helpers.find_matching_volume(want("1G"), [*labelled, prebound], False)["metadata"]["name"] == "reserved"
    assert helpers.find_matching_volume(want("1G"), labelled, delay_binding=True) is None
    assert helpers.find_matching_volume(want("1G"), [*labelled, prebound], True)["metadata"]["name"] == "reserved"
    other = volume("other", "1G", claimRef={"name": "x", "namespace": "myns"})
    block = volume("block", "1G", volumeMode="Block")
    assert helpers.find_matching_volume(want("1G"), [other, block], False) is None


def test_volume_defaults_and_status_phase_transition_time():
    created = strategy.prepare_create("persistentvolumes", volume("v", "1.5Gi", hostPath={"path": "/x"}))
    assert created["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert created["spec"]["capacity"] == {"storage": "1536Mi"} and created["spec"]["hostPath"]["type"] == ""
    assert created["status"]["phase"] == "Pending" and created["status"]["lastPhaseTransitionTime"]
    old = {"status": {"phase": "Pending", "lastPhaseTransitionTime": "2020-01-01T00:00:00Z"}}
    same = {"status": {"phase": "Pending"}}
    strategy.prepare_status_update("persistentvolumes", same, old)
    assert same["status"]["lastPhaseTransitionTime"] == "2020-01-01T00:00:00Z"
    moved = {"status": {"phase": "Bound", "lastPhaseTransitionTime": "2020-01-01T00:00:00Z"}}
    strategy.prepare_status_update("persistentvolumes", moved, old)
    assert moved["status"]["lastPhaseTransitionTime"] != "2020-01-01T00:00:00Z"


def test_discovery_entries_as_kube_apiserver_lists_them():
    from observatory.lab import resources

    core = {e["name"]: e for e in resources.api_resource_list()["resources"]}
    verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    assert core["persistentvolumeclaims"] == {
        "name": "persistentvolumeclaims", "singularName": "persistentvolumeclaim", "namespaced": True,
        "kind": "PersistentVolumeClaim", "verbs": verbs, "shortNames": ["pvc"], "storageVersionHash": "QWTyNDq0dC4="}
    assert core["persistentvolumes"] == {
        "name": "persistentvolumes", "singularName": "persistentvolume", "namespaced": False,
        "kind": "PersistentVolume", "verbs": verbs, "shortNames": ["pv"], "storageVersionHash": "HN/zwEC+JgM="}
    assert core["persistentvolumeclaims/status"] == {"name": "persistentvolumeclaims/status", "singularName": "",
                                                     "namespaced": True, "kind": "PersistentVolumeClaim",
                                                     "verbs": ["get", "patch", "update"]}
    assert core["persistentvolumes/status"]["kind"] == "PersistentVolume"
    assert resources.group_resource_list("storage.k8s.io/v1")["resources"] == [{
        "name": "storageclasses", "singularName": "storageclass", "namespaced": False, "kind": "StorageClass",
        "verbs": verbs, "shortNames": ["sc"], "storageVersionHash": "K+m6uJwbjGY="}]


def test_the_volumes_scenario_has_two_zones_a_zonal_local_volume_and_claims():
    from observatory.lab.scenarios import list_scenarios, load_scenario

    manifests = load_scenario("volumes")
    zones = {m["metadata"]["name"]: m["metadata"]["labels"].get("topology.kubernetes.io/zone")
             for m in manifests if m["kind"] == "Node"}
    assert zones == {"pair-control-plane": "lab-region-a", "pair-worker": "lab-region-a",
                     "pair-worker2": "lab-region-b"}
    volumes = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "PersistentVolume"}
    term = volumes["ssd-zone-a"]["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]
    assert term == {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                          "values": ["lab-region-a"]}]}
    assert all("namespace" not in v["metadata"] for v in volumes.values())  # cluster-scoped
    claims = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "PersistentVolumeClaim"}
    assert sorted(claims) == ["scratch", "shared", "ssd"]
    assert {c["metadata"]["namespace"] for c in claims.values()} == {"sched-lab"}
    for obj in manifests:
        if obj["kind"] in ("PersistentVolume", "PersistentVolumeClaim", "StorageClass"):
            resource = {"PersistentVolume": "persistentvolumes", "PersistentVolumeClaim": "persistentvolumeclaims",
                        "StorageClass": "storageclasses"}[obj["kind"]]
            assert strategy.validate_create(resource, strategy.prepare_create(resource, obj)) == [], obj
    assert "volumes" in [info.name for info in list_scenarios()]
