"""Storage helpers shared by the lab's printers, admission, PV controller and provisioner.

Each function reproduces one upstream helper, on plain JSON dicts in v1 wire form:

* ``pkg/apis/core/helper/helpers.go`` ``GetAccessModesAsString`` and ``k8s.io/component-helpers/storage/volume``
  ``GetPersistentVolumeClass``, ``GetPersistentVolumeClaimClass``, ``PersistentVolumeClaimHasClass``,
  ``IsVolumeBoundToClaim``, ``CheckVolumeModeMismatches``, ``CheckAccessModes``, ``FindMatchingVolume``;
* ``pkg/apis/storage/util/helpers.go`` ``IsDefaultAnnotation`` and ``pkg/volume/util/storageclass.go``
  ``GetDefaultClass`` (the newest default class wins, then the first by name);
* ``pkg/controller/volume/persistentvolume/index.go`` ``findByClaim``: volumes are searched by access-mode set,
  the sets with the fewest modes that still hold all the claim's modes first; the first set with a match wins.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from observatory.scheduling import quantity
from observatory.scheduling.labelselector import compile_label_selector

ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
"""Annotation keys of ``k8s.io/component-helpers/storage/volume/helpers.go`` and ``pkg/apis/storage/util``."""

_MODE_ABBREVIATIONS = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                       ("ReadWriteOncePod", "RWOP"))


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    return _meta(obj).get("annotations") or {}


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def access_modes_string(modes: Iterable[str] | None) -> str:
    """``GetAccessModesAsString``: ``RWO,ROX,RWX,RWOP`` in that fixed order, each once."""
    present = set(modes or ())
    return ",".join(short for mode, short in _MODE_ABBREVIATIONS if mode in present)


def volume_class(pv: dict[str, Any]) -> str:
    """``GetPersistentVolumeClass``: the beta annotation, else ``spec.storageClassName``."""
    annotations = _annotations(pv)
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return _spec(pv).get("storageClassName") or ""


def claim_class(pvc: dict[str, Any]) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation, else ``spec.storageClassName`` (``""`` when unset)."""
    annotations = _annotations(pvc)
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return _spec(pvc).get("storageClassName") or ""


def claim_has_class(pvc: dict[str, Any]) -> bool:
    """``PersistentVolumeClaimHasClass``: the beta annotation is set, or ``spec.storageClassName`` is not null
    (``""`` counts: it asks for no class)."""
    return ANN_BETA_STORAGE_CLASS in _annotations(pvc) or _spec(pvc).get("storageClassName") is not None


def is_default_class(sc: dict[str, Any]) -> bool:
    """``IsDefaultAnnotation``: ``storageclass.kubernetes.io/is-default-class`` (or the beta key) is ``"true"``."""
    annotations = _annotations(sc)
    return annotations.get(ANN_DEFAULT_CLASS) == "true" or annotations.get(ANN_BETA_DEFAULT_CLASS) == "true"


def default_class(classes: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """``GetDefaultClass``: of the default classes, the newest by creationTimestamp, ties broken by name."""
    defaults = [sc for sc in classes if is_default_class(sc)]
    if not defaults:
        return None
    defaults.sort(key=lambda sc: _meta(sc).get("name", ""))
    defaults.sort(key=lambda sc: _meta(sc).get("creationTimestamp") or "", reverse=True)
    return defaults[0]


def storage_of(resources: dict[str, Any] | None) -> Decimal | None:
    """The ``storage`` quantity of a resource list, or None when missing or invalid."""
    raw = (resources or {}).get("storage")
    if raw is None:
        return None
    value = quantity.parse(raw)
    return value if isinstance(value, Decimal) else None


def requested_storage(pvc: dict[str, Any]) -> Decimal:
    return storage_of((_spec(pvc).get("resources") or {}).get("requests")) or Decimal(0)


def volume_capacity(pv: dict[str, Any]) -> Decimal:
    return storage_of(_spec(pv).get("capacity")) or Decimal(0)


def is_volume_bound_to_claim(pv: dict[str, Any], pvc: dict[str, Any]) -> bool:
    """``IsVolumeBoundToClaim``: claimRef names the claim, and its uid is empty or the claim's."""
    ref = _spec(pv).get("claimRef")
    if not isinstance(ref, dict):
        return False
    meta = _meta(pvc)
    if ref.get("name") != meta.get("name") or (ref.get("namespace") or "") != (meta.get("namespace") or ""):
        return False
    return not ref.get("uid") or ref.get("uid") == meta.get("uid")


def volume_mode_mismatch(pvc: dict[str, Any], pv: dict[str, Any]) -> bool:
    """``CheckVolumeModeMismatches``: an unset volumeMode is ``Filesystem`` on either side."""
    return (_spec(pvc).get("volumeMode") or "Filesystem") != (_spec(pv).get("volumeMode") or "Filesystem")


def access_modes_fit(pvc: dict[str, Any], pv: dict[str, Any]) -> bool:
    """``CheckAccessModes``: every mode the claim asks for is one the volume offers."""
    offered = set(_spec(pv).get("accessModes") or ())
    return all(mode in offered for mode in _spec(pvc).get("accessModes") or ())


def _mode_sets(pvc: dict[str, Any], volumes: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """``allPossibleMatchingAccessModes``: volumes grouped by their access-mode set, only sets holding every mode
    the claim asks for, fewest modes first (ties in the index's order, here the set's text)."""
    wanted = set(_spec(pvc).get("accessModes") or ())
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for pv in volumes:
        modes = tuple(sorted(set(_spec(pv).get("accessModes") or ())))
        if wanted.issubset(modes):
            groups.setdefault(modes, []).append(pv)
    return [groups[key] for key in sorted(groups, key=lambda k: (len(k), k))]


def _selector_ok(pvc: dict[str, Any], pv: dict[str, Any]) -> bool:
    selector = _spec(pvc).get("selector")
    if not isinstance(selector, dict):
        return True
    return compile_label_selector(selector).matches(_meta(pv).get("labels") or {})


def find_matching_volume(pvc: dict[str, Any], volumes: Iterable[dict[str, Any]],
                         delay_binding: bool) -> dict[str, Any] | None:
    """``findBestMatchForClaim`` on the controller's path (no node): a volume pre-bound to this claim wins at
    once; otherwise, unless binding is delayed, the smallest Available, unclaimed volume of the claim's class
    whose labels match the selector and whose capacity covers the request."""
    requested = requested_storage(pvc)
    wanted_class = claim_class(pvc)
    for group in _mode_sets(pvc, list(volumes)):
        smallest: dict[str, Any] | None = None
        for pv in group:
            if volume_mode_mismatch(pvc, pv) or _meta(pv).get("deletionTimestamp"):
                continue
            if is_volume_bound_to_claim(pv, pvc):
                return pv
            if delay_binding:
                continue  # the scheduler binds these, with a node in hand
            if (pv.get("status") or {}).get("phase") != "Available" or _spec(pv).get("claimRef"):
                continue
            if not _selector_ok(pvc, pv) or volume_class(pv) != wanted_class:
                continue
            capacity = volume_capacity(pv)
            if capacity < requested:
                continue
            if smallest is None or volume_capacity(smallest) > capacity:
                smallest = pv
        if smallest is not None:
            return smallest
    return None
