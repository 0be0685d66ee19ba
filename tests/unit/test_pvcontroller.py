"""The simulated PV controller's branches, synced by hand on a bare registry (no server, no event loop running):
each case sets up claims, volumes and classes, syncs, and compares phases and the events recorded with
pv_controller.go's texts."""

from __future__ import annotations

from typing import Any

from observatory.lab.registry import Registry
from observatory.lab.resources import ALL
from observatory.lab.simulation.informer import Informer
from observatory.lab.simulation.pvcontroller import PersistentVolumeController
from observatory.lab.store import Store
from observatory.settings import LabSettings

PVCS, PVS, SCS, PODS = (ALL[n] for n in ("persistentvolumeclaims", "persistentvolumes", "storageclasses", "pods"))


def cluster(*objects: tuple[Any, dict[str, Any]]) -> tuple[Registry, PersistentVolumeController]:
    registry = Registry(Store())
    registry.create(ALL["namespaces"], "", {"metadata": {"name": "default"}})
    for rt, obj in objects:
        registry.create(rt, "default" if rt.namespaced else "", obj)
    ctrl = PersistentVolumeController(registry, LabSettings())
    for informer in (ctrl.classes, ctrl.pods, ctrl.volumes, ctrl.claims):
        informer.start()
    return registry, ctrl


def settle(ctrl: PersistentVolumeController) -> None:
    """Deliver what the informers' watches hold, as their run loops would."""
    informers: list[Informer] = [ctrl.classes, ctrl.pods, ctrl.volumes, ctrl.claims]
    for informer in informers:
        queue = informer._watcher.queue
        while not queue.empty():
            change = queue.get_nowait()
            if change is not None:
                informer.apply(change)


def sync(ctrl: PersistentVolumeController, rounds: int = 3) -> None:
    """Sync every volume, then every claim, a few times (what the queue and resync do over time)."""
    for _ in range(rounds):
        settle(ctrl)
        for pv in list(ctrl.volumes.cache.values()):
            ctrl.sync_volume(pv)
        settle(ctrl)
        for pvc in list(ctrl.claims.cache.values()):
            ctrl.sync_claim(pvc)
    settle(ctrl)


def events(registry: Registry) -> list[tuple[str, str, str, str, int]]:
    return [(e["involvedObject"]["name"], e["type"], e["reason"], e["message"], e["count"])
            for e in registry.store.iter("events")]


def claim(name: str, size: str = "1Gi", **spec: Any) -> tuple[Any, dict[str, Any]]:
    return PVCS, {"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                       "resources": {"requests": {"storage": size}}, **spec}}


def volume(name: str, size: str = "1Gi", **spec: Any) -> tuple[Any, dict[str, Any]]:
    body = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}, "storageClassName": "",
            "hostPath": {"path": f"/data/{name}"}}
    body.update(spec)
    return PVS, {"metadata": {"name": name}, "spec": body}


def phase(registry: Registry, rt: Any, name: str) -> str:
    obj = registry.store.get(rt.name, "default" if rt.namespaced else "", name)
    return ((obj or {}).get("status") or {}).get("phase", "<gone>")


def test_a_claim_naming_a_volume_too_small_records_volume_mismatch():
    registry, ctrl = cluster(volume("small", "1Gi"), claim("big", "5Gi", storageClassName="", volumeName="small"))
    sync(ctrl, rounds=1)
    assert phase(registry, PVCS, "big") == "Pending" and phase(registry, PVS, "small") == "Available"
    assert events(registry) == [("big", "Warning", "VolumeMismatch",
                                 'Cannot bind to requested volume "small": requested PV is too small', 1)]


def test_a_claim_naming_a_volume_bound_elsewhere_records_failed_binding():
    registry, ctrl = cluster(volume("taken", claimRef={"name": "other", "namespace": "default", "uid": "u-1"}),
                             claim("late", storageClassName="", volumeName="taken"))
    ctrl.sync_claim(ctrl.claims.cache[("default", "late")])
    assert events(registry) == [("late", "Warning", "FailedBinding",
                                 'volume "taken" already bound to a different claim.', 1)]


def test_a_bound_claim_whose_volume_has_another_claimant_is_misbound():
    registry, ctrl = cluster(volume("v", claimRef={"name": "someone", "namespace": "default", "uid": "u-2"}),
                             claim("c", storageClassName="", volumeName="v"))
    pvc = ctrl.claims.cache[("default", "c")]
    pvc["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    ctrl.sync_claim(pvc)
    assert phase(registry, PVCS, "c") == "Lost"
    assert events(registry) == [("c", "Warning", "ClaimMisbound",
                                 "Two claims are bound to the same volume, this one is bound incorrectly", 1)]


def test_delayed_claims_name_their_unscheduled_pods_and_repeats_are_counted():
    pod = {"metadata": {"name": "app-1"}, "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": [
        {"name": "d", "persistentVolumeClaim": {"claimName": "used"}}]}}
    two = {**pod, "metadata": {"name": "app-2"}}
    wffc = {"metadata": {"name": "late"}, "provisioner": "example.com/p", "volumeBindingMode": "WaitForFirstConsumer"}
    registry, ctrl = cluster((SCS, wffc), claim("idle", storageClassName="late"),
                             claim("used", storageClassName="late"),
                             (PODS, pod))
    sync(ctrl, rounds=2)
    assert events(registry) == [
        ("idle", "Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding", 2),
        ("used", "Normal", "WaitForPodScheduled", "waiting for pod app-1 to be scheduled", 2)]
    registry.create(PODS, "default", two)
    sync(ctrl, rounds=1)
    assert events(registry)[-1] == ("used", "Normal", "WaitForPodScheduled",
                                    "waiting for pods app-1,app-2 to be scheduled", 1)


def test_a_volume_pre_bound_by_name_binds_even_while_binding_is_delayed():
    wffc = {"metadata": {"name": "late"}, "provisioner": "example.com/p", "volumeBindingMode": "WaitForFirstConsumer"}
    registry, ctrl = cluster((SCS, wffc), volume("reserved", storageClassName="late",
                                                 claimRef={"name": "mine", "namespace": "default"}),
                             claim("mine", storageClassName="late"))
    sync(ctrl)
    assert phase(registry, PVCS, "mine") == "Bound" and phase(registry, PVS, "reserved") == "Bound"
    pv = registry.store.get("persistentvolumes", "", "reserved")
    assert pv["spec"]["claimRef"]["uid"] == registry.store.get("persistentvolumeclaims", "default", "mine")[
        "metadata"]["uid"]
    assert "annotations" not in pv["metadata"]  # pre-bound: not bound-by-controller
    assert events(registry) == []


AFFINITY = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}


def released(name: str, policy: str, **source: Any) -> tuple[Any, dict[str, Any]]:
    rt, pv = volume(name, persistentVolumeReclaimPolicy=policy,
                    claimRef={"name": "gone", "namespace": "default", "uid": "u-gone"})
    if source:
        pv["spec"].pop("hostPath")
        pv["spec"].update(source)
    return rt, pv


def test_reclaiming_released_volumes():
    registry, ctrl = cluster(released("keep", "Retain"),
                             released("local", "Delete", local={"path": "/mnt/x"}, nodeAffinity=AFFINITY),
                             released("tmp", "Delete", hostPath={"path": "/tmp/scratch"}),
                             released("data", "Delete"), released("recycled", "Recycle"))
    sync(ctrl, rounds=1)
    assert phase(registry, PVS, "keep") == "Released"
    assert [phase(registry, PVS, n) for n in ("local", "data", "recycled")] == ["Failed"] * 3
    assert registry.store.get("persistentvolumes", "", "tmp")["metadata"].get("deletionTimestamp")  # pv-protection
    assert events(registry) == [
        ("data", "Warning", "VolumeFailedDelete",
         "host_path deleter only supports /tmp/.+ but received provided /data/data", 1),
        ("local", "Warning", "VolumeFailedDelete",
         'error getting deleter volume plugin for volume "local": no deletable volume plugin matched', 1),
        ("recycled", "Warning", "VolumeFailedRecycle", "No recycler plugin found for the volume!", 1)]


def test_a_claim_made_before_any_default_class_gets_it_retroactively():
    registry, ctrl = cluster(claim("early"))
    assert "storageClassName" not in registry.store.get("persistentvolumeclaims", "default", "early")["spec"]
    registry.create(SCS, "", {"metadata": {"name": "std", "annotations": {
        "storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "example.com/p"})
    sync(ctrl, rounds=1)
    assert registry.store.get("persistentvolumeclaims", "default", "early")["spec"]["storageClassName"] == "std"


def test_a_claim_whose_class_does_not_exist_records_provisioning_failed():
    registry, ctrl = cluster(claim("orphan", storageClassName="nowhere"))
    sync(ctrl, rounds=1)
    assert events(registry) == [("orphan", "Warning", "ProvisioningFailed",
                                 'storageclass.storage.k8s.io "nowhere" not found', 1)]


def test_local_path_refuses_selectors_other_access_modes_and_claims_without_a_node():
    from observatory.lab.simulation.provisioner import LocalPathProvisioner

    registry = Registry(Store())
    registry.create(ALL["namespaces"], "", {"metadata": {"name": "default"}})
    registry.create(ALL["nodes"], "", {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "host-1"}}})
    provisioner = LocalPathProvisioner(registry, LabSettings())
    provisioner.nodes.start()
    sc = {"metadata": {"name": "standard"}, "reclaimPolicy": "Delete"}

    def pvc(**spec: Any) -> dict[str, Any]:
        return {"metadata": {"name": "c", "namespace": "default", "uid": "u1",
                             "annotations": {"volume.kubernetes.io/selected-node": "n1"}},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}}

    assert provisioner._volume_for(pvc(selector={"matchLabels": {"a": "b"}}), sc)[0] == (
        "claim.Spec.Selector is not supported")
    assert provisioner._volume_for(pvc(accessModes=["ReadWriteMany"]), sc)[0] == (
        "Only support ReadWriteOnce access mode")
    unscheduled = pvc()
    unscheduled["metadata"]["annotations"] = {}
    assert provisioner._volume_for(unscheduled, sc)[0] == "configuration error, no node was specified"
    problem, pv = provisioner._volume_for(pvc(), sc)
    assert problem == ""
    assert pv["metadata"] == {"name": "pvc-u1", "annotations": {"pv.kubernetes.io/provisioned-by":
                                                                 "rancher.io/local-path"}}
    assert pv["spec"]["hostPath"] == {"path": "/var/local-path-provisioner/pvc-u1_default_c",
                                      "type": "DirectoryOrCreate"}
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["host-1"]}]  # the label, not the name
    assert (pv["spec"]["capacity"], pv["spec"]["persistentVolumeReclaimPolicy"]) == ({"storage": "1Gi"}, "Delete")
