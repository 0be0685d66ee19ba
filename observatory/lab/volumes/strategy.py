"""Defaulting, admission, create-time status and validation for PersistentVolumeClaim, PersistentVolume and
StorageClass, as kube-apiserver v1.34 runs them.

* Defaults: ``pkg/apis/core/v1/defaults.go`` (a claim's and a volume's ``volumeMode`` ``Filesystem``, a volume's
  ``persistentVolumeReclaimPolicy`` ``Retain``, a hostPath's ``type`` ``""``, phase ``Pending``) and
  ``pkg/apis/storage/v1/defaults.go`` (a class's ``reclaimPolicy`` ``Delete`` and ``volumeBindingMode``
  ``Immediate``). Quantities are stored in their canonical form (``Quantity.String()``).
* Admission: DefaultStorageClass (``plugin/pkg/admission/storage/storageclass/setdefault``): a claim created
  without a class (no ``storageClassName``, no beta annotation) gets the default class's name; nothing happens
  when no class is the default. StorageObjectInUseProtection
  (``plugin/pkg/admission/storage/storageobjectinuseprotection``): a new claim gets the finalizer
  ``kubernetes.io/pvc-protection`` and a new volume ``kubernetes.io/pv-protection``, which the protection
  controllers remove once nothing uses the object (:mod:`observatory.lab.simulation.protection`).
* Strategies: ``pkg/registry/core/persistentvolumeclaim/strategy.go`` and ``persistentvolume/strategy.go`` reset
  the status on create and keep it on update; a volume's ``status.lastPhaseTransitionTime`` is set on create and
  whenever a status write changes the phase without setting it.
* Validation: ``pkg/apis/core/validation/validation.go`` (``ValidatePersistentVolumeClaimSpec``,
  ``ValidatePersistentVolumeClaimUpdate``, ``ValidatePersistentVolumeSpec``, ``ValidatePersistentVolumeUpdate``)
  and ``pkg/apis/storage/validation/validation.go`` (``ValidateStorageClass``, ``ValidateStorageClassUpdate``),
  with upstream's field paths and texts, e.g. ``spec.accessModes: Required value: at least 1 access mode is
  required`` and ``spec.resources[storage]: Required value``.

Causes are ``(type, field, detail)`` triples for :func:`observatory.lab.errors.invalid`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from observatory.lab.store import now_rfc3339
from observatory.lab.strategy import _DNS1123_SUBDOMAIN, _SUBDOMAIN_MSG, validate_object_meta
from observatory.lab.volumes import godiff, helpers
from observatory.lab.volumes.quantity import canonical
from observatory.scheduling import quantity

Cause = tuple[str, str, str]

RESOURCES = frozenset({"persistentvolumeclaims", "persistentvolumes", "storageclasses"})

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")
_PV_RECLAIM = ("Delete", "Recycle", "Retain")
_SC_RECLAIM = ("Delete", "Retain")
_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
CLAIM_IMMUTABLE = ("spec is immutable after creation except resources.requests and volumeAttributesClassName for "
                   "bound claims")


def _supported(values: Iterable[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def _not_supported(field: str, value: Any, values: Iterable[str]) -> Cause:
    return ("FieldValueNotSupported", field, f'Unsupported value: "{value}": supported values: {_supported(values)}')


def _canonical_map(resources: Any) -> Any:
    if not isinstance(resources, dict):
        return resources
    return {k: canonical(v) if isinstance(v, (str, int, float)) and not isinstance(v, bool) else v
            for k, v in resources.items()}


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


# -- defaulting and admission --------------------------------------------------------------------------------------


def set_default_class(pvc: dict[str, Any], classes: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """DefaultStorageClass admission on a new claim: ``spec.storageClassName`` becomes the default class's name
    when the claim names no class. Returns the claim (a copy when it changed)."""
    if helpers.claim_has_class(pvc):
        return pvc
    default = helpers.default_class(classes)
    if default is None:
        return pvc
    pvc = copy.deepcopy(pvc)
    _spec(pvc)["storageClassName"] = default["metadata"]["name"]
    return pvc


def _default_claim(pvc: dict[str, Any]) -> None:
    spec = _spec(pvc)
    spec.setdefault("volumeMode", "Filesystem")
    resources = spec.get("resources")
    if isinstance(resources, dict):
        for key in ("limits", "requests"):
            if key in resources:
                resources[key] = _canonical_map(resources[key])


def _default_volume(pv: dict[str, Any]) -> None:
    spec = _spec(pv)
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    if "capacity" in spec:
        spec["capacity"] = _canonical_map(spec["capacity"])
    if isinstance(spec.get("hostPath"), dict):
        spec["hostPath"].setdefault("type", "")


def _protect(obj: dict[str, Any], finalizer: str) -> None:
    finalizers = obj["metadata"].setdefault("finalizers", [])
    if finalizer not in finalizers:
        finalizers.append(finalizer)


def prepare_create(resource: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Defaults, the protection finalizer and create-time status of a new object of ``resource`` (one of
    :data:`RESOURCES`)."""
    obj = copy.deepcopy(obj)
    if resource == "persistentvolumeclaims":
        _default_claim(obj)
        _protect(obj, PVC_PROTECTION)
        obj["status"] = {"phase": "Pending"}
    elif resource == "persistentvolumes":
        _default_volume(obj)
        _protect(obj, PV_PROTECTION)
        obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": now_rfc3339()}
    else:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")
    return obj


def prepare_update(resource: str, new: dict[str, Any]) -> dict[str, Any]:
    """Defaults applied to an updated object (as decoding applies them to every request body)."""
    if resource == "persistentvolumeclaims":
        _default_claim(new)
    elif resource == "persistentvolumes":
        _default_volume(new)
    elif resource == "storageclasses":
        new.setdefault("reclaimPolicy", "Delete")
        new.setdefault("volumeBindingMode", "Immediate")
    return new


def prepare_status_update(resource: str, new: dict[str, Any], old: dict[str, Any]) -> None:
    """The PersistentVolume status strategy: a phase change that does not set ``lastPhaseTransitionTime`` (or
    keeps the old one) stamps it now; an unchanged phase keeps the old time. Other kinds: nothing."""
    if resource != "persistentvolumes":
        return
    new_status, old_status = new.get("status") or {}, old.get("status") or {}
    if new_status.get("phase") == old_status.get("phase"):
        if not new_status.get("lastPhaseTransitionTime") and old_status.get("lastPhaseTransitionTime"):
            new_status["lastPhaseTransitionTime"] = old_status["lastPhaseTransitionTime"]
    elif new_status.get("lastPhaseTransitionTime") in (None, old_status.get("lastPhaseTransitionTime")):
        new_status["lastPhaseTransitionTime"] = now_rfc3339()
    new["status"] = new_status


# -- validation ----------------------------------------------------------------------------------------------------


def _positive_storage(raw: Any, field: str) -> list[Cause]:
    value = quantity.parse(raw)
    if isinstance(value, Decimal) and value <= 0:
        return [("FieldValueInvalid", field, f'Invalid value: "{canonical(raw)}": must be greater than zero')]
    return []


def _access_mode_causes(modes: list[Any], field: str) -> list[Cause]:
    causes: list[Cause] = []
    for mode in modes:
        if mode not in _ACCESS_MODES:
            causes.append(_not_supported(field, mode, _ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(m in _ACCESS_MODES and m != "ReadWriteOncePod" for m in modes):
        causes.append(("FieldValueForbidden", field, "Forbidden: may not use ReadWriteOncePod with other access "
                                                     "modes"))
    return causes


def _class_name_causes(name: Any, field: str) -> list[Cause]:
    if isinstance(name, str) and name and (len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name)):
        return [("FieldValueInvalid", field, f'Invalid value: "{name}": {_SUBDOMAIN_MSG}')]
    return []


def validate_claim_spec(spec: dict[str, Any]) -> list[Cause]:
    """``ValidatePersistentVolumeClaimSpec`` for the fields a class or a claim sets."""
    causes: list[Cause] = []
    modes = spec.get("accessModes") or []
    if not modes:
        causes.append(("FieldValueRequired", "spec.accessModes",
                       "Required value: at least 1 access mode is required"))
    causes += _access_mode_causes(modes, "spec.accessModes")
    requests = (spec.get("resources") or {}).get("requests") or {}
    if "storage" not in requests:
        causes.append(("FieldValueRequired", "spec.resources[storage]", "Required value"))
    else:
        causes += _positive_storage(requests["storage"], "spec.resources[storage]")
    causes += _class_name_causes(spec.get("storageClassName"), "spec.storageClassName")
    if spec.get("volumeMode") is not None and spec["volumeMode"] not in _VOLUME_MODES:
        causes.append(_not_supported("spec.volumeMode", spec["volumeMode"], _VOLUME_MODES))
    return causes


def validate_volume_spec(spec: dict[str, Any]) -> list[Cause]:
    """``ValidatePersistentVolumeSpec`` (not inline) for access modes, capacity, reclaim policy, volume type,
    local volumes' node affinity, class name and volume mode."""
    causes: list[Cause] = []
    modes = spec.get("accessModes") or []
    if not modes:
        causes.append(("FieldValueRequired", "spec.accessModes", "Required value"))
    causes += _access_mode_causes(modes, "spec.accessModes")
    capacity = spec.get("capacity") or {}
    if not capacity:
        causes.append(("FieldValueRequired", "spec.capacity", "Required value"))
        causes.append(("FieldValueNotSupported", "spec.capacity",
                       'Unsupported value: core.ResourceList(nil): supported values: "storage"'))
    for key in sorted(capacity):
        causes += _positive_storage(capacity[key], f"spec.capacity[{key}]")
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in _PV_RECLAIM:
        causes.append(_not_supported("spec.persistentVolumeReclaimPolicy", policy, _PV_RECLAIM))
    sources = [key for key in godiff.SOURCE_KEYS if spec.get(key) is not None]
    for extra in sources[1:]:
        causes.append(("FieldValueForbidden", f"spec.{extra}", "Forbidden: may not specify more than 1 volume type"))
    if not sources:
        causes.append(("FieldValueRequired", "spec", "Required value: must specify a volume type"))
    affinity = spec.get("nodeAffinity")
    if "local" in sources[:1] and not (isinstance(affinity, dict) and affinity.get("required")):
        causes.append(("FieldValueRequired", "spec.nodeAffinity", "Required value: Local volume requires node "
                                                                  "affinity"))
    causes += _class_name_causes(spec.get("storageClassName"), "spec.storageClassName")
    if spec.get("volumeMode") is not None and spec["volumeMode"] not in _VOLUME_MODES:
        causes.append(_not_supported("spec.volumeMode", spec["volumeMode"], _VOLUME_MODES))
    return causes


def validate_class(sc: dict[str, Any]) -> list[Cause]:
    """``ValidateStorageClass``: provisioner required, reclaim policy and binding mode among upstream's values."""
    causes: list[Cause] = []
    if not sc.get("provisioner"):
        causes.append(("FieldValueRequired", "provisioner", "Required value"))
    policy = sc.get("reclaimPolicy")
    if policy is not None and policy not in _SC_RECLAIM:
        causes.append(_not_supported("reclaimPolicy", policy, _SC_RECLAIM))
    mode = sc.get("volumeBindingMode")
    if mode is not None and mode not in _BINDING_MODES:
        causes.append(_not_supported("volumeBindingMode", mode, _BINDING_MODES))
    return causes


def validate_create(resource: str, obj: dict[str, Any]) -> list[Cause]:
    """Validation causes for a new, defaulted object of ``resource``."""
    meta = obj.get("metadata") or {}
    if resource == "persistentvolumeclaims":
        return validate_object_meta(meta, namespaced=True) + validate_claim_spec(obj.get("spec") or {})
    if resource == "persistentvolumes":
        return validate_object_meta(meta, namespaced=False) + validate_volume_spec(obj.get("spec") or {})
    return validate_object_meta(meta, namespaced=False) + validate_class(obj)


def _immutable(field: str, new: Any, old: Any) -> list[Cause]:
    if new == old:
        return []
    shown = f'"{new}"' if isinstance(new, str) else ("null" if new is None else str(new))
    return [("FieldValueInvalid", field, f"Invalid value: {shown}: field is immutable")]


def _validate_claim_update(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    causes = validate_claim_spec(new.get("spec") or {})
    new_spec, old_spec = copy.deepcopy(new.get("spec") or {}), copy.deepcopy(old.get("spec") or {})
    if not old_spec.get("volumeName"):
        old_spec["volumeName"] = new_spec.get("volumeName")  # volumeName may be set once
        if old_spec["volumeName"] is None:
            old_spec.pop("volumeName")
    bound = (new.get("status") or {}).get("phase") == "Bound"
    requests = (new_spec.get("resources") or {}).get("requests")
    if bound and isinstance(requests, dict):
        old_requests = (old_spec.get("resources") or {}).get("requests") or {}
        if "storage" in old_requests:
            requests["storage"] = old_requests["storage"]
        else:
            requests.pop("storage", None)
    if bound and new_spec.get("volumeAttributesClassName") is not None:
        if old_spec.get("volumeAttributesClassName") is None:
            new_spec.pop("volumeAttributesClassName")
        else:
            new_spec["volumeAttributesClassName"] = old_spec["volumeAttributesClassName"]
    old_annotations = (old.get("metadata") or {}).get("annotations") or {}
    if (helpers.ANN_BETA_STORAGE_CLASS not in old_annotations and old_spec.get("storageClassName") is None
            and new_spec.get("storageClassName")):
        new_spec.pop("storageClassName")  # RetroactiveDefaultStorageClass: a class may be set where none was
    old_internal, new_internal = godiff.internal_claim_spec(old_spec), godiff.internal_claim_spec(new_spec)
    if old_internal != new_internal:
        causes.append(("FieldValueForbidden", "spec",
                       f"Forbidden: {CLAIM_IMMUTABLE}\n{godiff.diff(old_internal, new_internal)}"))
    old_size = helpers.storage_of(((old.get("spec") or {}).get("resources") or {}).get("requests"))
    new_size = helpers.storage_of(((new.get("spec") or {}).get("resources") or {}).get("requests"))
    status_size = helpers.storage_of((old.get("status") or {}).get("capacity")) or Decimal(0)
    if old_size is not None and new_size is not None and new_size < old_size and new_size <= status_size:
        causes.append(("FieldValueForbidden", "spec.resources.requests.storage",
                       "Forbidden: field can not be less than status.capacity"))
    causes += _immutable("volumeMode", (new.get("spec") or {}).get("volumeMode"),
                         (old.get("spec") or {}).get("volumeMode"))
    return causes


def _validate_volume_update(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    causes = validate_volume_spec(new.get("spec") or {})
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    new_source, old_source = godiff.internal_volume_source(new_spec), godiff.internal_volume_source(old_spec)
    if new_source != old_source:
        causes.append(("FieldValueForbidden", "spec.persistentvolumesource",
                       "Forbidden: spec.persistentvolumesource is immutable after creation\n"
                       + godiff.diff(old_source, new_source)))
    causes += _immutable("volumeMode", new_spec.get("volumeMode"), old_spec.get("volumeMode"))
    if old_spec.get("nodeAffinity") is not None and new_spec.get("nodeAffinity") != old_spec["nodeAffinity"]:
        causes.append(("FieldValueInvalid", "nodeAffinity",
                       "Invalid value: core.VolumeNodeAffinity{Required:(*core.NodeSelector)}: field is immutable"))
    return causes


def _validate_class_update(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    causes = validate_class(new)
    if (new.get("parameters") or {}) != (old.get("parameters") or {}):
        causes.append(("FieldValueForbidden", "parameters", "Forbidden: updates to parameters are forbidden."))
    if new.get("provisioner") != old.get("provisioner"):
        causes.append(("FieldValueForbidden", "provisioner", "Forbidden: updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        causes.append(("FieldValueForbidden", "reclaimPolicy", "Forbidden: updates to reclaimPolicy are forbidden."))
    causes += _immutable("volumeBindingMode", new.get("volumeBindingMode"), old.get("volumeBindingMode"))
    return causes


def validate_update(resource: str, new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """Validation causes for an update of an object of ``resource`` from ``old`` to ``new`` (both defaulted)."""
    if resource == "persistentvolumeclaims":
        return _validate_claim_update(new, old)
    if resource == "persistentvolumes":
        return _validate_volume_update(new, old)
    return _validate_class_update(new, old)
