"""Table columns and cells for PersistentVolumeClaims, PersistentVolumes and StorageClasses.

Copied as data and behaviour from kubernetes/kubernetes ``pkg/printers/internalversion/printers.go`` (v1.3x):
``persistentVolumeColumnDefinitions``, ``persistentVolumeClaimColumnDefinitions``,
``storageClassColumnDefinitions`` and ``printPersistentVolume``, ``printPersistentVolumeClaim``,
``printStorageClass``:

* a volume prints Name, Capacity (``spec.capacity.storage`` as ``Quantity.String()``, ``0`` when missing), Access
  Modes (``RWO,ROX,RWX,RWOP``), Reclaim Policy, Status (``Terminating`` while deleted), Claim (``ns/name`` of
  claimRef, empty without one), StorageClass (beta annotation first), VolumeAttributesClass (``<unset>`` when
  nil), Reason, Age, and VolumeMode (priority 1, ``<unset>`` when nil);
* a claim prints Name, Status (``Terminating`` while deleted), Volume, Capacity and Access Modes (from the status,
  both empty until ``spec.volumeName`` is set), StorageClass, VolumeAttributesClass, Age and VolumeMode
  (priority 1);
* a class prints Name (`` (default)`` appended for a default class), Provisioner, ReclaimPolicy (``Delete`` when
  nil), VolumeBindingMode (``Immediate`` when nil), AllowVolumeExpansion (a JSON boolean) and Age.

Column descriptions are the swagger docs upstream looks up, read from the lab's schema data (the generated client
models' field docs); the few the models do not carry are quoted from k8s.io/api ``core/v1/types.go``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from observatory.lab import schema
from observatory.lab.volumes import helpers
from observatory.lab.volumes.quantity import canonical

__all__ = ["COLUMN_SPECS", "ROW_PRINTERS"]

_DOC_CLAIM_REF = (
    "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to "
    "be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: "
    "https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding"
)
"""k8s.io/api core/v1 ``PersistentVolumeSpec.ClaimRef`` doc (the generated model drops docs of object fields)."""

Spec = tuple[str, str, int]
"""(column name, description source, priority): the source is ``Model.attr`` in the schema data, ``=text`` for a
literal description, or one of the shared docs ``@name`` / ``@age``."""

COLUMN_SPECS: dict[str, list[Spec]] = {
    "persistentvolumes": [
        ("Name", "@name", 0),
        ("Capacity", "V1PersistentVolumeSpec.capacity", 0),
        ("Access Modes", "V1PersistentVolumeSpec.access_modes", 0),
        ("Reclaim Policy", "V1PersistentVolumeSpec.persistent_volume_reclaim_policy", 0),
        ("Status", "V1PersistentVolumeStatus.phase", 0),
        ("Claim", "=" + _DOC_CLAIM_REF, 0),
        ("StorageClass", "=StorageClass of the pv", 0),
        ("VolumeAttributesClass", "=VolumeAttributesClass of the pv", 0),
        ("Reason", "V1PersistentVolumeStatus.reason", 0),
        ("Age", "@age", 0),
        ("VolumeMode", "V1PersistentVolumeSpec.volume_mode", 1),
    ],
    "persistentvolumeclaims": [
        ("Name", "@name", 0),
        ("Status", "V1PersistentVolumeClaimStatus.phase", 0),
        ("Volume", "V1PersistentVolumeClaimSpec.volume_name", 0),
        ("Capacity", "V1PersistentVolumeClaimStatus.capacity", 0),
        ("Access Modes", "V1PersistentVolumeClaimStatus.access_modes", 0),
        ("StorageClass", "=StorageClass of the pvc", 0),
        ("VolumeAttributesClass", "=VolumeAttributesClass of the pvc", 0),
        ("Age", "@age", 0),
        ("VolumeMode", "V1PersistentVolumeClaimSpec.volume_mode", 1),
    ],
    "storageclasses": [
        ("Name", "@name", 0),
        ("Provisioner", "V1StorageClass.provisioner", 0),
        ("ReclaimPolicy", "V1StorageClass.reclaim_policy", 0),
        ("VolumeBindingMode", "V1StorageClass.volume_binding_mode", 0),
        ("AllowVolumeExpansion", "V1StorageClass.allow_volume_expansion", 0),
        ("Age", "@age", 0),
    ],
}


def description(source: str) -> str:
    """The description a :data:`COLUMN_SPECS` source names (``@name``/``@age`` are resolved by the caller)."""
    if source.startswith("="):
        return source[1:]
    model, attr = source.split(".", 1)
    return schema.model_descriptions(model).get(attr, "")


def _or_unset(value: Any) -> Any:
    """A nil pointer prints ``<unset>``; a set one (even ``""``) prints its value."""
    return "<unset>" if value is None else value


Since = Callable[[Any], str]
"""``translateTimestampSince`` bound to the table's clock."""


def _volume_cells(pv: dict[str, Any], since: Since) -> list[Any]:
    meta, spec, status = pv.get("metadata") or {}, pv.get("spec") or {}, pv.get("status") or {}
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if isinstance(ref, dict) else ""
    phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "")
    storage = (spec.get("capacity") or {}).get("storage")
    return [meta.get("name", ""), canonical(storage) if storage is not None else "0",
            helpers.access_modes_string(spec.get("accessModes")), spec.get("persistentVolumeReclaimPolicy", ""),
            phase, claim, helpers.volume_class(pv), _or_unset(spec.get("volumeAttributesClassName")),
            status.get("reason", ""), since(meta.get("creationTimestamp")), _or_unset(spec.get("volumeMode"))]


def _claim_cells(pvc: dict[str, Any], since: Since) -> list[Any]:
    meta, spec, status = pvc.get("metadata") or {}, pvc.get("spec") or {}, pvc.get("status") or {}
    phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "")
    capacity = access = ""
    if spec.get("volumeName"):
        access = helpers.access_modes_string(status.get("accessModes"))
        storage = (status.get("capacity") or {}).get("storage")
        capacity = canonical(storage) if storage is not None else "0"
    return [meta.get("name", ""), phase, spec.get("volumeName", ""), capacity, access, helpers.claim_class(pvc),
            _or_unset(spec.get("volumeAttributesClassName")), since(meta.get("creationTimestamp")),
            _or_unset(spec.get("volumeMode"))]


def _class_cells(sc: dict[str, Any], since: Since) -> list[Any]:
    meta = sc.get("metadata") or {}
    name = meta.get("name", "") + (" (default)" if helpers.is_default_class(sc) else "")
    return [name, sc.get("provisioner", ""), sc.get("reclaimPolicy") or "Delete",
            sc.get("volumeBindingMode") or "Immediate", sc.get("allowVolumeExpansion") is True,
            since(meta.get("creationTimestamp"))]


ROW_PRINTERS: dict[str, Callable[[dict[str, Any], Since], list[Any]]] = {
    "persistentvolumes": _volume_cells,
    "persistentvolumeclaims": _claim_cells,
    "storageclasses": _class_cells,
}


def cells(resource: str, obj: dict[str, Any], now: datetime, since: Callable[[Any, datetime], str]) -> list[Any]:
    """The wide cells of ``obj``, one per column of :data:`COLUMN_SPECS` ``[resource]``."""
    return ROW_PRINTERS[resource](obj, lambda ts: since(ts, now))
