"""Builders for the volume plugins' tests: Nodes, Pods with claims, PVCs, PVs and StorageClasses as the API serves
them, named as in upstream's ``volume_binding_test.go`` helpers (``makePod``, ``makePVC``, ``makePV``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from observatory.scheduling import Snapshot
from observatory.scheduling.volumes import ANN_BIND_COMPLETED, VolumeCatalog

ALLOC = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
HOSTNAME = "kubernetes.io/hostname"


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {HOSTNAME: name, **labels}}, "status": ALLOC}


def pod(name: str, *claims: str, uid: str = "", on: str = "", priority: int = 0,
        volumes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "priority": priority,
                            "volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                                        for i, c in enumerate(claims)] + (volumes or [])}
    if on:
        spec["nodeName"] = on
    return {"metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"}, "spec": spec,
            "status": {"phase": "Running" if on else "Pending"}}


def pvc(name: str, storage_class: str = "", *, bound_to: str = "", phase: str = "Pending", request: str = "1Gi",
        modes: tuple[str, ...] = ("ReadWriteOnce",), annotations: dict[str, str] | None = None,
        deleting: bool = False, owner: str = "", rv: str = "10") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": rv,
                            "annotations": dict(annotations or {})}
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": request}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    if bound_to:
        spec["volumeName"] = bound_to
        meta["annotations"][ANN_BIND_COMPLETED] = "yes"
        phase = "Bound" if phase == "Pending" else phase
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner, "controller": True}]
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def pv(name: str, storage_class: str = "", *, capacity: str = "1Gi", phase: str = "Available",
       affinity: dict[str, list[str]] | None = None, labels: dict[str, str] | None = None,
       claim: str = "", modes: tuple[str, ...] = ("ReadWriteOnce",), rv: str = "5") -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": capacity}, "accessModes": list(modes)}
    if storage_class:
        spec["storageClassName"] = storage_class
    if affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": k, "operator": "In", "values": v} for k, v in affinity.items()]}]}}
    if claim:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim,
                            "uid": f"uid-{claim}"}
    return {"metadata": {"name": name, "labels": labels or {}, "resourceVersion": rv}, "spec": spec,
            "status": {"phase": phase}}


def storage_class(name: str, mode: str = "WaitForFirstConsumer", provisioner: str = "",
                  topologies: list[dict[str, list[str]]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode}
    if topologies is not None:
        out["allowedTopologies"] = [{"matchLabelExpressions": [{"key": k, "values": v} for k, v in t.items()]}
                                    for t in topologies]
    return out


WAIT = storage_class("wait-sc")
"""upstream's ``waitSC``: WaitForFirstConsumer, no provisioner."""
IMMEDIATE = storage_class("immediate-sc", "Immediate")
PROVISIONING = storage_class("provisioning-sc", provisioner="csi.example.com")


def snapshot(nodes: Sequence[dict[str, Any]], pods: Sequence[dict[str, Any]] = (),
             claims: Sequence[dict[str, Any]] = (), volumes: Sequence[dict[str, Any]] = (),
             classes: Sequence[dict[str, Any]] = (WAIT, IMMEDIATE, PROVISIONING)) -> Snapshot:
    out = Snapshot(nodes, pods)
    out.volumes = VolumeCatalog(claims, volumes, classes)
    return out
