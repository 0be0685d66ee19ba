"""The PV controller's writes: ``bind``, ``unbindVolume`` and the phase updates of
``pkg/controller/volume/persistentvolume/pv_controller.go``, with the controller's own cache kept current from each
write's answer (``storeClaimUpdate``/``storeVolumeUpdate``) so the next sync does not act on what it just replaced.

Every write goes through the registry with the object's resourceVersion, so a concurrent change is a 409 Conflict
(a :class:`~observatory.lab.errors.StatusError`) and the controller simply syncs again later.
"""

from __future__ import annotations

import copy
from typing import Any

from observatory.lab.resources import ALL
from observatory.lab.simulation.client import Client
from observatory.lab.simulation.informer import Informer
from observatory.lab.simulation.recorder import Recorder, reference
from observatory.lab.volumes import helpers as h

Key = tuple[str, str]
PVCS, PVS = ALL["persistentvolumeclaims"], ALL["persistentvolumes"]


class Binder:
    """What the controller writes; subclasses decide when."""

    def __init__(self, registry: Client, recorder: Recorder, claims: Informer, volumes: Informer) -> None:
        self.registry = registry
        self.recorder = recorder
        self.claims = claims
        self.volumes = volumes

    def store_claim(self, pvc: dict[str, Any]) -> dict[str, Any]:
        meta = pvc["metadata"]
        self.claims.cache[(meta.get("namespace", ""), meta["name"])] = pvc
        return pvc

    def store_volume(self, pv: dict[str, Any]) -> dict[str, Any]:
        self.volumes.cache[("", pv["metadata"]["name"])] = pv
        return pv

    def update_claim_status(self, pvc: dict[str, Any], phase: str, pv: dict[str, Any] | None) -> dict[str, Any]:
        """``updateClaimStatus``: the phase, and the volume's access modes and (when the claim becomes bound)
        capacity, or neither without a volume. Writes only when something changes."""
        old = pvc.get("status") or {}
        status = copy.deepcopy(old)
        status["phase"] = phase
        if pv is None:
            status.pop("accessModes", None)
            status.pop("capacity", None)
        else:
            status["accessModes"] = copy.deepcopy((pv.get("spec") or {}).get("accessModes"))
            if old.get("phase") != phase:
                capacity = (pv.get("spec") or {}).get("capacity") or {}
                if h.storage_of(capacity) != h.storage_of(old.get("capacity")):
                    status["capacity"] = copy.deepcopy(capacity)
        if status == old:
            return pvc
        meta = pvc["metadata"]
        body = {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "status": status}
        return self.store_claim(self.registry.update_status(PVCS, meta.get("namespace", ""), meta["name"], body))

    def update_volume_phase(self, pv: dict[str, Any], phase: str, message: str = "") -> dict[str, Any]:
        """``updateVolumePhase``: phase and message (omitted when empty); nothing when the phase is already set."""
        if (pv.get("status") or {}).get("phase") == phase:
            return pv
        status = copy.deepcopy(pv.get("status") or {})
        status["phase"] = phase
        if message:
            status["message"] = message
        else:
            status.pop("message", None)
        body = {"metadata": {"resourceVersion": pv["metadata"].get("resourceVersion")}, "status": status}
        return self.store_volume(self.registry.update_status(PVS, "", pv["metadata"]["name"], body))

    def fail_volume(self, pv: dict[str, Any], reason: str, message: str) -> None:
        """``updateVolumePhaseWithEvent(Failed)``: the Warning only when the phase changes."""
        if (pv.get("status") or {}).get("phase") == "Failed":
            return
        updated = self.update_volume_phase(pv, "Failed", message)
        self.recorder.event(updated, "PersistentVolume", "Warning", reason, message)

    def bind(self, pv: dict[str, Any], pvc: dict[str, Any]) -> None:
        """``bind``: volume first (claimRef, phase Bound), then the claim (volumeName, annotations, phase)."""
        pv = self._bind_volume_to_claim(pv, pvc)
        pv = self.update_volume_phase(pv, "Bound")
        pvc = self._bind_claim_to_volume(pvc, pv)
        self.update_claim_status(pvc, "Bound", pv)

    def _bind_volume_to_claim(self, pv: dict[str, Any], pvc: dict[str, Any]) -> dict[str, Any]:
        """``GetBindVolumeToClaim`` + ``updateBindVolumeToClaim``."""
        new = copy.deepcopy(pv)
        dirty = False
        meta = pvc["metadata"]
        ref = (pv.get("spec") or {}).get("claimRef") or {}
        if (ref.get("name"), ref.get("namespace") or "", ref.get("uid")) != (
                meta["name"], meta.get("namespace", ""), meta.get("uid")):
            new["spec"]["claimRef"] = reference(pvc, "PersistentVolumeClaim")
            dirty = True
        annotations = new["metadata"].setdefault("annotations", {})
        if not h.is_volume_bound_to_claim(pv, pvc) and h.ANN_BOUND_BY_CONTROLLER not in annotations:
            annotations[h.ANN_BOUND_BY_CONTROLLER] = "yes"
            dirty = True
        if not annotations:
            new["metadata"].pop("annotations")
        if not dirty:
            return pv
        return self.store_volume(self.registry.update(PVS, "", pv["metadata"]["name"], new))

    def _bind_claim_to_volume(self, pvc: dict[str, Any], pv: dict[str, Any]) -> dict[str, Any]:
        """``bindClaimToVolume``."""
        new = copy.deepcopy(pvc)
        annotations = new["metadata"].setdefault("annotations", {})
        dirty = False
        if (new.get("spec") or {}).get("volumeName") != pv["metadata"]["name"]:
            new["spec"]["volumeName"] = pv["metadata"]["name"]
            annotations.setdefault(h.ANN_BOUND_BY_CONTROLLER, "yes")
            dirty = True
        if h.ANN_BIND_COMPLETED not in annotations:
            annotations[h.ANN_BIND_COMPLETED] = "yes"
            dirty = True
        if not dirty:
            return pvc
        meta = pvc["metadata"]
        return self.store_claim(self.registry.update(PVCS, meta.get("namespace", ""), meta["name"], new))

    def unbind_volume(self, pv: dict[str, Any]) -> None:
        """``unbindVolume``: a volume the controller bound loses claimRef and the annotation; a pre-bound one
        only the claim's uid. Then Available."""
        new = copy.deepcopy(pv)
        annotations = new["metadata"].get("annotations") or {}
        if h.ANN_BOUND_BY_CONTROLLER in annotations:
            new["spec"].pop("claimRef", None)
            annotations.pop(h.ANN_BOUND_BY_CONTROLLER)
            if not annotations:
                new["metadata"].pop("annotations", None)
        else:
            new["spec"]["claimRef"].pop("uid", None)
        updated = self.store_volume(self.registry.update(PVS, "", pv["metadata"]["name"], new))
        self.update_volume_phase(updated, "Available")
